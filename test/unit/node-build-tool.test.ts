import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { dependencyCacheKey, type DependencyKeyInput } from '../../buildpacks/node/cache-key.js';
import { NodeErrors, NodeWarnings } from '../../buildpacks/node/errors.js';
import { ignoresNodeModules } from '../../buildpacks/node/gitignore.js';
import { installCommand } from '../../buildpacks/node/install-commands.js';
import { planNpmrc, parseRegistry } from '../../buildpacks/node/npmrc.js';
import { parsePackageManager, resolveBuildTool } from '../../buildpacks/node/resolve-build-tool.js';
import { resolveDevDependencies } from '../../buildpacks/node/resolve-dev-dependencies.js';
import { resolveNodeOptions } from '../../buildpacks/node/resolve-node-options.js';
import { resolveStart } from '../../buildpacks/node/resolve-start.js';
import { toolInstall, yarnReleasePath } from '../../buildpacks/node/tools.js';
import { planYarnrc } from '../../buildpacks/node/yarnrc.js';
import { assertTokenFitsYarnrc } from '../../buildpacks/node/yarnrc-registry.js';
import type { FileChunk } from '../../src/plan/schema.js';
import { tempDir } from '../helpers/temp.js';

const run = promisify(execFile);

describe('build tool (rules 6 and 7, NOTES)', () => {
  it.each([
    // CC_NODE_BUILD_TOOL values of the specification
    [{ ccNodeBuildTool: 'npm' }, 'npm', 'npm', undefined],
    [{ ccNodeBuildTool: 'npm-install' }, 'npm-install', 'npm', undefined],
    [{ ccNodeBuildTool: 'npm-ci', lockfiles: ['package-lock.json'] }, 'npm-ci', 'npm', undefined],
    [{ ccNodeBuildTool: 'yarn' }, 'yarn', 'yarn1', '1.22.22'],
    [{ ccNodeBuildTool: 'yarn2' }, 'yarn2', 'yarn2', '2.4.2'],
    [{ ccNodeBuildTool: 'custom', ccCustomBuildTool: 'make deps' }, 'custom', 'custom', undefined],
    // the newer service's values
    [{ ccNodeBuildTool: 'yarn-berry' }, 'yarn-berry', 'yarn-berry', '4.9.2'],
    [{ ccNodeBuildTool: 'pnpm' }, 'pnpm', 'pnpm', '10.34.8'],
    [{ ccNodeBuildTool: 'bun' }, 'bun', 'bun', '1.4.5'],
    // detection
    [{}, 'npm', 'npm', undefined],
    [{ lockfiles: ['package-lock.json'] }, 'npm', 'npm', undefined],
    [{ lockfiles: ['yarn.lock'] }, 'yarn', 'yarn1', '1.22.22'],
    [{ lockfiles: ['yarn.lock'], packageManager: 'yarn@1.22.19' }, 'yarn', 'yarn1', '1.22.22'],
    [{ lockfiles: ['yarn.lock'], packageManager: 'yarn@2.4.2' }, 'yarn2', 'yarn2', '2.4.2'],
    [{ lockfiles: ['yarn.lock'], packageManager: 'yarn@3.8.7' }, 'yarn-berry', 'yarn-berry', '3.8.7'],
    [{ lockfiles: ['yarn.lock'], packageManager: 'yarn@4.9.2+sha512.abc' }, 'yarn-berry', 'yarn-berry', '4.9.2'],
    [{ lockfiles: ['pnpm-lock.yaml'] }, 'pnpm', 'pnpm', '10.34.8'],
    [{ lockfiles: ['pnpm-lock.yaml'], packageManager: 'pnpm@9.8.0' }, 'pnpm', 'pnpm', '9.8.0'],
    [{ lockfiles: ['bun.lock'] }, 'bun', 'bun', '1.4.5'],
    [{ lockfiles: ['bun.lockb'] }, 'bun', 'bun', '1.4.5'],
    // rule 6: the variable overrides yarn.lock
    [{ ccNodeBuildTool: 'npm', lockfiles: ['yarn.lock'] }, 'npm', 'npm', undefined],
    [{ packageManager: 'pnpm@9.8.0' }, 'npm', 'npm', undefined],
  ])('%j → %s (%s %s)', (input, tool, manager, version) => {
    const r = resolveBuildTool({ lockfiles: [], ...input });
    expect([r.tool, r.manager, r.managerVersion]).toEqual([tool, manager, version]);
    expect(r.decision.id).toBe('node.build-tool');
  });

  it('reports yarn.lock as overridden when CC_NODE_BUILD_TOOL is set (rule 6)', () => {
    const r = resolveBuildTool({ ccNodeBuildTool: 'npm', lockfiles: ['yarn.lock'] });
    expect(r.decision).toMatchObject({ source: 'env CC_NODE_BUILD_TOOL', overridden: [expect.objectContaining({ source: 'yarn.lock', reason: expect.stringContaining('rule 6') })] });
  });

  it('warns about lockfiles of two tools and says which one is used', () => {
    const r = resolveBuildTool({ lockfiles: ['yarn.lock', 'package-lock.json'] });
    expect(r.tool).toBe('yarn');
    expect(r.warnings.map((w) => w.code)).toEqual([NodeWarnings.NODE_LOCKFILES_CONFLICT.code, NodeWarnings.NODE_YARN_UNMAINTAINED.code]);
    expect(r.decision.overridden).toEqual([expect.objectContaining({ source: 'package-lock.json', reason: expect.stringContaining('ignored') })]);
    expect(resolveBuildTool({ lockfiles: ['package-lock.json', 'npm-shrinkwrap.json'] }).warnings).toEqual([]);
  });

  it('warns that Yarn 1 and 2 are unmaintained, not Yarn 4', () => {
    for (const t of ['yarn', 'yarn2']) expect(resolveBuildTool({ ccNodeBuildTool: t, lockfiles: [] }).warnings.map((w) => w.code)).toEqual([NodeWarnings.NODE_YARN_UNMAINTAINED.code]);
    expect(resolveBuildTool({ ccNodeBuildTool: 'yarn-berry', lockfiles: [] }).warnings).toEqual([]);
  });

  it.each([
    [{ ccNodeBuildTool: 'maven' }, NodeErrors.NODE_BUILD_TOOL_INVALID.code, 'CC_NODE_BUILD_TOOL'],
    [{ ccNodeBuildTool: 'custom' }, NodeErrors.NODE_CUSTOM_BUILD_TOOL_EMPTY.code, 'CC_CUSTOM_BUILD_TOOL'],
    [{ ccNodeBuildTool: 'custom', ccCustomBuildTool: '  ' }, NodeErrors.NODE_CUSTOM_BUILD_TOOL_EMPTY.code, 'CC_CUSTOM_BUILD_TOOL'],
    [{ ccNodeBuildTool: 'npm-ci' }, NodeErrors.NODE_LOCKFILE_MISSING.code, 'CC_NODE_BUILD_TOOL'],
  ])('%j is refused with %s naming %s', (input, code, variable) => {
    expect(() => resolveBuildTool({ lockfiles: [], ...input })).toThrowError(expect.objectContaining({ code, variable }));
  });

  it('parses packageManager with and without a hash', () => {
    expect(parsePackageManager('yarn@4.9.2+sha224.abc')).toEqual({ name: 'yarn', version: '4.9.2' });
    expect(parsePackageManager('pnpm@10.1.0')).toEqual({ name: 'pnpm', version: '10.1.0' });
    expect(parsePackageManager('yarn')).toBeUndefined();
  });
});

