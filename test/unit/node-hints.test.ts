import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildNotRun, buildRuns, runScriptCommand, runsScript, scriptsRunning, type BuildContext } from '../../buildpacks/node/build-script.js';
import { NodeErrors, NodeWarnings } from '../../buildpacks/node/errors.js';
import { FRAMEWORKS } from '../../buildpacks/node/framework-signatures.js';
import { asRunCommand, detectFramework, productionServer, signatureFiles } from '../../buildpacks/node/frameworks.js';
import { readNodeRequest, toolRequestWarnings, versionFileWarnings } from '../../buildpacks/node/ignored-requests.js';
import type { PackageJson } from '../../buildpacks/node/package-json.js';
import type { PackageManager } from '../../buildpacks/node/resolve-build-tool.js';
import { MemorySource } from '../../src/files/memory-source.js';
import type { BuildStep } from '../../src/plan/schema.js';
import { explainFailure } from '../../src/steps/command-step.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';
import { tempDir } from '../helpers/temp.js';

const plan = (files: Record<string, string>, application: Record<string, string> = {}) =>
  createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: new MemorySource({ '.gitignore': 'node_modules\n', ...files }), appDir: '/srv/app', env: { application } });
const pkgJson = (pkg: PackageJson) => JSON.stringify(pkg);
const detect = (pkg: PackageJson, files: string[] = []) => detectFramework(pkg, new Set(files))?.signature.id;

describe('framework signatures (data: Vercel and Netlify detect by dependency)', () => {
  it.each<[string, PackageJson, string[], string | undefined]>([
    ['Nuxt', { dependencies: { nuxt: '^4.0.0', vue: '^3' } }, [], 'nuxt'],
    ['Next.js in devDependencies', { devDependencies: { next: '16.0.0' } }, [], 'nextjs'],
    ['Remix with Vite', { devDependencies: { '@remix-run/dev': '2', vite: '6' } }, ['vite.config.ts'], 'remix'],
    ['Remix with its classic compiler', { devDependencies: { '@remix-run/dev': '2' } }, ['remix.config.js'], 'remix-classic'],
    ['React Router 7', { devDependencies: { '@react-router/dev': '7', vite: '6' } }, [], 'react-router'],
    ['SvelteKit, before Vite', { devDependencies: { '@sveltejs/kit': '2', vite: '6' } }, [], 'sveltekit'],
    ['Astro', { dependencies: { astro: '5' } }, [], 'astro'],
    ['TanStack Start', { dependencies: { '@tanstack/react-start': '1', vite: '7' } }, [], 'tanstack-start'],
    ['Vite SSR (an Express server.js)', { dependencies: { express: '5' }, devDependencies: { vite: '6' } }, ['server.js'], 'vite-ssr'],
    ['Vite with Express but no server file', { dependencies: { express: '5' }, devDependencies: { vite: '6' } }, [], 'vite'],
    ['a Vite SPA', { devDependencies: { vite: '6' } }, [], 'vite'],
    ['Create React App', { dependencies: { 'react-scripts': '5' } }, [], 'create-react-app'],
    ['Express alone', { dependencies: { express: '5' } }, [], undefined],
    ['a field that merely names a framework', { scripts: { build: 'next build' } }, [], undefined],
  ])('%s → %s', (_what, pkg, files, id) => {
    expect(detect(pkg, files)).toBe(id);
  });

  it('looks for the files of the listed frameworks only, so that nothing else of the application is read', () => {
    expect(signatureFiles({ dependencies: { express: '5' } })).toEqual([]);
    expect(signatureFiles({ devDependencies: { vite: '6' } })).toEqual(['server.js', 'server.mjs']);
  });

  it('keeps every entry complete: a name, a build, an output folder, and a way to serve', () => {
    for (const f of FRAMEWORKS) {
      expect(f.dependencies.length, f.id).toBeGreaterThan(0);
      expect(f.build && f.output && f.name, f.id).toBeTruthy();
      expect(f.server !== undefined || f.static !== undefined, f.id).toBe(true);
    }
    expect(new Set(FRAMEWORKS.map((f) => f.id)).size).toBe(FRAMEWORKS.length);
  });

  it("names the production server: the framework's own, with its adapter, else a static file server", () => {
    const server = (pkg: PackageJson, files: string[] = []) => {
      const found = detectFramework(pkg, new Set(files));
      return found && productionServer(found, pkg);
    };
    expect(server({ dependencies: { nuxt: '4' } })).toMatchObject({ start: 'node .output/server/index.mjs', needs: [] });
    expect(server({ devDependencies: { '@sveltejs/kit': '2', '@sveltejs/adapter-node': '5' } })).toMatchObject({ start: 'node build', needs: [] });
    expect(server({ devDependencies: { '@sveltejs/kit': '2', '@sveltejs/adapter-auto': '3' } })).toMatchObject({
      start: 'node build',
      needs: ['add @sveltejs/adapter-node and make it the adapter (svelte.config.js; from SvelteKit 3, the options of the sveltekit() plugin in vite.config)'],
    });
    expect(server({ dependencies: { astro: '5', '@astrojs/node': '9' } })).toMatchObject({ start: 'HOST=0.0.0.0 node ./dist/server/entry.mjs', needs: [] });
    expect(server({ dependencies: { astro: '5' } })).toMatchObject({ start: 'serve dist -l $PORT', needs: ['add serve to dependencies'] });
    expect(server({ devDependencies: { vite: '6' }, dependencies: { serve: '14.2.7' } })).toMatchObject({ start: 'serve -s dist -l $PORT', needs: [] });
  });

  it('runs a dependency command through npx as CC_RUN_COMMAND (node_modules/.bin is on PATH for scripts only)', () => {
    expect(asRunCommand('node build')).toBe('node build');
    expect(asRunCommand('next start')).toBe('npx next start');
    expect(asRunCommand('HOST=0.0.0.0 node ./dist/server/entry.mjs')).toBe('HOST=0.0.0.0 node ./dist/server/entry.mjs');
    expect(asRunCommand('NODE_ENV=production serve dist')).toBe('NODE_ENV=production npx serve dist');
  });
});

