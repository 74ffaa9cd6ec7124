import { defineConfig } from 'tsup';

// execa 9 and its helpers ship as ES modules only. Node 20 before 20.19 cannot
// require() them, so the CommonJS build carries its own copy of them.
const esmOnlyDependencies = [
  /^execa/,
  /^@sindresorhus\//,
  /^get-stream/,
  /^human-signals/,
  /^is-plain-obj/,
  /^is-stream/,
  /^npm-run-path/,
  /^path-key/,
  /^pretty-ms/,
  /^parse-ms/,
  /^strip-final-newline/,
  /^figures/,
  /^is-unicode-supported/,
  /^unicorn-magic/,
  /^yoctocolors/,
];

const shared = {
  entry: { index: 'src/index.ts' },
  target: 'node20',
  platform: 'node' as const,
  sourcemap: true,
  splitting: false,
};

export default defineConfig([
  { ...shared, format: ['esm'], dts: true, clean: true },
  { ...shared, format: ['cjs'], dts: true, noExternal: esmOnlyDependencies },
  {
    ...shared,
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    // Bundled into the CLI: resolving and loading their many small files from
    // node_modules is a large share of a cold `runplan plan`.
    noExternal: [/^zod/, /^semver/],
    // "--" ends Node's own options: Node 20 would otherwise apply an `--env-file F` found
    // among runplan's arguments (nodejs/node#54232). npm's bin links keep the shebang.
    banner: { js: '#!/usr/bin/env -S node --' },
  },
]);
