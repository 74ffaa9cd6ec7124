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
  // Nothing of runplan (host/test/host-structure.test.ts): sshd and git start it twice per push, so it stays ≈ 30 kB.
  // CommonJS: the name serve installs (bin/git-program.cjs) and the forced commands and hooks already written run.
  { ...shared, format: ['cjs'], entry: { 'git-program': 'src/git/git-main.ts' }, noExternal: [/.*/], splitting: false },
]);
