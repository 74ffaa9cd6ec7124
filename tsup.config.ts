import { readFile, writeFile } from 'node:fs/promises';
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

/**
 * zod's fromJSONSchema module spreads the namespaces of all of zod's schemas and
 * checks into an object at load, reading each of their hundreds of exports: a
 * cost at every start of the CLI, which never turns a JSON Schema into a zod one.
 * The CLI's bundle gets a module of the same export that says so if called.
 */
const zodWithoutFromJsonSchema: Plugin = {
  name: 'zod-without-from-json-schema',
  setup(build) {
    build.onResolve({ filter: /\/from-json-schema\.js$/ }, (args) => (/[\\/]zod[\\/]/.test(args.importer) ? { path: args.path, namespace: 'zod-from-json-schema' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'zod-from-json-schema' }, () => ({
      contents: "export function fromJSONSchema() { throw new Error('the runplan CLI is built without zod\\'s fromJSONSchema'); }",
    }));
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

/**
 * The CLI's bundle runs from V8's code cache (src/cli/code-cache.ts), where Node.js 20
 * loses the callback that import() needs: each import( becomes _rpimp(, a function the
 * entry passes in. Same length, so the source map still points at the right columns.
 */
async function renameDynamicImports(): Promise<void> {
  const file = fileURLToPath(new URL('./dist/cli-main.cjs', import.meta.url));
  const text = await readFile(file, 'utf8');
  if (text.includes('_rpimp')) throw new Error(`${file} already uses the name _rpimp`);
  await writeFile(file, text.replace(/(?<![\w$.])import\(/g, '_rpimp('));
}

const shared = {
  target: 'node20',
  platform: 'node' as const,
  sourcemap: true,
};

/**
 * The package's entry points (package.json "exports", api/exports.txt): the SDK, the
 * buildpack kit (`runplan/buildpack`), running programs (`runplan/process`, and `runplan/process/attached` alone), each built-in buildpack on its own
 * (`runplan/buildpacks/node`…), each engine (`runplan/engines/docker`…) and their table (`runplan/engines`). Code they share
 * is split into common chunks, so a program importing several of them loads one copy
 * of the core (one RunplanError class, one schema).
 */
const library = {
  ...shared,
  entry: {
    index: 'src/index.ts',
    buildpack: 'src/kit/index.ts',
    process: 'src/process/entry.ts',
    'process/attached': 'src/process/attached-entry.ts',
    'buildpacks/node': 'buildpacks/node/index.ts',
    'buildpacks/ruby': 'buildpacks/ruby/index.ts',
    'buildpacks/play1': 'buildpacks/play1/index.ts',
    'engines/docker': 'src/engines/entries/docker.ts',
    'engines/swarm': 'src/engines/entries/swarm.ts',
    'engines/kubernetes': 'src/engines/entries/kubernetes.ts',
    engines: 'src/compose/engines-entry.ts',
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
    // cli.js runs cli-main.cjs from V8's code cache (src/cli/entry.ts, src/cli/code-cache.ts).
    // cli-resolve-hooks.js is loaded by module.register, in Node's hooks thread (src/cli/running-runplan.ts).
    entry: { cli: 'src/cli/entry.ts', 'cli-resolve-hooks': 'src/cli/resolve-hooks.ts' },
    format: ['esm'],
    // "--" ends Node's own options: Node 20 would otherwise apply an `--env-file F` found
    // among runplan's arguments (nodejs/node#54232). npm's bin links keep the shebang.
    banner: { js: '#!/usr/bin/env -S node --' },
  },
  {
    ...shared,
    splitting: false,
    // The `runplan` of npm's bin link (package.json "bin"): the same entry as CommonJS. Node.js
    // starts an ES module through its ES loader, which loads fs/promises and makes an ES facade
    // of every built-in module imported (fs's reads each export, loading the streams): ≈ a fifth
    // of a cold `runplan plan` that a CommonJS entry does not pay. dist/cli.js stays for those
    // who run that file.
    entry: { cli: 'src/cli/entry.ts' },
    format: ['cjs'],
    shims: true,
    banner: { js: '#!/usr/bin/env -S node --' },
  },
  {
    ...shared,
    splitting: false,
    // CommonJS: V8's code cache (src/cli/code-cache.ts) takes a script, not an ES module.
    entry: { 'cli-main': 'src/cli/main.ts' },
    format: ['cjs'],
    shims: true,
    // Bundled into the CLI: resolving and loading their many small files from
    // node_modules is a large share of a cold `runplan plan` (ini and ignore from
    // node_modules added about 0.25 s to it on Node 20).
    noExternal: [/^zod/, /^semver/, /^ini$/, /^ignore$/],
    esbuildPlugins: [zodEnglishOnly, zodWithoutFromJsonSchema],
    // Without comments or indentation the bundle is a quarter smaller and ASCII only,
    // which V8 reads as one byte a character: less to read, hash and compile at each start.
    esbuildOptions(options) {
      options.minifyWhitespace = true;
    },
    onSuccess: renameDynamicImports,
  },
]);