describe('the build script (Node rule 4: the service never runs scripts.build)', () => {
  const context = (changes: Partial<BuildContext> = {}): BuildContext => ({ scripts: { build: 'next build', start: 'next start' }, manager: 'npm', devInstalled: true, ...changes });

  it.each<[PackageManager, string]>([
    ['npm', 'npm run build'],
    ['yarn1', 'yarn run build'],
    ['yarn-berry', 'yarn run build'],
    ['pnpm', 'pnpm run build'],
    ['bun', 'bun run build'],
    ['custom', 'npm run build'],
  ])('%s spells it %s', (manager, command) => {
    expect(runScriptCommand(manager, 'build')).toBe(command);
  });

  it.each<[string, boolean]>([
    ['npm run build', true],
    ['npm run-script build --if-present', true],
    ['npm --silent run build', true],
    ['yarn build', true],
    ['pnpm run build && node x', true],
    ['bun run build', true],
    ['node --run build', true],
    ['bun build ./index.ts', false],
    ['npm run build:css', false],
    ['npm run prebuild', false],
    ['echo build', false],
  ])('%j runs the build script: %s', (command, runs) => {
    expect(runsScript(command, ['build'])).toBe(runs);
  });

  it('follows scripts that run the build through one another', () => {
    expect(scriptsRunning({ build: 'vite build', compile: 'npm run build', postinstall: 'npm run compile', test: 'vitest' }, 'build').sort()).toEqual(['build', 'compile', 'postinstall']);
    expect(scriptsRunning({ build: 'tsc -p .', postinstall: 'tsc -p . && echo ok' }, 'build')).toEqual(['build', 'postinstall']);
  });

  it.each<[string, Partial<BuildContext>]>([
    ['scripts.postinstall', { scripts: { build: 'next build', postinstall: 'npm run build' } }],
    ['scripts.install running the same command', { scripts: { build: 'next build', install: 'next build' } }],
    ['CC_POST_BUILD_HOOK', { postBuildHook: 'npm run build' }],
    ['CC_PRE_RUN_HOOK', { preRunHook: 'npm run build' }],
    ['the custom build tool', { manager: 'custom', customCommand: 'npm ci && npm run build' }],
    ['scripts.start', { scripts: { build: 'next build', start: 'npm run build && next start' } }],
    ['CC_RUN_COMMAND', { runCommand: 'npm run build && npx next start' }],
  ])('does not warn when %s runs it', (_what, changes) => {
    expect(buildRuns(context(changes))).toBe(true);
    expect(buildNotRun(context(changes))).toBeUndefined();
  });

  it('warns with the exact CC_POST_BUILD_HOOK, spelt for the package manager, naming what the framework misses', () => {
    const framework = detectFramework({ dependencies: { next: '16' } }, new Set());
    expect(buildNotRun(context({ manager: 'pnpm', framework }))).toEqual({
      code: NodeWarnings.NODE_BUILD_NOT_RUN.code,
      message:
        'package.json scripts.build ("next build") does not run: the service installs the dependencies and runs scripts.install (rule 4), never scripts.build, and no hook or install script runs it; Next.js then has no .next, the folder its build writes.',
      file: 'package.json',
      variable: 'CC_POST_BUILD_HOOK',
      fix: "Set CC_POST_BUILD_HOOK='pnpm run build' (it runs once the dependencies are installed).",
    });
  });

  it('keeps a post-build hook that does something else, says when only the pre-build hook runs it, and asks for devDependencies the build needs', () => {
    expect(buildNotRun(context({ postBuildHook: 'node migrate.js' }))?.fix).toBe("Set CC_POST_BUILD_HOOK='node migrate.js && npm run build' (it runs once the dependencies are installed).");
    expect(buildNotRun(context({ preBuildHook: 'npm run build' }))?.message).toContain('only CC_PRE_BUILD_HOOK runs it, before the dependencies are installed');
    const vite = detectFramework({ devDependencies: { vite: '6' } }, new Set());
    expect(buildNotRun(context({ scripts: { build: 'vite build' }, framework: vite, devInstalled: false }))?.fix).toBe(
      "Set CC_POST_BUILD_HOOK='npm run build' (it runs once the dependencies are installed), and CC_NODE_DEV_DEPENDENCIES=install: the build needs vite, a devDependency this build leaves out.",
    );
    expect(buildNotRun(context({ scripts: { build: 'tsc -p .' }, devInstalled: false, devDependencies: { tsc: '2' } }))?.fix).toContain('the build needs tsc');
    expect(buildNotRun(context({ scripts: { build: '  ' } }))).toBeUndefined();
  });

  it('turns a main the build script would write into the hook to set, when the file is missing after the build', async () => {
    const { plan: p } = await plan({ 'package.json': pkgJson({ main: 'dist/index.js', scripts: { build: 'tsc -p .' } }) });
    const verify = p.build.steps.find((s) => s.name === 'verify-main') as BuildStep;
    if (verify.run.kind !== 'exec') throw new Error('verify-main is a node command');
    const result = spawnSync(process.execPath, verify.run.argv.slice(1), { cwd: await tempDir(), encoding: 'utf8' });
    expect(explainFailure(verify, { notFound: false, exitCode: result.status, output: result.stderr.split('\n') })).toMatchObject({
      code: NodeErrors.NODE_MAIN_NOT_FOUND.code,
      fix: "Set CC_POST_BUILD_HOOK='npm run build' (it runs once the dependencies are installed). The build script would write it, and nothing runs it (RUNPLAN_W_NODE_BUILD_NOT_RUN).",
    });
  });

  it('appears in the plan, and the hook it names makes it go away', async () => {
    const app = { 'package.json': pkgJson({ scripts: { build: 'next build', start: 'next start' }, dependencies: { next: '16.0.0' } }) };
    const { plan: warned } = await plan(app);
    expect(warned.warnings.find((w) => w.code === NodeWarnings.NODE_BUILD_NOT_RUN.code)?.fix).toBe("Set CC_POST_BUILD_HOOK='npm run build' (it runs once the dependencies are installed).");
    const { plan: fixed } = await plan(app, { CC_POST_BUILD_HOOK: 'npm run build' });
    expect(fixed.warnings.map((w) => w.code)).toEqual([]);
  });
});

