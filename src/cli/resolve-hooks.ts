import { isRunplanSpecifier } from './runplan-specifier.js';

/**
 * Module resolution hooks (module.register) of the CLI, in Node.js's hooks
 * thread: `runplan` and `runplan/…` resolve as from inside the running runplan
 * package (running-runplan.ts says why), with the importer's conditions.
 */

interface ResolveContext {
  readonly conditions: readonly string[];
  readonly importAttributes: Record<string, string>;
  readonly parentURL?: string;
}
type NextResolve = (specifier: string, context?: Partial<ResolveContext>) => Promise<unknown>;

let runningRunplan: string | undefined;

export function initialize(data: { parentURL: string }): void {
  runningRunplan = data.parentURL;
}

export function resolve(specifier: string, context: ResolveContext, nextResolve: NextResolve): Promise<unknown> {
  return nextResolve(specifier, runningRunplan !== undefined && isRunplanSpecifier(specifier) ? { ...context, parentURL: runningRunplan } : context);
}
