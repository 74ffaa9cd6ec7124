import { defineConfig } from 'tsup';

const shared = { format: ['esm'] as 'esm'[], target: 'node20' as const, platform: 'node' as const, sourcemap: true };

export default defineConfig([
  // The program: runplan and better-sqlite3 stay packages of their own (runplan through its public entry points only).
  {
    ...shared,
    entry: { cli: 'src/cli/program.ts' },
    clean: true,
    external: ['runplan', /^runplan\//, 'better-sqlite3'],
    banner: { js: '#!/usr/bin/env -S node --' },
  },
  // What the SSH account runs (src/git/git-main.ts): one file with all it imports, copied by serve into the data folder.
  // CommonJS: what it bundles of runplan's dependencies (dotenv) calls require().
  { ...shared, format: ['cjs'], entry: { 'git-program': 'src/git/git-main.ts' }, noExternal: [/.*/], splitting: false },
  // A storage add-on's server (src/addons/storage-main.ts), s3rver included, run as the storage account from the data folder's bin/.
  { ...shared, format: ['cjs'], entry: { 'storage-server': 'src/addons/storage-main.ts' }, noExternal: [/.*/], splitting: false },
]);
