import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NATIVE_MODULES_SCRIPT, NATIVE_UNBUILT_MARK } from '../../buildpacks/node/build-checks.js';
import { explainFailure } from '../../src/process/command-step.js';
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

  it('passes with no node_modules at all (no dependencies, Yarn PnP)', async () => {
    expect(check(await tree({ 'package.json': {} })).status).toBe(0);
  });

  it('does not contain its own mark, which an image build echoes with the script', () => {
    expect(NATIVE_MODULES_SCRIPT).not.toContain(NATIVE_UNBUILT_MARK);
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
    // The application's own setting stays.
    const { plan: own } = await plan({ 'package.json': '{"main":"a.js"}' }, { NPM_CONFIG_NODEDIR: '/opt/node' });
    expect(own.build.steps.find((s) => s.name === 'install')?.env).not.toHaveProperty('npm_config_nodedir');
    expect(own.processes[0]?.env).not.toHaveProperty('npm_package_config_node_gyp_nodedir');
  });
});
