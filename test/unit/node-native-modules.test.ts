import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NATIVE_MODULES_SCRIPT, NATIVE_UNBUILT_MARK, OPTIONAL_SKIPPED_MARK, PREBUILT_MARK } from '../../buildpacks/node/build-checks.js';
import { lockInstallsOldNodeGyp } from '../../buildpacks/node/node-gyp-readers.js';
import { explainFailure } from '../../src/steps/command-step.js';
import { OutputWarnings } from '../../src/process/output-warnings.js';
import type { BuildStep } from '../../src/plan/schema.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';
import { tempDir } from '../helpers/temp.js';

/** Writes files (path → content; a package.json given as an object) under a new directory. */
async function tree(files: Record<string, string | object>): Promise<string> {
  const root = await tempDir();
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return root;
}

/** Runs the check as the plan does (node -e SCRIPT node_modules) in `dir`: its exit status and output. */
function check(dir: string): { status: number; output: string } {
  try {
    const out = execFileSync(process.execPath, ['-e', NATIVE_MODULES_SCRIPT, 'node_modules'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { status: 0, output: out };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { status: e.status, output: `${e.stdout}${e.stderr}` };
  }
}

const plan = (files: Record<string, string>, application: Record<string, string> = {}) =>
  createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: new MemorySource(files), appDir: '/srv/app', env: { application } });

const sqlite = { name: 'better-sqlite3', version: '12.11.1', scripts: { install: 'prebuild-install || node-gyp rebuild --release' } };