describe('a framework without a start command (Node rule 1)', () => {
  it.each<[string, PackageJson, string[]]>([
    [
      'Nuxt',
      { scripts: { build: 'nuxt build', postinstall: 'nuxt prepare' }, dependencies: { nuxt: '^4.0.0' } },
      [
        'it is a Nuxt application (nuxt in dependencies)',
        `Add "start": "node .output/server/index.mjs" to the scripts of package.json, or set CC_RUN_COMMAND='node .output/server/index.mjs'.`,
        "set CC_POST_BUILD_HOOK='npm run build'",
      ],
    ],
    [
      'SvelteKit with its Node adapter',
      { scripts: { build: 'vite build' }, devDependencies: { '@sveltejs/kit': '2', '@sveltejs/adapter-node': '5', vite: '6' } },
      [`Add "start": "node build" to the scripts of package.json, or set CC_RUN_COMMAND='node build'.`],
    ],
    [
      'Astro with its Node adapter, built by no script',
      { dependencies: { astro: '5', '@astrojs/node': '9' } },
      [`"start": "HOST=0.0.0.0 node ./dist/server/entry.mjs"`, "set CC_POST_BUILD_HOOK='npx astro build'"],
    ],
    [
      'a Vite SPA',
      { scripts: { build: 'vite build', preview: 'vite preview' }, devDependencies: { vite: '6' } },
      [`Add serve to dependencies, then add "start": "serve -s dist -l $PORT" to the scripts of package.json, or set CC_RUN_COMMAND='npx serve -s dist -l $PORT'.`],
    ],
  ])('%s: the fix names the production server', async (_what, pkg, fixParts) => {
    const refused = plan({ 'package.json': pkgJson(pkg) });
    await expect(refused).rejects.toMatchObject({ code: NodeErrors.NODE_NO_START_COMMAND.code, file: 'package.json' });
    const error = (await refused.catch((e: unknown) => e)) as { message: string; fix: string };
    for (const part of fixParts) expect(`${error.message}\n${error.fix}`).toContain(part);
  });

  it("spells the build hook with the application's package manager and leaves it out when an install script builds", async () => {
    const pkg = { scripts: { build: 'nuxt build' }, dependencies: { nuxt: '4' } };
    await expect(plan({ 'package.json': pkgJson(pkg), 'pnpm-lock.yaml': "lockfileVersion: '9.0'\n" })).rejects.toMatchObject({ fix: expect.stringContaining("CC_POST_BUILD_HOOK='pnpm run build'") });
    const built = plan({ 'package.json': pkgJson({ ...pkg, scripts: { ...pkg.scripts, postinstall: 'npm run build' } }) });
    await expect(built).rejects.toMatchObject({ code: NodeErrors.NODE_NO_START_COMMAND.code, fix: expect.not.stringContaining('CC_POST_BUILD_HOOK') });
  });

  it('keeps the general fix for an application of no known framework', async () => {
    await expect(plan({ 'package.json': pkgJson({ dependencies: { express: '5' } }) })).rejects.toMatchObject({
      code: NodeErrors.NODE_NO_START_COMMAND.code,
      fix: NodeErrors.NODE_NO_START_COMMAND.fix,
    });
  });
});