describe('development dependencies (rule 8, the four cases of NOTES)', () => {
  it.each([
    ['install', 'production', true],
    ['install', undefined, true],
    ['ignore', 'production', false],
    ['ignore', undefined, false],
    [undefined, 'production', false],
    [undefined, undefined, true],
    [undefined, 'development', true],
  ])('CC_NODE_DEV_DEPENDENCIES=%s NODE_ENV=%s → installed: %s', (cc, nodeEnv, installed) => {
    expect(resolveDevDependencies({ ccNodeDevDependencies: cc, nodeEnv }).install).toBe(installed);
  });

  it('refuses other values', () => {
    expect(() => resolveDevDependencies({ ccNodeDevDependencies: 'yes' })).toThrowError(
      expect.objectContaining({ code: NodeErrors.NODE_DEV_DEPENDENCIES_INVALID.code, variable: 'CC_NODE_DEV_DEPENDENCIES' }),
    );
  });

  const tool = (manager: string, extra = {}) => ({ ...resolveBuildTool({ lockfiles: [] }), manager, tool: manager, managerVersion: '4.9.2', ...extra }) as never;
  it.each([
    ['npm', true, ['npm', 'install', '--include=dev']],
    ['npm', false, ['npm', 'install', '--omit=dev']],
    ['yarn1', true, ['yarn', 'install', '--non-interactive', '--production=false']],
    ['yarn1', false, ['yarn', 'install', '--non-interactive', '--production=true']],
    ['yarn2', true, ['node', '.runplan/tools/yarn2/bin/yarn.js', 'install']],
    ['yarn-berry', true, ['node', '.runplan/tools/yarn-berry/bin/yarn.js', 'install']],
    ['yarn-berry', false, ['node', '.runplan/tools/yarn-berry/bin/yarn.js', 'workspaces', 'focus', '--all', '--production']],
    ['pnpm', true, ['pnpm', 'install', '--prod=false']],
    ['pnpm', false, ['pnpm', 'install', '--prod']],
    ['bun', true, ['bun', 'install']],
    ['bun', false, ['bun', 'install', '--production']],
  ])('%s with devDependencies %s runs %j', (manager, dev, argv) => {
    expect(installCommand(tool(manager), dev, '12.2.0').run).toEqual({ kind: 'exec', argv });
  });

  it("passes the yarn environment and pnpm's own version pinning off, never a secret", () => {
    expect(installCommand(tool('yarn-berry'), true, '12.2.0').env).toEqual({ YARN_ENABLE_TELEMETRY: '0', YARN_ENABLE_PROGRESS_BARS: 'false' });
    expect(installCommand(tool('pnpm'), true, '12.2.0').env).toEqual({ npm_config_manage_package_manager_versions: 'false' });
    expect(installCommand(tool('custom', { customCommand: 'make deps' }), true, '12.2.0')).toMatchObject({ run: { kind: 'shell', script: 'make deps' }, env: {} });
  });

  it('uses the flags old npm understands', () => {
    expect(installCommand(tool('npm'), false, '6.14.18').run).toEqual({ kind: 'exec', argv: ['npm', 'install', '--production'] });
  });
});

