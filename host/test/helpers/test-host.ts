import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { AppDisk } from 'runplan';
import { freePort } from '../../../test/helpers/ports.js';
import { tempDir } from '../../../test/helpers/temp.js';
import { removeAddonAccountsUnder } from './addon-accounts.js';
import { cleanEnvironment } from '../../src/clean-environment.js';
import { removeSshUser } from '../../src/ssh/ssh-user.js';
import { appUserName } from '../../src/tenancy/app-users.js';

const run = promisify(execFile);
export const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const CLI = join(ROOT, 'host', 'dist', 'cli.js');

/** An application's default name on a test host (domain localhost): `app-<uuid>.localhost`. */
export function appHostOf(appId: string): string {
  return `app-${appId.replace(/^app_/, '')}.localhost`;
}

export interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string | string[] | undefined>;
  json<T = Record<string, unknown>>(): T;
}

/**
 * A real runplan-host for a test: its own data folder, loopback ports, sshd,
 * Caddy and the serve process, stopped (SIGTERM) by stop(); and a client with a
 * real SSH key, git and HTTPS trusting only the edge's root certificate.
 */
export class TestHost {
  private serveProcess: ChildProcess | undefined;
  /** A serve of this host left its applications running when it stopped: dispose() stops them. */
  private keptApps = false;
  serveOutput = '';

  private constructor(
    readonly data: string,
    readonly ports: { ssh: number; https: number; http: number },
    readonly keyDir: string,
    readonly sshUser: string,
    private readonly userCreated: boolean,
    /** The program and its first arguments: this clone's host/dist/cli.js, or an installed runplan-host. */
    private program: readonly [string, ...string[]],
  ) {}

  /**
   * A host with its own data folder and ports. `sshUser`: the account pushes log
   * in as (default: one of this host's own, so that test files running side by
   * side never share one); an account the test made is removed by dispose(). `program`: another
   * runplan-host than this clone's (an installed one's bin).
   */
  static async create({
    sshUser = `rph-${randomBytes(3).toString('hex')}`,
    initArgs = [],
    program = [process.execPath, CLI],
  }: {
    sshUser?: string;
    initArgs?: readonly string[];
    program?: readonly [string, ...string[]];
  } = {}): Promise<TestHost> {
    const data = join(await tempDir('runplan-host-'), 'data');
    const ports = { ssh: await freePort(), https: await freePort(), http: await freePort() };
    const keyDir = await tempDir('runplan-host-client-');
    const existed = await run('getent', ['passwd', sshUser]).then(
      () => true,
      () => false,
    );
    const host = new TestHost(data, ports, keyDir, sshUser, !existed, program);
    // runplan's cache is the run's shared one, as runplan's own tests use it: Node.js and the npm releases are downloaded once per run, not once per host.
    const init = await host.cli([
      'init',
      '--ssh-port',
      `${ports.ssh}`,
      '--https-port',
      `${ports.https}`,
      '--http-port',
      `${ports.http}`,
      '--ssh-user',
      sshUser,
      '--cache-dir',
      inject('sharedCacheDir'),
      ...initArgs,
    ]);
    if (init.code !== 0) throw new Error(`runplan-host init failed: ${init.stdout}${init.stderr}`);
    return host;
  }

  /**
   * A host restored from `archive` (runplan-host restore) into a new data folder, on ports of its own and with an SSH
   * account of its own, so that it runs beside the host the archive was made of; `args`: more of restore's options;
   * `code`, `output`: what restore said.
   */
  static async restore(
    archive: string,
    { sshUser = `rph-${randomBytes(3).toString('hex')}`, args = [] }: { sshUser?: string; args?: readonly string[] } = {},
  ): Promise<{ host: TestHost; code: number; output: string }> {
    const data = join(await tempDir('runplan-host-restored-'), 'data');
    const ports = { ssh: await freePort(), https: await freePort(), http: await freePort() };
    const existed = await run('getent', ['passwd', sshUser]).then(
      () => true,
      () => false,
    );
    const host = new TestHost(data, ports, await tempDir('runplan-host-client-'), sshUser, !existed, [process.execPath, CLI]);
    const r = await host.cli(['restore', archive, '--ssh-port', `${ports.ssh}`, '--https-port', `${ports.https}`, '--http-port', `${ports.http}`, '--ssh-user', sshUser, ...args]);
    return { host, code: r.code, output: `${r.stdout}${r.stderr}` };
  }

  /** Runs another runplan-host from now on (an upgrade: the installed one after this clone's), on the same data folder. */
  useProgram(program: readonly [string, ...string[]]): void {
    this.program = program;
  }