describe('version requests the service ignores', () => {
  it.each<[string, ReturnType<typeof readNodeRequest>]>([
    ['20', { range: '20.x', suggestion: '20.x' }],
    ['v20.11', { range: '20.11.x', suggestion: '20.11.x' }],
    ['v20.11.1', { range: '20.11.1', suggestion: '20.11.1' }],
    ['lts/iron', { range: '20.x', suggestion: '20.x' }],
    ['lts/*', { lts: true }],
    ['>=18 <21', { range: '>=18 <21', suggestion: '>=18 <21' }],
    ['node', {}],
    ['lts/unknown', {}],
  ])('reads %j as nvm does', (value, meaning) => {
    expect(readNodeRequest(value)).toEqual(meaning);
  });

  it('warns for each version file the deployed Node.js does not satisfy, naming the setting the service reads', () => {
    const deployed = { version: '24.21.0', source: 'default' };
    const warnings = versionFileWarnings({ nvmrc: '# team version\nv20\n', nodeVersion: '24\n', toolVersions: 'nodejs 22.23.0\n', mise: { tools: { node: 'lts' } } }, deployed);
    expect(warnings.map((w) => [w.code, w.file, w.variable])).toEqual([
      [NodeWarnings.NODE_VERSION_FILE_IGNORED.code, '.nvmrc', 'CC_NODE_VERSION'],
      [NodeWarnings.NODE_VERSION_FILE_IGNORED.code, '.tool-versions', 'CC_NODE_VERSION'],
      [NodeWarnings.NODE_VERSION_FILE_IGNORED.code, 'mise.toml', 'CC_NODE_VERSION'],
    ]);
    expect(warnings[0]?.fix).toBe('Set "engines": { "node": "20.x" } in package.json (or CC_NODE_VERSION=20.x) to deploy what .nvmrc names, or make .nvmrc name the deployed version.');
    expect(warnings[2]?.fix).toContain('"engines": { "node": "24.x" }');
    expect(versionFileWarnings({ nvmrc: 'lts/*' }, deployed)).toEqual([]);
    expect(versionFileWarnings({ nvmrc: 'lts/*' }, { version: '25.1.0', source: 'env CC_NODE_VERSION', requested: '25.x' })).toHaveLength(1);
  });

  it('says engines.node decides when it is set', () => {
    const [warning] = versionFileWarnings({ nvmrc: '20' }, { version: '22.23.1', source: 'package.json engines.node', requested: '22.x' });
    expect(warning).toMatchObject({ file: '.nvmrc', message: expect.stringContaining('the version comes from engines.node ("22.x")') });
    expect(warning?.variable).toBeUndefined();
    expect(warning?.fix).toContain('engines.node decides');
  });

  it('plans the warning for an .nvmrc the deployment does not follow', async () => {
    const { plan: p } = await plan({ 'package.json': pkgJson({ main: 'server.js' }), '.nvmrc': '20\n' });
    expect(p.warnings.map((w) => w.code)).toEqual([NodeWarnings.NODE_VERSION_FILE_IGNORED.code]);
  });

  const tools = {
    pnpm: [
      { version: '9.15.9', integrity: 'x' },
      { version: '10.34.8', integrity: 'x' },
    ],
    '@yarnpkg/cli-dist': [{ version: '4.9.2', integrity: 'x' }],
    yarn: [{ version: '1.22.22', integrity: 'x' }],
  };

  it.each<[string, PackageJson, { manager: PackageManager; managerVersion?: string; requested?: string }, string[]]>([
    [
      'engines.pnpm while npm builds',
      { engines: { pnpm: '^9' } },
      { manager: 'npm' },
      ['To build with pnpm, commit pnpm-lock.yaml (run `pnpm install` once) or set CC_NODE_BUILD_TOOL=pnpm, with "packageManager": "pnpm@9.15.9"; or remove engines.pnpm.'],
    ],
    [
      'engines.pnpm excluding the pinned pnpm',
      { engines: { pnpm: '^9' } },
      { manager: 'pnpm', managerVersion: '10.34.8' },
      ['Set "packageManager": "pnpm@9.15.9" in package.json, so that the build runs a version engines.pnpm accepts.'],
    ],
    [
      'engines.yarn asking for Yarn 4 while Yarn 1 builds',
      { engines: { yarn: '>=4' } },
      { manager: 'yarn1', managerVersion: '1.22.22' },
      ['Set "packageManager": "yarn@4.9.2" in package.json and CC_NODE_BUILD_TOOL=yarn-berry, so that the build runs a version engines.yarn accepts.'],
    ],
    [
      'packageManager naming pnpm while npm builds',
      { packageManager: 'pnpm@9.15.9' },
      { manager: 'npm' },
      ['To build with pnpm, commit pnpm-lock.yaml (run `pnpm install` once) or set CC_NODE_BUILD_TOOL=pnpm; or remove packageManager.'],
    ],
    [
      'packageManager overridden by CC_NODE_BUILD_TOOL',
      { packageManager: 'yarn@4.9.2' },
      { manager: 'npm', requested: 'npm-ci' },
      ['To build with yarn, unset CC_NODE_BUILD_TOOL or set CC_NODE_BUILD_TOOL=yarn-berry; or remove packageManager.'],
    ],
    ['packageManager without an exact version', { packageManager: 'pnpm@latest' }, { manager: 'npm' }, ['Write an exact version, e.g. "packageManager": "pnpm@10.34.8".']],
    [
      'engines.pnpm and packageManager together: said once',
      { engines: { pnpm: '9' }, packageManager: 'pnpm@9.15.9' },
      { manager: 'npm' },
      [expect.stringContaining('or remove packageManager') as unknown as string],
    ],
  ])('%s', (_what, pkg, choice, fixes) => {
    const warnings = toolRequestWarnings(pkg, choice, tools);
    expect(warnings.map((w) => w.code)).toEqual(fixes.map(() => NodeWarnings.NODE_TOOL_REQUEST_IGNORED.code));
    expect(warnings.map((w) => w.fix)).toEqual(fixes);
  });

  it('leaves alone what chose the tool, a guard that is no range, npm, and a custom build', () => {
    expect(toolRequestWarnings({ engines: { pnpm: '^10' }, packageManager: 'pnpm@10.34.8' }, { manager: 'pnpm', managerVersion: '10.34.8' }, tools)).toEqual([]);
    expect(toolRequestWarnings({ engines: { yarn: 'please use npm' } }, { manager: 'npm' }, tools)).toEqual([]);
    expect(toolRequestWarnings({ packageManager: 'npm@11.0.0', engines: { npm: '>=11' } }, { manager: 'npm' }, tools)).toEqual([]);
    expect(toolRequestWarnings({ engines: { pnpm: '^9' } }, { manager: 'custom' }, tools)).toEqual([]);
  });
});
