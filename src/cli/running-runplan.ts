import Module, { createRequire, register } from 'node:module';
import { isRunplanSpecifier } from './runplan-specifier.js';

/**
 * Makes `runplan` and `runplan/…` name this running runplan in every module
 * loaded afterwards: a buildpack given with `--buildpack` imports the kit by name
 * (`runplan/buildpack`), and from a clone, or from a directory of its own, no
 * node_modules above it holds runplan. It then gets the package the CLI runs
 * from, under the conditions of its own kind of module (dist/buildpack.js for an
 * ES module, dist/buildpack.cjs for CommonJS), never another copy found near it:
 * the kit that checks its contribution is the one it was written against.
 *
 * Both resolve by self-reference: this file is inside the package, whose
 * package.json names it `runplan` and lists its `exports`.
 *
 * - ES modules: a resolve hook (module.register, Node.js 20.6 and later).
 * - CommonJS: on Node.js 20 `require` does not go through module.register's hooks,
 *   so Module._resolveFilename is wrapped, as Yarn's PnP and ts-node do
 *   (module.registerHooks, Node.js 22.15, would cover both once Node.js 20 is gone).
 */
let shared = false;

export function shareRunningRunplan(): void {
  if (shared) return;
  shared = true;
  register(new URL('./cli-resolve-hooks.js', import.meta.url), { data: { parentURL: import.meta.url } });
  const selfRequire = createRequire(import.meta.url);
  const loader = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const resolveFilename = loader._resolveFilename;
  // selfRequire.resolve comes back through this function: that call resolves as usual (by self-reference).
  let resolvingSelf = false;
  loader._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
    if (resolvingSelf || !isRunplanSpecifier(request)) return resolveFilename.call(this, request, ...rest);
    resolvingSelf = true;
    try {
      return selfRequire.resolve(request);
    } finally {
      resolvingSelf = false;
    }
  };
}
