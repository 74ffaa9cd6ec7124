import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type CallLimit, callBuildpack, describeThrown } from '../buildpack/call-buildpack.js';
import type { Buildpack } from '../buildpack/contract.js';
import type { BuildpackRegistry } from '../buildpack/registry.js';
import { CoreErrors } from '../errors/core-errors.js';
import { quoteExcerpt } from '../errors/excerpt.js';
import { packageEntry } from './package-entry.js';
import { shareRunningRunplan } from './running-runplan.js';

/**
 * Adds the buildpacks of `--buildpack <module>` to the registry, in the order
 * given. A module is a path (relative to the working directory) or a package
 * name resolved from the working directory, as a host's own tool would resolve
 * it; its default export (or `buildpack` export) is a buildpack, or a function
 * that returns one. Its id must be new: replacing a built-in buildpack is the
 * library's `registry.replace`, not a command-line accident.
 */
export async function loadBuildpacks(registry: BuildpackRegistry, specs: readonly string[], limit: CallLimit, cwd = process.cwd()): Promise<BuildpackRegistry> {
  for (const spec of specs) registry.register(await loadBuildpack(spec, limit, cwd));
  return registry;
}

type Invalid = (why: string, cause?: unknown) => Error;

/**
 * The file `spec` names: a path (a directory is a package: its package.json's
 * `exports` or `main`, as importing it by name would load), or a package name
 * resolved from the working directory.
 */
async function modulePath(spec: string, cwd: string, invalid: Invalid): Promise<string> {
  const notFound = (error: unknown) => invalid(`cannot be found from ${quoteExcerpt(cwd)} (${(error as NodeJS.ErrnoException).code ?? 'not found'}).`, error);
  if (!spec.startsWith('.') && !isAbsolute(spec)) {
    try {
      return createRequire(join(cwd, 'package.json')).resolve(spec);
    } catch (error) {
      throw notFound(error);
    }
  }
  const path = resolve(cwd, spec);
  const isDirectory = await stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
  return isDirectory ? packageDirectoryEntry(path, invalid) : path;
}

async function packageDirectoryEntry(dir: string, invalid: Invalid): Promise<string> {
  const manifestPath = join(dir, 'package.json');
  let text: string;
  try {
    text = await readFile(manifestPath, 'utf8');
  } catch (error) {
    throw invalid(
      `is a directory without a readable package.json (${(error as NodeJS.ErrnoException).code ?? 'unreadable'}): name its module file, or give the directory a package.json whose "exports" or "main" names it.`,
      error,
    );
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch (error) {
    throw invalid(`has a package.json that is not JSON: ${quoteExcerpt((error as Error).message)}.`, error);
  }
  const entry = packageEntry(manifest);
  if (entry.kind === 'invalid') throw invalid(`is a package directory, but ${entry.why}.`);
  if (entry.kind === 'exports') return join(dir, entry.target);
  try {
    // Node's rules for "main" (and index.js without one): extensions tried, a directory's index.
    return createRequire(manifestPath).resolve(resolve(dir, entry.main));
  } catch (error) {
    throw invalid(`is a package directory whose "main" (${quoteExcerpt(entry.main)}) names no module (${(error as NodeJS.ErrnoException).code ?? 'not found'}).`, error);
  }
}

/** Its module's top level and its factory are its code: each runs within `limit` (a module that awaits for ever would end the CLI as if it had succeeded). */
async function loadBuildpack(spec: string, limit: CallLimit, cwd: string): Promise<Buildpack> {
  const invalid = (why: string, cause?: unknown) => CoreErrors.BUILDPACK_MODULE_INVALID.create({ message: `--buildpack ${quoteExcerpt(spec)} ${why}`, ...(cause === undefined ? {} : { cause }) });
  const path = await modulePath(spec, cwd, invalid);
  // Registered before its first import: the module (and what it imports) gets this runplan when it names `runplan`.
  shareRunningRunplan();
  let module: Record<string, unknown>;
  try {
    module = await callBuildpack(spec, 'import', limit, () => import(pathToFileURL(path).href) as Promise<Record<string, unknown>>);
  } catch (error) {
    if (CoreErrors.BUILDPACK_TIMEOUT.is(error) || CoreErrors.BUILD_INTERRUPTED.is(error)) throw error;
    const cause = CoreErrors.BUILDPACK_FAILED.is(error) ? error.cause : error;
    throw invalid(`cannot be loaded: ${quoteExcerpt(describeThrown(cause).message)}.`, cause);
  }
  let exported = module.default ?? module.buildpack;
  // A CommonJS module's exports arrive as `default`; its own `default` or `buildpack` may be inside.
  if (exported && typeof exported === 'object' && !('id' in exported)) exported = (exported as Record<string, unknown>).default ?? (exported as Record<string, unknown>).buildpack;
  if (typeof exported === 'function') {
    const factory = exported as () => unknown;
    try {
      exported = await callBuildpack(spec, 'factory', limit, () => factory());
    } catch (error) {
      if (CoreErrors.BUILDPACK_TIMEOUT.is(error) || CoreErrors.BUILD_INTERRUPTED.is(error)) throw error;
      const cause = CoreErrors.BUILDPACK_FAILED.is(error) ? error.cause : error;
      throw invalid(`has a factory function that failed: ${quoteExcerpt(describeThrown(cause).message)}.`, cause);
    }
  }
  let problem: string | undefined;
  try {
    problem = shapeProblem(exported);
  } catch (error) {
    // A getter of its own may throw.
    problem = `reading it failed: ${quoteExcerpt(describeThrown(error).message)}`;
  }
  if (problem) throw invalid(`does not export a buildpack: ${problem}.`);
  return exported as Buildpack;
}

function shapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'its default export is neither a buildpack nor a function returning one';
  const bp = value as Record<string, unknown>;
  if (typeof bp.id !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(bp.id)) return 'id must be a lowercase name such as "procfile"';
  if (typeof bp.name !== 'string') return 'name must be a string';
  if (typeof bp.priority !== 'number') return 'priority must be a number';
  if (typeof (bp.detector as { detect?: unknown } | undefined)?.detect !== 'function') return 'detector.detect must be a function';
  if (typeof (bp.planner as { plan?: unknown } | undefined)?.plan !== 'function') return 'planner.plan must be a function';
  const health = bp.defaultHealthCheck as { kind?: unknown } | undefined;
  if (health?.kind !== 'port' && health?.kind !== 'http') return 'defaultHealthCheck must be { kind: "port" | "http", … }';
  return undefined;
}