  /** Stops serve (and what a serve that kept its applications left running), and removes the SSH account if this test made it, and the accounts of the add-ons it left. */
  async dispose(): Promise<void> {
    await this.stop();
    if (this.keptApps) await this.cli(['stop-apps']);
    if (this.userCreated) await removeSshUser(this.sshUser);
    await removeAddonAccountsUnder(join(this.data, 'addons'));
    await removeAppUsersOf(join(this.data, 'git'));
    // What a serve that failed to stop left mounted: the temporary folder's removal must not meet a mount.
    for (const name of await readdir(join(this.data, 'disks')).catch(() => [])) if (name.endsWith('.ext4')) await AppDisk.unmount(join(this.data, 'disks', name));
  }

  /** runplan-host with this data folder: exit status and output. */
  async cli(args: string[], options: { cwd?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const [file, ...first] = this.program;
      const { stdout, stderr } = await run(file, [...first, ...args, '--data', this.data], { cwd: options.cwd ?? ROOT, maxBuffer: 64 * 1024 * 1024 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  async json<T = Record<string, unknown>>(args: string[]): Promise<T> {
    const r = await this.cli([...args, '--json']);
    if (r.code !== 0) throw new Error(`runplan-host ${args.join(' ')} exited ${r.code}: ${r.stdout}${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  }

  /**
   * Starts `serve` and waits until it says it serves; `env`: host-level settings for runplan added to its environment
   * (e.g. RUNPLAN_PLAY1_MIRROR). Its environment is the test's as serve keeps it (so that servePid is serve itself);
   * `shell` gives it one as an operator's shell would, which serve leaves for a clean one of its own.
   */
  async serve({ env = {}, shell, keepApps = false }: { env?: Readonly<Record<string, string>>; shell?: NodeJS.ProcessEnv; keepApps?: boolean } = {}): Promise<void> {
    this.serveOutput = '';
    const [file, ...first] = this.program;
    // By default a test's serve takes everything down with it; `keepApps`: as an operator's, the applications go on serving.
    if (keepApps) this.keptApps = true;
    const child = spawn(file, [...first, 'serve', ...(keepApps ? [] : ['--stop-apps-on-exit']), '--data', this.data], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...(shell ?? cleanEnvironment(process.env)), ...env },
    });
    this.serveProcess = child;
    await new Promise<void>((resolveServing, reject) => {
      const onData = (chunk: Buffer) => {
        this.serveOutput += chunk.toString();
        if (this.serveOutput.includes('==> serving')) resolveServing();
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`serve exited ${code}:\n${this.serveOutput}`)));
    });
  }

  /** `signal` to serve (SIGTERM: it stops as it was started to; SIGKILL: a crash); resolves with its exit status once it has exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const child = this.serveProcess;
    if (!child || child.exitCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill(signal);
    const code = await exited;
    this.serveProcess = undefined;
    return code;
  }

  get servePid(): number | undefined {
    return this.serveProcess?.pid;
  }

  /** A new SSH key pair of the client, added to `org` unless told otherwise. */
  /** The uid an application runs as: its own user, made when it was created (host/src/tenancy/app-users.ts). */
  async appUid(appId: string): Promise<number> {
    return Number((await run('id', ['-u', appUserName(appId)])).stdout.trim());
  }

  async key(name: string, org?: string): Promise<string> {
    const file = join(this.keyDir, name);
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${name}@test`, '-f', file]);
    if (org) await this.json(['keys', 'add', org, `${file}.pub`]);
    return file;
  }

  gitEnv(key: string): NodeJS.ProcessEnv {
    return {
      ...process.env,
      GIT_SSH_COMMAND: `ssh -i ${key} -o IdentitiesOnly=yes -o UserKnownHostsFile=${join(this.keyDir, 'known_hosts')} -o StrictHostKeyChecking=accept-new -o BatchMode=yes`,
      GIT_TERMINAL_PROMPT: '0',
    };
  }

  /** A git repository of `fixture` (a folder under fixtures/, or an absolute path such as a prepared copy), copied and committed on master. */
  async repository(fixture: string): Promise<string> {
    const dir = join(await tempDir('runplan-host-repo-'), 'app');
    await cp(isAbsolute(fixture) ? fixture : join(ROOT, 'fixtures', fixture), dir, { recursive: true, filter: (src) => !src.includes('node_modules') });
    await this.git(dir, ['init', '-q', '-b', 'master']);
    await this.commit(dir, 'first');
    return dir;
  }

  async commit(dir: string, message: string): Promise<void> {
    await this.git(dir, ['add', '-A']);
    await this.git(dir, ['-c', 'user.name=test', '-c', 'user.email=test@example.com', 'commit', '-q', '--allow-empty', '-m', message]);
  }

  async git(dir: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; output: string }> {
    try {
      const { stdout, stderr } = await run('git', args, { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 });
      return { code: 0, output: `${stdout}${stderr}` };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  }

  /** `ssh` to the host's git user with `key`, as a person trying a shell or a command would. */
  async ssh(key: string, args: string[]): Promise<{ code: number; output: string }> {
    const options = ['-i', key, '-o', 'IdentitiesOnly=yes', '-o', `UserKnownHostsFile=${join(this.keyDir, 'known_hosts')}`, '-o', 'StrictHostKeyChecking=accept-new', '-o', 'BatchMode=yes'];
    try {
      const { stdout, stderr } = await run('ssh', [...options, '-p', `${this.ports.ssh}`, `${this.sshUser}@127.0.0.1`, ...args], { timeout: 30_000 });
      return { code: 0, output: `${stdout}${stderr}` };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  }

  /** `git push <remote> <refspec>` with `key`. */
  push(dir: string, remote: string, key: string, refspec = 'master'): Promise<{ code: number; output: string }> {
    return this.git(dir, ['push', remote, refspec], this.gitEnv(key));
  }

  get rootCertificate(): string {
    return join(this.data, 'edge', 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');
  }

  /**
   * GET through the edge: HTTPS with the edge's root certificate (or plain HTTP on its other port). `appId`: an
   * application's id (its default name app-<uuid>.localhost is asked), any host name (a custom domain, an old name),
   * or a word of the host's domain (`console` asks console.localhost).
   */
  async get(
    appId: string,
    path: string,
    { plain = false, headers = {}, method = 'GET', body }: { plain?: boolean; headers?: Record<string, string>; method?: string; body?: string } = {},
  ): Promise<Answer> {
    const host = /^app_[0-9a-f-]{36}$/.test(appId) ? appHostOf(appId) : appId.includes('.') ? appId : `${appId}.localhost`;
    const ca = plain ? undefined : await readFile(this.rootCertificate);
    return new Promise((resolveAnswer, reject) => {
      const options = {
        method,
        host: '127.0.0.1',
        port: plain ? this.ports.http : this.ports.https,
        path,
        servername: host,
        headers: { host, ...headers },
        ca,
        agent: false as const,
        timeout: 10_000,
      };
      const req = (plain ? httpRequest : request)(options, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, body, headers: res.headers, json: <T>() => JSON.parse(body) as T }));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(body);
    });
  }

  /**
   * Requests sent one after another, each on a new connection, until stop() is
   * called: how many, which failed (a status other than 200, or no answer), and
   * how many were sent again. A connection the edge reset before any answer is
   * sent again once, as HTTP clients do for a GET (RFC 9110, 9.2.2): Caddy may
   * reset a new connection while it applies a new configuration (its issue 5589).
   */
  keepAsking(appId: string): { stop(): Promise<{ sent: number; failed: string[]; resent: number; releases: Set<string> }> } {
    let running = true;
    const failed: string[] = [];
    const releases = new Set<string>();
    let sent = 0;
    let resent = 0;
    const ask = async () => {
      try {
        return await this.get(appId, '/');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ECONNRESET' && !/socket hang up|disconnected before secure TLS/.test((error as Error).message)) throw error;
        resent += 1;
        return this.get(appId, '/');
      }
    };
    const loop = (async () => {
      while (running) {
        sent += 1;
        try {
          const a = await ask();
          if (a.status !== 200) failed.push(`status ${a.status}`);
          else releases.add(String(a.json<{ release: string | null }>().release));
        } catch (error) {
          failed.push((error as Error).message);
        }
      }
    })();
    return {
      async stop() {
        running = false;
        await loop;
        return { sent, failed, resent, releases };
      },
    };
  }

  async writeFile(dir: string, name: string, text: string): Promise<void> {
    await writeFile(join(dir, name), text);
  }
}

/** Removes the users of the applications of a test host (one repository per application in its git/), made at their creation. */
async function removeAppUsersOf(gitDir: string): Promise<void> {
  const repositories = await readdir(gitDir).catch(() => [] as string[]);
  for (const repository of repositories) {
    const appId = repository.replace(/\.git$/, '');
    if (!/^app_[0-9a-f-]{36}$/.test(appId)) continue;
    const name = appUserName(appId);
    await run('userdel', [name]).catch(() => undefined);
    await run('groupdel', [name]).catch(() => undefined);
  }
}
