import { execFile } from 'node:child_process';
import { readFile, realpath, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { ROOT, TestHost } from './helpers/test-host.js';

const run = promisify(execFile);
const BIN = join(ROOT, 'host', 'bin', 'runplan-host.js');

async function exec(file: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The files of a tarball, without npm's leading package/. */
async function filesOf(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tzf', tarball]);
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''));
}

/**
 * A folder holding better-sqlite3's binary as its installer (prebuild-install, option
 * local-prebuilds) looks for one before it downloads or compiles: the binary npm ci compiled for
 * this clone, for this Node.js. npm i -g then installs it instead of compiling SQLite a second time
 * (minutes on two cores); compiling it is bootstrap's npm ci, on every fresh machine.
 */
async function localPrebuilds(): Promise<NodeJS.ProcessEnv> {
  const module = join(ROOT, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(await readFile(join(module, 'package.json'), 'utf8')) as { version: string };
  const dir = await tempDir('runplan-prebuilds-');
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['-czf', join(dir, name), '-C', module, 'build/Release/better_sqlite3.node']);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

/**
 * runplan-host as an operator gets it: linked by npm in a clone (npx runplan-host), run
 * through a symbolic link (the way npm links a bin, where it used to do nothing and exit 0),
 * and installed from the packed tarballs with `npm i -g`, whose runplan-host inits, serves
 * and deploys a pushed application. And serve's own environment: nothing of the shell that
 * started it, but the variables it keeps.
 */
describe('runplan-host as a command', () => {
  it('is linked by npm ci in a clone: npx runplan-host runs it, from node_modules/.bin', async () => {
    expect(await realpath(join(ROOT, 'node_modules', '.bin', 'runplan-host'))).toBe(BIN);
    // --no: npx must not look for a package of that name in the registry.
    const help = await exec('npx', ['--no', '--', 'runplan-host', '--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('runplan-host init');
  });

  it('runs its command whatever path started it (a link to its bin, a link to dist/cli.js), and a failure is one', async () => {
    const dir = await tempDir('runplan-host-links-');
    const nothing = join(dir, 'no-host');
    for (const [name, target] of [
      ['through-bin', BIN],
      ['through-dist', join(ROOT, 'host', 'dist', 'cli.js')],
    ] as const) {
      await symlink(target, join(dir, name));
      const r = await exec(join(dir, name), ['status', '--json', '--data', nothing]);
      expect({ name, code: r.code }).toEqual({ name, code: 2 });
      expect((JSON.parse(r.stdout) as { error: { code: string } }).error.code).toBe('RUNPLAN_HOST_E_HOST_NOT_INITIALISED');
    }
  });

  it('starts serve in a clean environment: a variable of the shell that started it never reaches serve, npm_config_* and tokens neither', async () => {
    const host = await TestHost.create();
    try {
      const marker = `marker-${Date.now()}`;
      const token = ['npm', 'secret', 'e1b2c3'].join('_');
      await host.serve({ shell: { ...process.env, OPERATOR_MARKER: marker, npm_config_nodedir: '/nowhere', NPM_TOKEN: token, RUNPLAN_KEPT_MARKER: 'kept' } });
      expect(host.serveOutput).toMatch(/==> serve starts in a clean environment: \d+ variable\(s\) of the one it was given are left out/);
      // The serve that runs the host is the one in serve.pid: started again by the one the shell started.
      const { pid } = JSON.parse(await readFile(join(host.data, 'run', 'serve.pid'), 'utf8')) as { pid: number };
      expect(pid).not.toBe(host.servePid);
      const environment = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0').filter(Boolean);
      const names = environment.map((v) => v.slice(0, v.indexOf('=')));
      expect(environment.join('\n')).not.toContain(marker);
      expect(environment.join('\n')).not.toContain(token);
      expect(names.filter((n) => /^npm_/i.test(n))).toEqual([]);
      expect(names).toContain('PATH');
      expect(environment).toContain('RUNPLAN_KEPT_MARKER=kept');
      // SIGTERM to the one the shell started reaches serve: both stop, and nothing is left.
      expect(await host.stop()).toBe(0);
      expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      await host.dispose();
    }
  }, 120_000);

  it('packs into two tarballs that npm i -g installs; the installed runplan-host takes over, as an upgrade does, what a serve of the clone left serving, and deploys a push', async () => {
    const out = await tempDir('runplan-tarballs-');
    const packed = await exec(process.execPath, [join(ROOT, 'scripts', 'pack.mjs'), '--out', out]);
    expect(packed.code, packed.stdout + packed.stderr).toBe(0);
    const [sdk, hostTarball] = packed.stdout.trim().split('\n').slice(-2) as [string, string];
    const version = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(sdk).toBe(join(out, `runplan-${version}.tgz`));
    expect(hostTarball).toBe(join(out, `runplan-host-${version}.tgz`));
    expect(await filesOf(sdk)).toEqual(expect.arrayContaining(['package.json', 'dist/cli.js', 'dist/index.js', 'docs/plan.schema.json']));
    const hostFiles = await filesOf(hostTarball);
    expect(hostFiles).toEqual(expect.arrayContaining(['package.json', 'bin/runplan-host.js', 'dist/cli.js', 'dist/git-program.cjs', 'LICENSE']));
    expect(hostFiles.filter((f) => /^(src|test)\//.test(f))).toEqual([]);
    // The workspace's "file:.." becomes the version packed beside it.
    const { stdout: manifest } = await run('tar', ['-xzOf', hostTarball, 'package/package.json']);
    expect((JSON.parse(manifest) as { dependencies: Record<string, string> }).dependencies.runplan).toBe(version);

    // As on a machine without the repository: both tarballs in one npm i -g (here into a prefix of the test's own).
    const prefix = await tempDir('runplan-global-');
    // @ts-expect-error: plain ES module without type declarations
    const { nodeHeaders } = await import('../../scripts/bootstrap.mjs');
    const installed = await exec('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', sdk, hostTarball], {
      env: { ...process.env, npm_config_nodedir: await nodeHeaders(), ...(await localPrebuilds()) },
    });
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    const program = join(prefix, 'bin', 'runplan-host');
    expect(await realpath(program)).toBe(join(prefix, 'lib', 'node_modules', 'runplan-host', 'bin', 'runplan-host.js'));

    // The clone's runplan-host serves first, as the program before an upgrade.
    const host = await TestHost.create();
    try {
      await host.serve({ keepApps: true });
      const key = await host.key('dev', 'acme');
      const app = await host.json<{ id: string; gitRemote: string }>(['create', '--type', 'node', 'web', '--region', 'par', '--org', 'acme']);
      const repo = await host.repository('node/express');
      await host.git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
      const pushed = await host.push(repo, 'runplan', key);
      expect(pushed.code, pushed.output).toBe(0);
      expect(pushed.output).toContain('==> release 1 serves');
      // The upgrade (docs/host.md, "Upgrading the host"): serve stopped, the installed program started on the same data folder.
      const asking = host.keepAsking(app.id);
      expect(await host.stop()).toBe(0);
      host.useProgram([program]);
      await host.serve({ keepApps: true });
      const { sent, failed } = await asking.stop();
      expect(failed, `${failed.length} of ${sent} requests failed`).toEqual([]);
      expect(host.serveOutput).toMatch(/==> web: release 1 taken over as it runs/);
      expect((await host.get(app.id, '/')).json()).toMatchObject({ app: 'express' });
      await host.writeFile(repo, 'UPGRADED', 'after the upgrade\n');
      await host.commit(repo, 'after the upgrade');
      const again = await host.push(repo, 'runplan', key);
      expect(again.code, again.output).toBe(0);
      expect(again.output).toContain('==> release 2 serves');
    } finally {
      await host.dispose();
    }
  }, 1_200_000);
});
