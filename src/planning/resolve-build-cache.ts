import { decide } from '../plan/decide.js';
import { createHash } from 'node:crypto';
import { CoreErrors } from '../errors/core-errors.js';
import { hasUnsafeCharacters, quoteExcerpt } from '../errors/excerpt.js';
import { type Decision, type Layer, PLAN_PATH_MAX_CHARS } from '../plan/schema.js';

const OVERRIDE_VARIABLE = 'CC_OVERRIDE_BUILDCACHE';
const IGNORE_VARIABLE = 'CC_IGNORE_FROM_BUILDCACHE';

export interface ResolvedBuildCache {
  readonly layers: Layer[];
  readonly decisions: Decision[];
}

/**
 * The service's build-cache settings over the buildpack's layers (issue 12,
 * item 7). Both variables hold paths relative to the application, separated by
 * ":" as the service's lists of paths are.
 *
 * - CC_OVERRIDE_BUILDCACHE: only what it lists is cached. A layer at or below a
 *   listed path keeps its cache; any other layer is built every time; a listed
 *   path that no layer covers becomes a warm-start layer of its own (the copy of
 *   the last build is put back before the build, and saved after it).
 * - CC_IGNORE_FROM_BUILDCACHE: what it lists is never cached. A layer at, below
 *   or around a listed path is built every time: a layer replaces its step when
 *   restored, so it is restored whole or not at all.
 *
 * Both apply the same to every type; ignoring wins over overriding.
 */
export function resolveBuildCache(variables: ReadonlyMap<string, string>, layers: readonly Layer[]): ResolvedBuildCache {
  const override = pathList(variables, OVERRIDE_VARIABLE);
  const ignore = pathList(variables, IGNORE_VARIABLE);
  const decisions: Decision[] = [];
  let result = [...layers];

  if (override !== undefined) {
    const covered = new Set<string>();
    result = result.map((layer) => {
      const listed = override.paths.find((p) => within(layer.path, p) || within(p, layer.path));
      if (listed !== undefined) {
        covered.add(listed);
        return layer;
      }
      return notCached(layer, `${OVERRIDE_VARIABLE} does not list it`);
    });
    // A listed path around a layer keeps that layer; the rest of it is not cached (two layers would overlap).
    for (const p of override.paths) {
      if (covered.has(p) || result.some((l) => within(l.path, p))) continue;
      result.push(pathLayer(p));
    }
    decisions.push(
      decide({
        id: 'cache.override',
        subject: 'what the build cache holds',
        requests: [{ source: `env ${OVERRIDE_VARIABLE}`, value: override.raw }],
        resolved: describeLayers(result),
        reason:
          "only the listed paths are cached: the buildpack's layers under them keep their keys, a listed path no layer covers is restored from the last build before the build and saved after it",
        lost: layers
          .filter((l) => l.cacheKey !== null && !override.paths.some((p) => within(l.path, p) || within(p, l.path)))
          .map((l) => ({ source: `${l.name} layer (${l.path})`, value: l.cacheKey, reason: `not listed in ${OVERRIDE_VARIABLE}: built on every build` })),
      }),
    );
  }

  if (ignore !== undefined) {
    const before = result;
    result = result.map((layer) => {
      const listed = ignore.paths.find((p) => within(layer.path, p) || within(p, layer.path));
      if (listed === undefined || layer.cacheKey === null) return layer;
      const why = within(layer.path, listed) ? `${IGNORE_VARIABLE} lists ${listed}` : `${IGNORE_VARIABLE} lists ${listed}, inside it (a layer is restored whole or not at all)`;
      return notCached(layer, why);
    });
    decisions.push(
      decide({
        id: 'cache.ignore',
        subject: 'what the build cache leaves out',
        requests: [{ source: `env ${IGNORE_VARIABLE}`, value: ignore.raw }],
        resolved: describeLayers(result),
        reason: 'the listed paths are never cached: a layer at, below or around one is built on every build',
        lost: before
          .filter((l, i) => l.cacheKey !== null && result[i]?.cacheKey === null)
          .map((l) => ({ source: `${l.name} layer (${l.path})`, value: l.cacheKey, reason: `left out of the cache by ${IGNORE_VARIABLE}` })),
      }),
    );
  }
  return { layers: result, decisions };
}

function pathList(variables: ReadonlyMap<string, string>, variable: string): { raw: string; paths: string[] } | undefined {
  const raw = variables.get(variable);
  if (raw === undefined || raw.trim() === '') return undefined;
  const paths = [
    ...new Set(
      raw
        .split(':')
        .map((p) => p.trim())
        .filter((p) => p !== '')
        .map((p) => normaliseCachePath(p, variable)),
    ),
  ];
  return { raw, paths };
}

/** A cached path: relative to the application, inside it, not the application itself. */
export function normaliseCachePath(path: string, variable: string): string {
  const invalid = (why: string) => CoreErrors.BUILD_CACHE_PATH_INVALID.create({ message: `${variable} lists ${quoteExcerpt(path)}, which ${why}.`, variable });
  if (path.includes('\0')) throw invalid('holds a NUL byte');
  // The path names a layer, which runplan prints on lines of its own.
  if (hasUnsafeCharacters(path)) throw invalid('holds a line break, control or invisible character');
  if (path.length > PLAN_PATH_MAX_CHARS) throw invalid(`is longer than ${PLAN_PATH_MAX_CHARS} characters`);
  if (path.startsWith('/')) throw invalid('is absolute: paths are relative to the application folder');
  const parts: string[] = [];
  for (const part of path.split(/[\\/]+/)) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) throw invalid('climbs out of the application with ".."');
      parts.pop();
    } else parts.push(part);
  }
  if (parts.length === 0) throw invalid('is the application folder itself: the build cache holds parts of the build, never all of it');
  return parts.join('/');
}

/** Whether `path` is `root` or below it (both normalised, relative). */
function within(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}

function notCached(layer: Layer, why: string): Layer {
  return { ...layer, cacheKey: null, keyInputs: [`not cached: ${why}`] };
}

function pathLayer(path: string): Layer {
  return {
    name: `cache:${path}`,
    path,
    // One copy per path: always the last build's, whatever changed since (as the service's build cache is).
    cacheKey: createHash('sha256').update(`warm-start\0${path}`).digest('hex'),
    keyInputs: [`${path} as the last build left it (${OVERRIDE_VARIABLE})`],
    reuse: 'warm-start',
  };
}

function describeLayers(layers: readonly Layer[]): string {
  const cached = layers.filter((l) => l.cacheKey !== null).map((l) => l.path);
  return cached.length === 0 ? 'nothing is cached' : `cached: ${cached.join(', ')}`;
}
