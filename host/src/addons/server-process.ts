import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { HostErrors } from '../errors.js';

const execFileAsync = promisify(execFile);

/** The system account a server runs as. */
export interface ServerAccount {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/**
 * The account to run a server as: PostgreSQL refuses to run as root, and a database or Redis should not
 * hold root's rights anyway, so a host running as root runs them as the account Debian's package made
 * (`postgres`, `redis`); a host running as an ordinary user runs them as itself (undefined).
 */
export async function serverAccount(name: string): Promise<ServerAccount | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const [uid, gid] = await Promise.all([execFileAsync('id', ['-u', name]), execFileAsync('id', ['-g', name])]);
    return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch (error) {
    throw HostErrors.ADDON_SERVER_FAILED.create({
      message: `the system account ${name} does not exist; the add-on server runs as it`,
      fix: `Install the Debian package that makes it (apt-get install ${name === 'postgres' ? 'postgresql' : 'redis-server'}).`,
      details: { account: name },
      cause: error,
    });
  }
}

/**
 * An account of the host's own for servers no Debian package makes an account for
 * (the storage add-ons'): made with useradd --system when missing, no login shell,
 * no home. Undefined when the host does not run as root (it runs them as itself).
 */
export async function ensureServerAccount(name: string): Promise<ServerAccount | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const exists = await execFileAsync('id', ['-u', name]).then(
    () => true,
    () => false,
  );
  if (!exists) {
    try {
      await execFileAsync('useradd', ['--system', '--user-group', '--shell', '/usr/sbin/nologin', '--home-dir', '/nonexistent', '--no-create-home', name]);
    } catch (error) {
      throw HostErrors.ADDON_SERVER_FAILED.create({
        message: `the system account ${name} could not be made with useradd: ${String((error as { stderr?: string }).stderr ?? (error as Error).message).trim()}`,
        fix: `Run runplan-host as root on a system with useradd (package passwd), or make the account yourself (useradd --system ${name}).`,
        details: { account: name },
        cause: error,
      });
    }
  }
  return serverAccount(name);
}

export interface StartServerOptions {
  /** What it is, for messages: "PostgreSQL", "Redis add-on addon_…". */
  readonly what: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly account: ServerAccount | undefined;
  /** Its stdout and stderr are appended here; the last lines are quoted when it fails to start. */
  readonly logFile: string;
  /** True once it answers. */
  readonly ready: () => Promise<boolean>;
  /** How often ready() is asked, and how long to wait in all. */
  readonly pollMs?: number;
  readonly timeoutMs?: number;
  /** The signal that makes it shut down cleanly (PostgreSQL: SIGINT, its fast shutdown). */
  readonly stopSignal?: NodeJS.Signals;
}

/** A server process the host started, stopped by its PID. */
export class ServerProcess {
  private constructor(
    private readonly child: ChildProcess,
    private readonly exited: Promise<void>,
    private readonly stopSignal: NodeJS.Signals,
  ) {}

  get pid(): number {
    return this.child.pid as number;
  }

  static async start(options: StartServerOptions): Promise<ServerProcess> {
    const log = openSync(options.logFile, 'a', 0o600);
    let child: ChildProcess;
    try {
      child = spawn(options.command, options.args, {
        cwd: options.cwd,
        stdio: ['ignore', log, log],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
        ...(options.account ? { uid: options.account.uid, gid: options.account.gid } : {}),
      });
    } finally {
      closeSync(log);
    }
    let exitedEarly: string | undefined;
    const exited = new Promise<void>((resolve) => {
      child.once('error', (error) => {
        exitedEarly = error.message;
        resolve();
      });
      child.once('exit', (code, signal) => {
        exitedEarly = `exited with ${signal ?? `code ${code}`}`;
        resolve();
      });
    });
    const server = new ServerProcess(child, exited, options.stopSignal ?? 'SIGTERM');
    const pollMs = options.pollMs ?? 50;
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    for (;;) {
      if (exitedEarly !== undefined) throw failed(options, exitedEarly);
      // Raced with its exit: a server that died while ready() waits on its port is reported at once.
      if (await Promise.race([options.ready().catch(() => false), exited.then(() => false)])) return server;
      if (Date.now() > deadline) {
        await server.stop();
        throw failed(options, `did not answer within ${options.timeoutMs ?? 30_000} ms`);
      }
      await Promise.race([new Promise((r) => setTimeout(r, pollMs)), exited]);
    }
  }

  /** Asks it to shut down, then kills it if it has not within `graceMs`; resolves once it has exited. */
  async stop(graceMs = 20_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill(this.stopSignal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

function failed(options: StartServerOptions, why: string): Error {
  let tail = '';
  try {
    tail = readFileSync(options.logFile, 'utf8').trimEnd().split('\n').slice(-5).join('\n');
  } catch {}
  return HostErrors.ADDON_SERVER_FAILED.create({
    message: `${options.what} (${options.command}) ${why}${tail ? `; its log ${options.logFile} ends:\n${tail}` : ''}`,
    file: options.logFile,
    details: { what: options.what, command: options.command },
  });
}