describe('the check that every native module was built', () => {
  it('names a package whose install script would compile a binding but left no .node file', async () => {
    const dir = await tree({ 'node_modules/better-sqlite3/package.json': sqlite, 'node_modules/better-sqlite3/binding.gyp': '{}', 'node_modules/ms/package.json': { name: 'ms', version: '2.1.3' } });
    expect(check(dir)).toEqual({ status: 1, output: `${NATIVE_UNBUILT_MARK}better-sqlite3@12.11.1\n` });
  });

  it('passes once the binding is built, wherever the package put it', async () => {
    const dir = await tree({
      'node_modules/better-sqlite3/package.json': sqlite,
      'node_modules/better-sqlite3/binding.gyp': '{}',
      'node_modules/better-sqlite3/build/Release/better_sqlite3.node': 'ELF',
      'node_modules/bcrypt/package.json': { name: 'bcrypt', version: '6.0.0', scripts: { install: 'node-pre-gyp install --fallback-to-build' } },
      'node_modules/bcrypt/binding.gyp': '{}',
      'node_modules/bcrypt/lib/binding/napi-v3/bcrypt_lib.node': 'ELF',
    });
    expect(check(dir)).toMatchObject({ status: 0, output: expect.stringContaining('every native module is built') });
  });

  it("counts npm's implicit node-gyp rebuild (binding.gyp, no install script); not a gypfile: false package, a script that ran and built nothing here, nor one that builds nothing of its own", async () => {
    const dir = await tree({
      'node_modules/old-addon/package.json': { name: 'old-addon', version: '1.0.0' },
      'node_modules/old-addon/binding.gyp': '{}',
      'node_modules/no-gyp/package.json': { name: 'no-gyp', version: '1.0.0', gypfile: false },
      'node_modules/no-gyp/binding.gyp': '{}',
      // Like dtrace-provider: its script ran (node-gyp left build/) and its binding.gyp has no target for Linux.
      'node_modules/dtrace-provider/package.json': { name: 'dtrace-provider', version: '0.8.8', scripts: { install: 'node-gyp rebuild || node suppress-error.js' } },
      'node_modules/dtrace-provider/binding.gyp': '{}',
      'node_modules/dtrace-provider/build/Makefile': '',
      // Like @parcel/watcher: the binary comes in a per-platform package; the script only builds when that is missing.
      'node_modules/@parcel/watcher/package.json': { name: '@parcel/watcher', version: '2.5.1', scripts: { install: 'node scripts/build-from-source.js' } },
      'node_modules/@parcel/watcher/binding.gyp': '{}',
    });
    expect(check(dir)).toEqual({ status: 1, output: `${NATIVE_UNBUILT_MARK}old-addon@1.0.0\n` });
  });

  it("looks into scopes, nested node_modules and pnpm's store, once per package", async () => {
    const addon = (name: string) => ({ name, version: '1.0.0', scripts: { install: 'node-gyp rebuild' } });
    const dir = await tree({
      'node_modules/@scope/native/package.json': addon('@scope/native'),
      'node_modules/@scope/native/binding.gyp': '{}',
      'node_modules/app-dep/package.json': { name: 'app-dep', version: '1.0.0' },
      'node_modules/app-dep/node_modules/nested/package.json': addon('nested'),
      'node_modules/app-dep/node_modules/nested/binding.gyp': '{}',
      'node_modules/.pnpm/stored@1.0.0/node_modules/stored/package.json': addon('stored'),
      'node_modules/.pnpm/stored@1.0.0/node_modules/stored/binding.gyp': '{}',
    });
    await symlink('.pnpm/stored@1.0.0/node_modules/stored', join(dir, 'node_modules/stored'));
    expect(check(dir)).toEqual({ status: 1, output: `${NATIVE_UNBUILT_MARK}@scope/native@1.0.0, nested@1.0.0, stored@1.0.0\n` });
  });

  // Issue 36, item 1: lmdb and msgpackr-extract (Angular's build) failed the check with their prebuilt binaries installed.
  describe('a package whose install script only selects a prebuilt binary (node-gyp-build-optional-packages, node-gyp-build)', () => {
    const platformPackage = (name: string) => `${name.startsWith('@') ? '' : `@${name}/`}${name}-${process.platform}-${process.arch}`;
    const selector = (name: string, version: string, script = 'node-gyp-build-optional-packages') => ({
      [`node_modules/${name}/package.json`]: { name, version, gypfile: true, scripts: { install: script }, optionalDependencies: { [platformPackage(name)]: version } },
      [`node_modules/${name}/binding.gyp`]: '{}',
    });
    const binaries = (name: string, files: string[]) =>
      Object.fromEntries([
        [`node_modules/${platformPackage(name)}/package.json`, { name: platformPackage(name), version: '3.5.6', os: [process.platform], cpu: [process.arch] }],
        ...files.map((f) => [`node_modules/${platformPackage(name)}/${f}`, 'ELF']),
      ]);

    it('is satisfied by the binary its loader finds in the per-platform package of its optional dependencies, and the check says so', async () => {
      const dir = await tree({
        ...selector('lmdb', '3.5.6'),
        ...binaries('lmdb', ['node.napi.musl.node', 'node.napi.glibc.node']),
        ...selector('msgpackr-extract', '3.0.7'),
        ...binaries('msgpackr-extract', [`node.abi${process.versions.modules}.glibc.node`]),
      });
      const result = check(dir);
      expect(result.status).toBe(0);
      expect(result.output).toContain(
        `${PREBUILT_MARK}lmdb@3.5.6 (${platformPackage('lmdb')}/node.napi.glibc.node), msgpackr-extract@3.0.7 (${platformPackage('msgpackr-extract')}/node.abi${process.versions.modules}.glibc.node)`,
      );
      expect(result.output).toContain('every native module is built');
    });

    it("still fails when its loader would find nothing for this system: no per-platform package, or only another libc's or ABI's binary", async () => {
      const dir = await tree({
        ...selector('lmdb', '3.5.6'),
        ...selector('msgpackr-extract', '3.0.7'),
        ...binaries('msgpackr-extract', ['node.napi.musl.node', 'node.abi1.glibc.node']),
      });
      expect(check(dir)).toEqual({ status: 1, output: `${NATIVE_UNBUILT_MARK}lmdb@3.5.6, msgpackr-extract@3.0.7\n` });
    });

    it("reads node-gyp-build's own prebuilds/<platform>-<arch> folder, and a build the script made", async () => {
      const dir = await tree({
        ...selector('bufferutil', '4.0.9', 'node-gyp-build'),
        [`node_modules/bufferutil/prebuilds/${process.platform}-${process.arch}/node.napi.node`]: 'ELF',
        ...selector('only-darwin', '1.0.0', 'node-gyp-build'),
        'node_modules/only-darwin/prebuilds/darwin-x64+arm64/node.napi.node': 'ELF',
        ...selector('compiled', '1.0.0', 'node-gyp-build'),
        'node_modules/compiled/build/Release/compiled.node': 'ELF',
      });
      const result = check(dir);
      expect(result).toMatchObject({ status: 1, output: expect.stringContaining(`${NATIVE_UNBUILT_MARK}only-darwin@1.0.0\n`) });
      expect(result.output).toContain(`${PREBUILT_MARK}bufferutil@4.0.9 (prebuilds/${process.platform}-${process.arch}/node.napi.node)\n`);
    });
  });

  // Issue 36, item 2: npm's own rules for what it leaves out.
  describe('the optional dependencies npm left out', () => {
    const lockOf = (packages: Record<string, object>) => ({ 'package-lock.json': { lockfileVersion: 3, packages } });
    const here = { os: [process.platform], cpu: [process.arch] };

    it('names one an installed package needs, that fits this system, and is missing', async () => {
      const dir = await tree({
        ...lockOf({
          '': { name: 'app', dependencies: { parent: '1.0.0' } },
          'node_modules/parent': { version: '1.0.0', optionalDependencies: { 'broken-optional': '1.0.0' } },
          'node_modules/broken-optional': { version: '1.0.0', optional: true, ...here },
        }),
        'node_modules/parent/package.json': { name: 'parent', version: '1.0.0' },
      });
      expect(check(dir).output).toContain(`${OPTIONAL_SKIPPED_MARK}broken-optional@1.0.0\n`);
    });

    it("says nothing of what only a package left out for another system wants (fsevents' bindings, a wasm32 binding's runtime), nor of os, cpu and libc given as a string", async () => {
      const dir = await tree({
        ...lockOf({
          '': { name: 'app', dependencies: { chokidar: '2.1.8', rolldown: '1.0.0', 'sass-embedded': '1.90.0' } },
          'node_modules/chokidar': { version: '2.1.8', optionalDependencies: { fsevents: '1.2.13' } },
          'node_modules/fsevents': { version: '1.2.13', optional: true, os: ['darwin'], dependencies: { bindings: '^1.5.0', nan: '^2.12.1' } },
          'node_modules/bindings': { version: '1.5.0', optional: true, dependencies: { 'file-uri-to-path': '1.0.0' } },
          'node_modules/file-uri-to-path': { version: '1.0.0', optional: true },
          'node_modules/nan': { version: '2.22.2', optional: true },
          'node_modules/rolldown': { version: '1.0.0', optionalDependencies: { '@rolldown/binding-wasm32-wasi': '1.0.0' } },
          'node_modules/@rolldown/binding-wasm32-wasi': { version: '1.0.0', optional: true, cpu: ['wasm32'], dependencies: { '@napi-rs/wasm-runtime': '^1.0.0' } },
          'node_modules/@napi-rs/wasm-runtime': { version: '1.0.3', optional: true, dependencies: { '@emnapi/core': '^1.4.5', '@emnapi/runtime': '^1.4.5' } },
          'node_modules/@emnapi/core': { version: '1.4.5', optional: true },
          'node_modules/@emnapi/runtime': { version: '1.4.5', optional: true },
          'node_modules/sass-embedded': { version: '1.90.0', optionalDependencies: { 'sass-embedded-linux-musl-x64': '1.90.0', 'sass-embedded-win32-x64': '1.90.0' } },
          'node_modules/sass-embedded-linux-musl-x64': { version: '1.90.0', optional: true, os: 'linux', cpu: 'x64', libc: 'musl' },
          'node_modules/sass-embedded-win32-x64': { version: '1.90.0', optional: true, os: 'win32', cpu: 'x64' },
        }),
        'node_modules/chokidar/package.json': { name: 'chokidar', version: '2.1.8' },
        'node_modules/rolldown/package.json': { name: 'rolldown', version: '1.0.0' },
        'node_modules/sass-embedded/package.json': { name: 'sass-embedded', version: '1.90.0' },
      });
      const result = check(dir);
      expect(result.status).toBe(0);
      expect(result.output).not.toContain(OPTIONAL_SKIPPED_MARK);
    });

    it("resolves as Node.js does (a nested copy first), and counts the application's devDependencies only when they were installed", async () => {
      const dir = await tree({
        ...lockOf({
          '': { name: 'app', dependencies: { a: '1.0.0' }, devDependencies: { 'dev-tool': '1.0.0', 'dev-optional': '1.0.0' } },
          'node_modules/a': { version: '1.0.0', optionalDependencies: { opt: '2.0.0' } },
          'node_modules/a/node_modules/opt': { version: '2.0.0', optional: true },
          'node_modules/opt': { version: '1.0.0', optional: true },
          'node_modules/dev-tool': { version: '1.0.0', dev: true },
          'node_modules/dev-optional': { version: '1.0.0', dev: true, optional: true },
        }),
        'node_modules/a/package.json': { name: 'a', version: '1.0.0' },
        'node_modules/opt/package.json': { name: 'opt', version: '1.0.0' },
      });
      expect(
        check(dir)
          .output.split('\n')
          .filter((l) => l.startsWith(OPTIONAL_SKIPPED_MARK)),
      ).toEqual([`${OPTIONAL_SKIPPED_MARK}opt@2.0.0`]);
      await mkdir(join(dir, 'node_modules/dev-tool'));
      expect(
        check(dir)
          .output.split('\n')
          .filter((l) => l.startsWith(OPTIONAL_SKIPPED_MARK)),
      ).toEqual([`${OPTIONAL_SKIPPED_MARK}dev-optional@1.0.0`, `${OPTIONAL_SKIPPED_MARK}opt@2.0.0`]);
    });
  });

  it('passes with no node_modules at all (no dependencies, Yarn PnP)', async () => {
    expect(check(await tree({ 'package.json': {} })).status).toBe(0);
  });

  it('does not contain its own marks, which an image build echoes with the script', () => {
    for (const mark of [NATIVE_UNBUILT_MARK, OPTIONAL_SKIPPED_MARK, PREBUILT_MARK]) expect(NATIVE_MODULES_SCRIPT).not.toContain(mark);
  });
});

