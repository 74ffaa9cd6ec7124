import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Buildpack } from '../buildpack/contract.js';
import type { BuildpackRegistry } from '../buildpack/registry.js';
import { CoreErrors } from '../errors/core-errors.js';
import { quoteExcerpt } from '../errors/excerpt.js';

/**
 * Adds the buildpacks of `--buildpack <module>` to the registry, in the order
 * given. A module is a path (relative to the working directory) or a package
 * name resolved from the working directory, as a host's own tool would resolve
 * it; its default export (or `buildpack` export) is a buildpack, or a function
 * that returns one. Its id must be new: replacing a built-in buildpack is the
 * library's `registry.replace`, not a command-line accident.
 */
export async function loadBuildpacks(registry: BuildpackRegistry, specs: readonly string[], cwd = process.cwd()): Promise<BuildpackRegistry> {
  for (const spec of specs) registry.register(await loadBuildpack(spec, cwd));
  return registry;
}

async function loadBuildpack(spec: string, cwd: string): Promise<Buildpack> {
  const invalid = (why: string, cause?: unknown) => CoreErrors.BUILDPACK_MODULE_INVALID.create({ message: `--buildpack ${quoteExcerpt(spec)} ${why}`, ...(cause === undefined ? {} : { cause }) });
  let path: string;
  try {
    const local = spec.startsWith('.') || isAbsolute(spec);
    path = local ? resolve(cwd, spec) : createRequire(join(cwd, 'package.json')).resolve(spec);
  } catch (error) {
    throw invalid(`cannot be found from ${quoteExcerpt(cwd)} (${(error as NodeJS.ErrnoException).code ?? 'not found'}).`, error);
  }
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    throw invalid(`cannot be loaded: ${quoteExcerpt((error as Error).message ?? String(error))}.`, error);
  }
  let exported = module.default ?? module.buildpack;
  // A CommonJS module's exports arrive as `default`; its own `default` or `buildpack` may be inside.
  if (exported && typeof exported === 'object' && !('id' in exported)) exported = (exported as Record<string, unknown>).default ?? (exported as Record<string, unknown>).buildpack;
  if (typeof exported === 'function') {
    try {
      exported = await (exported as () => unknown)();
    } catch (error) {
      throw invalid(`has a factory function that failed: ${quoteExcerpt((error as Error).message ?? String(error))}.`, error);
    }
  }
  const problem = shapeProblem(exported);
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
