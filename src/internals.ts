/**
 * Internals the repository's own benchmarks (bench/) drive directly: built as
 * dist/internals.js, but not an entry point of the package (package.json
 * "exports" has no key for it, so `import 'runplan/internals'` fails), and no
 * promise of an API. The public API is src/index.ts and the entries beside it
 * (api/exports.txt).
 */
export { ensureTree } from './building/install/tree-cache.js';
export { StepBuilder } from './building/step-builder.js';
export { assembleEnvironment } from './env/assemble.js';
export { appUser } from './process/app-user.js';
export { resolveHostSettings } from './host/host-settings.js';
export { fillPlaceholders } from './plan/placeholders.js';