describe('the native-modules step of a Node.js plan', () => {
  const nativeStep = async (pkg: object, env: Record<string, string> = {}, extra: Record<string, string> = {}) => {
    const { plan: p } = await plan({ 'package.json': JSON.stringify({ main: 'a.js', ...pkg }), ...extra }, env);
    return p.build.steps.find((s) => s.name === 'native-modules') as BuildStep;
  };

  it('runs after the install with the installed Node.js, and reports the packages the check named with the fix of the tool', async () => {
    const step = await nativeStep({ engines: { npm: '^12' } });
    expect(step).toMatchObject({ run: { kind: 'exec', argv: ['node', '-e', NATIVE_MODULES_SCRIPT, 'node_modules'] }, pathPrepend: ['.runplan/bin'] });
    const error = explainFailure(step, { notFound: false, exitCode: 1, output: ['some npm line', `${NATIVE_UNBUILT_MARK}better-sqlite3@12.11.1, bcrypt@6.0.0`] });
    expect(error).toMatchObject({
      code: 'RUNPLAN_E_NODE_NATIVE_MODULES_NOT_BUILT',
      file: 'package.json',
      message: expect.stringContaining('the install left native modules unbuilt: better-sqlite3@12.11.1, bcrypt@6.0.0. Their install scripts did not run'),
      fix: expect.stringContaining('npm install-scripts approve'),
    });
  });

  it('does not warn that npm blocked a script that only selects a prebuilt binary: this step judges those by their loader', async () => {
    const { plan: p } = await plan({ 'package.json': JSON.stringify({ main: 'a.js' }) });
    const warnings = new OutputWarnings(p.build.steps.find((s) => s.name === 'install')?.warnOn ?? []);
    for (const line of [
      'npm warn install-scripts 3 packages have install scripts not yet covered by allowScripts:',
      'npm warn install-scripts   lmdb@3.5.6 (install: node-gyp-build-optional-packages)',
      'npm warn install-scripts   msgpackr-extract@3.0.7 (install: node-gyp-build-optional-packages)',
      'npm warn install-scripts   better-sqlite3@12.11.1 (install: prebuild-install || node-gyp rebuild --release)',
    ])
      warnings.push(line);
    expect(warnings.warnings()).toEqual([expect.objectContaining({ code: 'RUNPLAN_W_NODE_INSTALL_SCRIPTS_BLOCKED', message: expect.stringContaining('install scripts of better-sqlite3@12.11.1:') })]);
  });

  it('says how pnpm and bun are told to run the scripts', async () => {
    const fix = async (lockfile: string) => (await nativeStep({}, {}, { [lockfile]: '' })).onFailure?.[0]?.error.fix;
    expect(await fix('pnpm-lock.yaml')).toContain('pnpm approve-builds');
    expect(await fix('bun.lock')).toContain('trustedDependencies');
  });

  it('is not planned for a custom build command, which decides about scripts itself', async () => {
    expect(await nativeStep({}, { CC_NODE_BUILD_TOOL: 'custom', CC_CUSTOM_BUILD_TOOL: 'npm ci --ignore-scripts' })).toBeUndefined();
  });

  it("gives the install, the processes and the application's commands the runtime's own headers for node-gyp", async () => {
    const headers = '${APP_HOME}/.runplan/node';
    const { plan: p } = await plan({ 'package.json': '{"main":"a.js"}' }, { CC_POST_BUILD_HOOK: 'npm rebuild' });
    // npm 11 (which Node.js 24 ships) warns about npm_config_nodedir on every call: the commands get the name its node-gyp also reads.
    expect(p.build.steps.find((s) => s.name === 'install')?.env).toMatchObject({ npm_config_nodedir: headers, npm_package_config_node_gyp_nodedir: headers });
    expect(p.build.steps.find((s) => s.name === 'post-build-hook')?.env).toMatchObject({ npm_package_config_node_gyp_nodedir: headers });
    expect(p.build.steps.find((s) => s.name === 'post-build-hook')?.env.npm_config_nodedir).toBeUndefined();
    expect(p.processes[0]?.env).toMatchObject({ npm_package_config_node_gyp_nodedir: headers });
    // npm 10 does not warn: one name everywhere.
    const { plan: older } = await plan({ 'package.json': '{"main":"a.js","engines":{"node":"22.x"}}' });
    expect(older.processes[0]?.env).toMatchObject({ npm_config_nodedir: headers });
    // npm's lock file names no node-gyp older than 11: the install gets only the name npm does not warn about.
    const lock = (nodeGyp?: string) =>
      JSON.stringify({ lockfileVersion: 3, packages: { '': { name: 'a' }, ...(nodeGyp ? { 'node_modules/sqlite3/node_modules/node-gyp': { version: nodeGyp } } : {}) } });
    const { plan: locked } = await plan({ 'package.json': '{"main":"a.js"}', 'package-lock.json': lock() });
    expect(locked.build.steps.find((s) => s.name === 'install')?.env).toMatchObject({ npm_package_config_node_gyp_nodedir: headers });
    expect(locked.build.steps.find((s) => s.name === 'install')?.env).not.toHaveProperty('npm_config_nodedir');
    const { plan: oldGyp } = await plan({ 'package.json': '{"main":"a.js"}', 'package-lock.json': lock('8.4.1') });
    expect(oldGyp.build.steps.find((s) => s.name === 'install')?.env).toMatchObject({ npm_config_nodedir: headers, npm_package_config_node_gyp_nodedir: headers });
    // The application's own setting stays.
    const { plan: own } = await plan({ 'package.json': '{"main":"a.js"}' }, { NPM_CONFIG_NODEDIR: '/opt/node' });
    expect(own.build.steps.find((s) => s.name === 'install')?.env).not.toHaveProperty('npm_config_nodedir');
    expect(own.processes[0]?.env).not.toHaveProperty('npm_package_config_node_gyp_nodedir');
  });
});

