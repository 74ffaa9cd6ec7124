import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';

/**
 * zod re-exports its 65 message locales as a namespace (`z.locales`), which a bundle
 * cannot leave out: they are half of the CLI's bundle, parsed at every start. runplan's
 * messages are its own and zod's default (English) is the only one it uses, so the
 * CLI's bundle gets a locales module holding English alone.
 */
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: fileURLToPath(new URL('./node_modules/zod/v4/locales/en.js', import.meta.url)), namespace: 'zod-locales' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({ contents: `export { default as en } from ${JSON.stringify(args.path)};`, resolveDir: '.' }));
  },
};

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
  target: 'node20',
  platform: 'node' as const,
  sourcemap: true,
};

/**
 * The package's entry points (package.json "exports", api/exports.txt): the SDK, the
 * buildpack kit (`runplan/buildpack`), each built-in buildpack on its own
 * (`runplan/buildpacks/node`…) and each engine (`runplan/engines/docker`…). Code they share
 * is split into common chunks, so a program importing several of them loads one copy
 * of the core (one RunplanError class, one schema).
 */
const library = {
  ...shared,
  entry: {
    index: 'src/index.ts',
    buildpack: 'src/kit/index.ts',
    'buildpacks/node': 'buildpacks/node/index.ts',
    'buildpacks/ruby': 'buildpacks/ruby/index.ts',
    'buildpacks/play1': 'buildpacks/play1/index.ts',
    'engines/docker': 'src/engines/entries/docker.ts',
    'engines/swarm': 'src/engines/entries/swarm.ts',
    'engines/kubernetes': 'src/engines/entries/kubernetes.ts',
    // For bench/ only: no key of package.json "exports" names it (src/internals.ts).
    internals: 'src/internals.ts',
  },
  splitting: true,
  dts: true,
};

export default defineConfig([
  { ...library, format: ['esm'], clean: true },
  { ...library, format: ['cjs'], noExternal: esmOnlyDependencies },
  {
    ...shared,
    splitting: false,
    // cli.js turns Node's compile cache on, then loads cli-main.js (src/cli/entry.ts).
    // cli-resolve-hooks.js is loaded by module.register, in Node's hooks thread (src/cli/running-runplan.ts).
    entry: { cli: 'src/cli/entry.ts', 'cli-main': 'src/cli/main.ts', 'cli-resolve-hooks': 'src/cli/resolve-hooks.ts' },
    format: ['esm'],
    // Bundled into the CLI: resolving and loading their many small files from
    // node_modules is a large share of a cold `runplan plan` (ini and ignore from
    // node_modules added about 0.25 s to it on Node 20). dotenv stays out: its
    // CommonJS code requires node:fs, which an ES module bundle cannot require.
    noExternal: [/^zod/, /^semver/, /^ini$/, /^ignore$/],
    esbuildPlugins: [zodEnglishOnly],
    // "--" ends Node's own options: Node 20 would otherwise apply an `--env-file F` found
    // among runplan's arguments (nodejs/node#54232). npm's bin links keep the shebang.
    banner: { js: '#!/usr/bin/env -S node --' },
  },
]);