describe('package managers runplan installs', () => {
  it('installs each from its npm package into .runplan/tools, its command linked into .runplan/bin', () => {
    const published = { version: '10.34.8', integrity: 'sha512-cG5wbQ==' };
    expect(toolInstall('pnpm', published)).toEqual({
      kind: 'install',
      source: { type: 'npm', name: 'pnpm', version: '10.34.8', integrity: 'sha512-cG5wbQ==' },
      target: '.runplan/tools/pnpm',
      executables: ['bin/pnpm.cjs'],
      links: [{ path: '.runplan/bin/pnpm', target: 'bin/pnpm.cjs' }],
    });
    expect(toolInstall('bun', published)).toMatchObject({ source: { name: '@oven/bun-linux-x64' }, executables: ['bin/bun'], links: [{ path: '.runplan/bin/bun', target: 'bin/bun' }] });
    expect(toolInstall('yarn1', published)).toMatchObject({ source: { name: 'yarn' }, target: '.runplan/tools/yarn1', links: [{ path: '.runplan/bin/yarn', target: 'bin/yarn.js' }] });
  });

  it('gives Yarn 2+ its `yarn` command too: the release yarnPath names, inside the installed package', () => {
    for (const t of ['yarn2', 'yarn-berry'] as const) {
      const install = toolInstall(t, { version: '4.9.2', integrity: 'sha512-eWFybg==' });
      expect(install).toMatchObject({
        source: { name: '@yarnpkg/cli-dist' },
        target: `.runplan/tools/${t}`,
        executables: ['bin/yarn.js'],
        links: [{ path: '.runplan/bin/yarn', target: 'bin/yarn.js' }],
      });
      expect(yarnReleasePath(t)).toBe(`${install.target}/${install.executables[0]}`);
    }
  });

  it("writes .yarnrc.yml with yarnPath to the installed release and the node-modules linker, keeping the application's settings", async () => {
    const { file, overridden } = await planYarnrc('enableTelemetry: false\nyarnPath: .yarn/releases/yarn-4.1.0.cjs\nnodeLinker: pnp\n\n', 'yarn-berry', '4.9.2');
    expect(file).toMatchObject({
      path: '.yarnrc.yml',
      phase: 'build',
      secret: false,
      content: [{ text: 'enableTelemetry: false\nyarnPath: .runplan/tools/yarn-berry/bin/yarn.js\nnodeLinker: node-modules\n' }],
    });
    expect(overridden.map((o) => [o.source, o.value])).toEqual([
      ['.yarnrc.yml yarnPath', '.yarn/releases/yarn-4.1.0.cjs'],
      ['.yarnrc.yml nodeLinker', 'pnp'],
    ]);
    expect((await planYarnrc(undefined, 'yarn2', '2.4.2')).file.content).toEqual([{ text: 'yarnPath: .runplan/tools/yarn2/bin/yarn.js\nnodeLinker: node-modules\n' }]);
  });

  it("keeps the application's comments in .yarnrc.yml, also with NPM_TOKEN; a replaced key's own comment goes with it", async () => {
    const app = [
      '# Team settings for Yarn',
      'enableTelemetry: false # no telemetry',
      '# the release we used to commit',
      'yarnPath: .yarn/releases/yarn-4.1.0.cjs',
      'npmScopes:',
      '  corp: # our scope',
      '    npmRegistryServer: "https://corp.example.com" # corp',
      '# the end',
      '',
    ].join('\n');
    const kept = ['# Team settings for Yarn\nenableTelemetry: false # no telemetry\n', '# our scope\n', 'npmRegistryServer: "https://corp.example.com" # corp\n', '# the end\n'];
    const plain = (await planYarnrc(app, 'yarn-berry', '4.9.2')).file.content.map((c) => ('text' in c ? c.text : '')).join('');
    const withToken = (
      await planYarnrc(app, 'yarn-berry', '4.9.2', { ccNpmRegistry: 'registry.example.com', configuredRegistry: async () => 'https://registry.example.org/', lookup: () => undefined })
    ).file.content
      .map((c) => ('text' in c ? c.text : '<token>'))
      .join('');
    for (const text of [plain, withToken]) {
      for (const comment of kept) expect(text).toContain(comment);
      expect(text).not.toContain('the release we used to commit');
    }
    expect(withToken).toContain('npmRegistries:\n  //registry.example.com:\n    npmAlwaysAuth: true\n    npmAuthToken: "<token>"\n');
  });

  it('edits .yarnrc.yml as YAML: a flow mapping, quoted keys and CRLF lines give one yarnPath and one nodeLinker (found by a property test)', async () => {
    const { parse } = await import('yaml');
    for (const app of ['{}', '{ enableTelemetry: false, nodeLinker: pnp }', '"yarnPath": .yarn/releases/old.cjs\r\n"nodeLinker": pnp\r\n', '# only a comment\n']) {
      const text = (await planYarnrc(app, 'yarn-berry', '4.9.2')).file.content.map((c) => ('text' in c ? c.text : '')).join('');
      expect(parse(text), app).toMatchObject({ yarnPath: '.runplan/tools/yarn-berry/bin/yarn.js', nodeLinker: 'node-modules' });
      expect(text.match(/yarnPath|nodeLinker/g), app).toHaveLength(2);
    }
  });

  it.each(['- a list\n', 'just text', 'a: [\n', 'a: 1\n---\nb: 2\n', 'a: *nowhere\n', '#\rv'])('refuses a .yarnrc.yml Yarn cannot read, %j, with a code', async (app) => {
    await expect(planYarnrc(app, 'yarn-berry', '4.9.2')).rejects.toMatchObject({ code: NodeErrors.NODE_YARNRC_INVALID.code, file: '.yarnrc.yml' });
  });
});