describe('lockInstallsOldNodeGyp', () => {
  it('says whether an npm lock file installs a node-gyp that reads only npm_config_nodedir', () => {
    expect(lockInstallsOldNodeGyp(JSON.stringify({ lockfileVersion: 3, packages: { '': {}, 'node_modules/express': { version: '5.1.0' } } }))).toBe(false);
    expect(lockInstallsOldNodeGyp(JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/node-gyp': { version: '11.5.0' } } }))).toBe(false);
    expect(lockInstallsOldNodeGyp(JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/a/node_modules/node-gyp': { version: '10.3.1' } } }))).toBe(true);
    // A package whose name only ends in node-gyp is another package.
    expect(lockInstallsOldNodeGyp(JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/@electron/node-gyp': { version: '10.2.0' } } }))).toBe(false);
    // Lock file version 1: the nested tree.
    expect(lockInstallsOldNodeGyp(JSON.stringify({ lockfileVersion: 1, dependencies: { sqlite3: { version: '5.1.7', dependencies: { 'node-gyp': { version: '8.4.1' } } } } }))).toBe(true);
    expect(lockInstallsOldNodeGyp(JSON.stringify({ lockfileVersion: 1, dependencies: { express: { version: '4.21.2' } } }))).toBe(false);
    // Nothing to ask, or nothing readable: npm may resolve such a dependency.
    expect(lockInstallsOldNodeGyp(undefined)).toBe(true);
    expect(lockInstallsOldNodeGyp('{ not json')).toBe(true);
    expect(lockInstallsOldNodeGyp('[]')).toBe(true);
  });
});