describe('.yarnrc.yml for NPM_TOKEN (Yarn 2+, issue 12 item 6)', () => {
  const registry = (ccNpmRegistry?: string, vars: Record<string, string> = {}) => ({
    ccNpmRegistry,
    configuredRegistry: async () => 'https://registry.example.org/',
    lookup: (n: string) => vars[n],
  });
  const text = (content: readonly FileChunk[]) => content.map((c) => ('text' in c ? c.text : 'env' in c ? `<${c.env}>` : `\${${c.placeholder}}`)).join('');

  it('uses the configured registry when CC_NPM_REGISTRY is unset: the default registry and the token for its host only', async () => {
    const { file, decision } = await planYarnrc(undefined, 'yarn2', '2.4.2', registry());
    expect(text(file.content)).toBe(
      'yarnPath: .runplan/tools/yarn2/bin/yarn.js\nnodeLinker: node-modules\nnpmRegistryServer: https://registry.example.org\nnpmRegistries:\n  //registry.example.org:\n    npmAlwaysAuth: true\n    npmAuthToken: "<NPM_TOKEN>"\n',
    );
    expect(file).toMatchObject({ mode: 0o600, secret: true, phase: 'build' });
    expect(decision).toMatchObject({
      id: 'node.yarn-registry',
      requested: null,
      source: 'the registry npm is configured with on this host',
      resolved: 'https://registry.example.org/',
      overridden: [],
    });
  });

  it("keeps the app's scoped registries, and leaves its default registry when a scope already routes to the host", async () => {
    const app = [
      'npmScopes:',
      '  private:',
      '    npmRegistryServer: "http://${CC_NPM_REGISTRY}"',
      '    npmAuthIdent: "user:old"',
      '  other:',
      '    npmRegistryServer: https://npm.example.com',
      '    npmAuthToken: other-scope-token',
      'npmRegistries:',
      '  "http://127.0.0.1:4873/":',
      '    npmAuthToken: committed',
      '  //npm.example.com:',
      '    npmAlwaysAuth: false',
      '',
    ].join('\n');
    const { file, decision } = await planYarnrc(app, 'yarn-berry', '4.9.2', registry('127.0.0.1:4873', { CC_NPM_REGISTRY: '127.0.0.1:4873' }));
    const { parse } = await import('yaml');
    const read = parse(text(file.content));
    expect(read.npmScopes).toEqual({
      private: { npmRegistryServer: 'http://${CC_NPM_REGISTRY}' },
      other: { npmRegistryServer: 'https://npm.example.com', npmAuthToken: 'other-scope-token' },
    });
    expect(read.npmRegistries).toEqual({ '//npm.example.com': { npmAlwaysAuth: false }, '//127.0.0.1:4873': { npmAlwaysAuth: true, npmAuthToken: '<NPM_TOKEN>' } });
    expect(read).not.toHaveProperty('npmRegistryServer');
    expect(decision?.reason).toContain("the application's .yarnrc.yml already routes packages to it");
    expect(decision?.overridden.map((o) => [o.source, o.value])).toEqual([
      ['.yarnrc.yml npmScopes.private.npmAuthIdent', null],
      ['.yarnrc.yml npmRegistries "http://127.0.0.1:4873/"', null],
    ]);
  });

  it("takes the app's own npmRegistryServer as the default registry when CC_NPM_REGISTRY is unset, and replaces it, unshown when it holds a password, when CC_NPM_REGISTRY names another", async () => {
    const own = await planYarnrc('npmRegistryServer: "https://npm.example.com/team"\n', 'yarn-berry', '4.9.2', registry());
    expect(own.decision).toMatchObject({ source: "the application's .yarnrc.yml npmRegistryServer", resolved: 'https://npm.example.com/team/', overridden: [] });
    expect(text(own.file.content)).toContain('  //npm.example.com/team:\n');
    const replaced = await planYarnrc('npmRegistryServer: "https://u:pw-yarnrc-99@npm.example.com"\n', 'yarn-berry', '4.9.2', registry('registry.example.com'));
    expect(replaced.decision?.overridden).toEqual([expect.objectContaining({ source: '.yarnrc.yml npmRegistryServer', value: null })]);
    expect(JSON.stringify(replaced.decision)).not.toContain('pw-yarnrc-99');
    expect(text(replaced.file.content)).toContain('npmRegistryServer: https://registry.example.com\n');
  });

  it('writes the token on a line of its own, even when the app wrote its settings as a flow mapping', async () => {
    const { file } = await planYarnrc('{ enableTelemetry: false, npmRegistries: { "//elsewhere.example.org": { npmAlwaysAuth: true } } }', 'yarn-berry', '4.9.2', registry('registry.example.com'));
    expect(file.content[0]).toEqual({ text: expect.stringMatching(/\n {4}npmAuthToken: "$/) });
    expect(file.content.slice(1)).toEqual([{ env: 'NPM_TOKEN', escape: 'yaml-double-quoted' }, { text: expect.stringMatching(/^"\nyarnPath: /) }]);
  });

  it.each([
    ['npmRegistries: [a, b]\n', /npmRegistries must be a mapping/],
    ['npmRegistries: {}\nnpmRegistries: {}\n', /sets npmRegistries 2 times/],
    ['x: runplan-npm-token-mark-7c41e9\n', /contains the text/],
  ])('refuses %j with a code', async (app, message) => {
    await expect(planYarnrc(app, 'yarn-berry', '4.9.2', registry('registry.example.com'))).rejects.toMatchObject({ code: NodeErrors.NODE_YARNRC_INVALID.code, file: '.yarnrc.yml', message });
  });

  // Quotes, backslashes and control characters are escaped for YAML (issue 21); Yarn has no escape for ${…}.
  it.each(['ab${NPM_TOKEN}', 'ab\ud800cd', 'ab\ncd'])('refuses the token %j for .yarnrc.yml, by name', (token) => {
    expect(() => assertTokenFitsYarnrc(token)).toThrowError(expect.objectContaining({ code: NodeErrors.NODE_NPM_TOKEN_INVALID.code, variable: 'NPM_TOKEN' }));
  });

  it('accepts the tokens registries hand out', () => {
    for (const token of ['npm_AbC012345', 'eyJhbGciOiJIUzI1NiJ9.e30.x-y_z', 'YWJj+ZGVm/Z2hp==', 'ab$cd', 'tab\there', 'caf\u00e9-🚀', 'ab"cd', 'ab\\cd', 'ab\u0001cd', 'ab\u0085cd', 'ab\ufeffcd']) {
      expect(() => assertTokenFitsYarnrc(token)).not.toThrow();
    }
  });
});

describe('start command (CC_RUN_COMMAND)', () => {
  it('runs CC_RUN_COMMAND through a shell and reports what it overrides', () => {
    const r = resolveStart({ main: 'a.js', scripts: { start: 'node a.js' } }, 'node dist/bundle.js --port $PORT');
    expect(r.command).toEqual({ kind: 'shell', script: 'node dist/bundle.js --port $PORT' });
    expect(r.decision.overridden.map((o) => o.source)).toEqual(['package.json scripts.start', 'package.json main']);
    expect(resolveStart({ main: 'a.js' }, '  ').command).toEqual({ kind: 'exec', argv: ['node', 'a.js'] });
    expect(resolveStart({}, 'node x.js').command.kind).toBe('shell');
  });
});

describe('NODE_OPTIONS', () => {
  it.each([
    [undefined, 2048, '24.21.0', '--max-old-space-size=1536'],
    ['--enable-source-maps', 1024, '24.21.0', '--enable-source-maps --max-old-space-size=768'],
    ['--max-old-space-size=300', 1024, '24.21.0', undefined],
    ['--max_old_space_size=300', 1024, '24.21.0', undefined],
    [undefined, 1024, '6.17.1', undefined],
  ])('user %j, %i MB, Node %s → %j', (user, memory, node, value) => {
    expect(resolveNodeOptions(user, memory, node).value).toBe(value);
  });
});

describe('.npmrc for NPM_TOKEN (rule 9)', () => {
  const base = { configuredRegistry: async () => 'https://registry.example.org/', lookup: (n: string) => ({ CC_NPM_REGISTRY: '127.0.0.1:4873' })[n] };
  const text = (content: readonly FileChunk[]) => content.map((c) => ('text' in c ? c.text : 'env' in c ? `<${c.env}>` : `\${${c.placeholder}}`)).join('');

  it('uses the configured registry when CC_NPM_REGISTRY is unset', async () => {
    const r = await planNpmrc(base);
    expect(text(r.file.content)).toBe('registry=https://registry.example.org/\n//registry.example.org/:_authToken=<NPM_TOKEN>\n');
    expect(r.file).toMatchObject({ path: '.npmrc', mode: 0o600, secret: true, phase: 'build' });
  });

  it("uses CC_NPM_REGISTRY's host for the token line and keeps the app's own lines", async () => {
    const r = await planNpmrc({ ...base, ccNpmRegistry: '127.0.0.1:4873', appNpmrc: '@private:registry=http://${CC_NPM_REGISTRY}/\nsave-exact=true\n' });
    expect(text(r.file.content)).toBe('@private:registry=http://${CC_NPM_REGISTRY}/\nsave-exact=true\n//127.0.0.1:4873/:_authToken=<NPM_TOKEN>\n');
    expect(r.decision).toMatchObject({ source: 'env CC_NPM_REGISTRY', resolved: 'https://127.0.0.1:4873/' });
  });

  it('adds the registry address when nothing routes packages to CC_NPM_REGISTRY, and replaces a committed token line', async () => {
    const r = await planNpmrc({ ...base, ccNpmRegistry: 'https://npm.example.com/team/', appNpmrc: '//npm.example.com/team/:_authToken=old\n' });
    expect(text(r.file.content)).toBe('registry=https://npm.example.com/team/\n//npm.example.com/team/:_authToken=<NPM_TOKEN>\n');
    expect(r.decision.overridden).toEqual([expect.objectContaining({ source: '.npmrc', value: null })]);
  });

  it("writes the registry and token lines before the app's first [section], where npm would not read them (found by a property test)", async () => {
    const r = await planNpmrc({ ...base, appNpmrc: 'save-exact=true\n[tools]\nx=1\n' });
    expect(text(r.file.content)).toBe('save-exact=true\nregistry=https://registry.example.org/\n//registry.example.org/:_authToken=<NPM_TOKEN>\n[tools]\nx=1\n');
    // A registry line inside a section routes nothing: npm does not read it there.
    const inSection = await planNpmrc({ ...base, appNpmrc: '[tools]\nregistry=https://npm.example.com/\n' });
    expect(text(inSection.file.content)).toBe('registry=https://registry.example.org/\n//registry.example.org/:_authToken=<NPM_TOKEN>\n[tools]\nregistry=https://npm.example.com/\n');
  });

  it("reads the app's .npmrc as npm does (ini): comments, quotes, spaces, scoped registries, the last line winning", async () => {
    const app = [
      '; team settings',
      '# registry=https://commented.example.com/',
      'registry = https://npm.example.com/team/ ; ours',
      '@corp:registry = "https://corp.example.com/"',
      'save-exact=true',
      '',
    ].join('\n');
    const r = await planNpmrc({ ...base, appNpmrc: app });
    // The app's own registry (not the configured one): already routed, so no registry= line is added.
    expect(r.decision).toMatchObject({ source: "the application's .npmrc registry line", resolved: 'https://npm.example.com/team/' });
    expect(text(r.file.content)).toBe(`${app}//npm.example.com/team/:_authToken=<NPM_TOKEN>\n`);
    // A scoped registry routes packages to the host too; the last registry line is the one npm uses.
    const scoped = await planNpmrc({ ...base, ccNpmRegistry: 'corp.example.com', appNpmrc: '@corp:registry=https://corp.example.com/\n' });
    expect(text(scoped.file.content)).toBe('@corp:registry=https://corp.example.com/\n//corp.example.com/:_authToken=<NPM_TOKEN>\n');
    const last = await planNpmrc({ ...base, appNpmrc: 'registry=https://first.example.com/\nregistry=https://second.example.com/\n' });
    expect(last.decision.resolved).toBe('https://second.example.com/');
  });

  it("keeps ${VAR} in the app's lines as written and replaces its token line however it is spelt", async () => {
    const app = '@private:registry=https://${CC_NPM_REGISTRY}/\n//127.0.0.1:4873/:_authToken = "old-token"\n; //127.0.0.1:4873/:_authToken=commented\n';
    const r = await planNpmrc({ ...base, appNpmrc: app });
    // ${CC_NPM_REGISTRY} is expanded to decide where packages go (npm does), and left as written in the file.
    expect(r.decision).toMatchObject({ resolved: 'https://registry.example.org/' });
    expect(text(r.file.content)).toBe(`${app}registry=https://registry.example.org/\n//registry.example.org/:_authToken=<NPM_TOKEN>\n`);
    const own = await planNpmrc({ ...base, ccNpmRegistry: '127.0.0.1:4873', appNpmrc: app });
    expect(text(own.file.content)).toBe('@private:registry=https://${CC_NPM_REGISTRY}/\n; //127.0.0.1:4873/:_authToken=commented\n//127.0.0.1:4873/:_authToken=<NPM_TOKEN>\n');
    expect(own.decision.overridden).toEqual([expect.objectContaining({ source: '.npmrc', value: null })]);
    // pnpm does not expand ${…} in a project .npmrc's registry addresses: such a line routes nothing.
    const pnpm = await planNpmrc({ ...base, ccNpmRegistry: '127.0.0.1:4873', appNpmrc: app, expandsRegistryVariables: false });
    expect(text(pnpm.file.content)).toContain('registry=https://127.0.0.1:4873/\n');
    expect(pnpm.decision.reason).toContain("pnpm ignores the application's 1 registry line(s)");
  });

  it.each(['user:pw@host', 'http://', 'a b', 'ftp://x'])('refuses CC_NPM_REGISTRY=%j', async (value) => {
    await expect(planNpmrc({ ...base, ccNpmRegistry: value })).rejects.toMatchObject({ code: NodeErrors.NODE_NPM_REGISTRY_INVALID.code, variable: 'CC_NPM_REGISTRY' });
  });

  it('parses hosts with ports and paths', () => {
    expect(parseRegistry('Registry.Example.com:8443/npm/')).toEqual({ scheme: 'https', hostPath: 'registry.example.com:8443/npm' });
  });
});

describe('.gitignore (rule 2)', () => {
  const cases: [string | undefined, boolean][] = [
    ['/node_modules\n', true],
    ['node_modules/\n', true],
    ['dist\r\nnode_modules\r\n', true],
    ['**/node_modules', true],
    ['node_modules/*\n', true],
    ['node_modules/**\n', true],
    ['node_modules   \n', true],
    ['*_modules\n', true],
    ['# node_modules\n', false],
    ['/node_modules_old\n', false],
    // Negation: a later "!" takes it back, as git does.
    ['node_modules\n!node_modules\n', false],
    ['node_modules/\n!/node_modules/\n', false],
    ['!node_modules\nnode_modules\n', true],
    ['dist\n/node_modules/\n!dist/keep\n', true],
    ['/node_modules\n!/node_modules\n', false],
    ['node_modules\n\\!node_modules\n', true],
    // Nested: a pattern with a folder before it applies to that folder only.
    ['packages/a/node_modules\n', false],
    ['web/**/node_modules\n', false],
    ['\\#node_modules\n', false],
    ['\n\n', false],
    [undefined, false],
  ];
  it.each(cases)('%j ignores node_modules: %s', (text, ignored) => {
    expect(ignoresNodeModules(text)).toBe(ignored);
  });

  it('agrees with git check-ignore on each case', async () => {
    const dir = await tempDir('runplan-gitignore-');
    await run('git', ['init', '-q', dir]);
    for (const [text] of cases) {
      if (text === undefined) continue;
      await writeFile(join(dir, '.gitignore'), text);
      // Exit status 0: git ignores at least one of them.
      const byGit = await run('git', ['-C', dir, 'check-ignore', '--no-index', 'node_modules/', 'node_modules/a-dependency/package.json']).then(
        () => true,
        (error: { code?: number }) => (error.code === 1 ? false : Promise.reject(error)),
      );
      expect({ text, ignored: ignoresNodeModules(text) }).toEqual({ text, ignored: byGit });
    }
  });
});

describe('node_modules cache key', () => {
  const input: DependencyKeyInput = {
    pkg: { dependencies: { ms: '2.1.3' }, scripts: { start: 'node a.js' } },
    lockfile: { name: 'package-lock.json', text: '{}' },
    nodeVersion: '24.21.0',
    npmVersion: '12.2.0',
    tool: 'npm',
    toolVersion: undefined,
    installDev: true,
    config: [''],
  };
  it('changes with every input that changes the install, and with nothing else', () => {
    const key = dependencyCacheKey(input);
    expect(dependencyCacheKey({ ...input, pkg: { ...input.pkg, scripts: { start: 'node b.js' } } })).toBe(key);
    for (const changed of [
      { lockfile: { name: 'package-lock.json', text: '{ }' } },
      { nodeVersion: '22.23.3' },
      { npmVersion: '11.6.0' },
      { tool: 'npm-ci' },
      { installDev: false },
      { config: ['registry=http://x/'] },
      { pkg: { ...input.pkg, dependencies: { ms: '2.1.2' } } },
      { pkg: { ...input.pkg, scripts: { ...input.pkg.scripts, install: 'node build.js' } } },
    ]) {
      expect(dependencyCacheKey({ ...input, ...changed }), JSON.stringify(changed)).not.toBe(key);
    }
  });
});
