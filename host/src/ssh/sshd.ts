import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type RunningProgram, startProgram } from 'runplan/process';
import { HostErrors } from '../errors.js';
import { accepts } from '../supervision/probes.js';
import { exitWords, type Part, type PartCheck, type PartRun } from '../supervision/supervisor.js';
import { runChecked } from '../programs.js';

export interface SshdOptions {
  /** The folder of sshd's own files: host key, sshd_config, pid file (the data folder's ssh/). */
  readonly dir: string;
  readonly port: number;
  readonly listenAddress: string;
  /** The only account that may log in (the SSH user). */
  readonly user: string;
  readonly authorizedKeysFile: string;
  /** sshd itself (Debian's openssh-server by default). */
  readonly program?: string;
  /** Each line sshd logs (refused logins, errors), for the host's own log; the last lines are kept either way. */
  readonly onLine?: (line: string) => void;
  /** How long start() waits for the port (10 s by default). */
  readonly startTimeoutMs?: number;
}

const KEPT_LINES = 20;

/** One run of sshd: its program, its PID once started and how it ended once it has, and `done` once its pipe closed too. */
interface SshdRun {
  readonly program: RunningProgram;
  readonly state: { pid?: number; exitedAs?: string };
  readonly done: Promise<void>;
}
/** Characters a path or name may have in sshd_config: no spaces or quotes (its word splitting) and no `%` (AuthorizedKeysFile expands %-tokens). */
const CONFIG_SAFE = /^[A-Za-z0-9_./:@+-]+$/;

/**
 * The host's own OpenSSH server, for git push only: its own config, host key
 * and pid file in `dir`, nothing of the machine's sshd. It logs in only the
 * SSH user, by key, and authorized_keys gives every key a forced command.
 */
export class Sshd implements Part {
  readonly id = 'sshd';
  readonly name = 'sshd';
  readonly configFile: string;
  readonly hostKeyFile: string;
  readonly pidFile: string;
  /** The running listener: its program, its PID once started, and how it ended once it has. */
  private child: SshdRun | undefined;
  private exited: Promise<string> | undefined;
  private readonly output: string[] = [];

  constructor(private readonly opts: SshdOptions) {
    this.configFile = join(opts.dir, 'sshd_config');
    this.hostKeyFile = join(opts.dir, 'ssh_host_ed25519_key');
    this.pidFile = join(opts.dir, 'sshd.pid');
  }

  get program(): string {
    return this.opts.program ?? '/usr/sbin/sshd';
  }

  /** The host key's public half (`ssh-ed25519 AAAA…`), once start() made it. */
  get publicHostKeyFile(): string {
    return `${this.hostKeyFile}.pub`;
  }

  /** The host key as a known_hosts line needs it (`ssh-ed25519 AAAA…`), once start() made it. */
  async publicHostKey(): Promise<string> {
    return (await readFile(this.publicHostKeyFile, 'utf8')).trim().split(' ').slice(0, 2).join(' ');
  }

  /** The last lines sshd wrote (its log: refused logins, errors). */
  recentOutput(): string {
    return this.output.join('\n');
  }

  /** Starts sshd (again, after it died) and resolves once it listens; the run's `ended` says how it ended. */
  async start(): Promise<PartRun> {
    if (this.child !== undefined && this.exited !== undefined && this.child.state.exitedAs === undefined) return { pid: this.child.state.pid, ended: this.exited };
    const { dir, port, listenAddress, user, authorizedKeysFile } = this.opts;
    for (const [what, value] of [
      ['the data folder path', dir],
      ['the authorized_keys path', authorizedKeysFile],
      ['the listen address', listenAddress],
      ['the SSH user', user],
    ] as const) {
      if (!CONFIG_SAFE.test(value)) {
        throw this.failure(`${what} ${JSON.stringify(value)} holds characters sshd_config cannot take (spaces, quotes, %)`, undefined, 'Use a data folder path of letters, digits and . _ - / only.');
      }
    }
    if (!existsSync(this.program)) throw this.failure(`${this.program} does not exist`);
    await mkdir(dir, { recursive: true, mode: 0o755 });
    if (!existsSync(this.hostKeyFile)) {
      await this.tool('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'runplan-host', '-f', this.hostKeyFile]);
    }
    await writeFile(this.configFile, this.config(), { mode: 0o644 });
    await chmod(this.configFile, 0o644);
    // sshd's privilege separation folder, which Debian's own service makes at boot.
    await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
    await this.tool(this.program, ['-t', '-f', this.configFile]);
    await rm(this.pidFile, { force: true });

    // Read to the end, always, line by line: sshd (and each connection's process, which may outlive it) logs to its
    // stderr, a pipe that must never fill. It is left running if the host's process dies; stop() ends it by its PID.
    let settle: (why: string) => void = () => undefined;
    const exited = new Promise<string>((resolve) => {
      settle = resolve;
    });
    const state: { pid?: number; exitedAs?: string } = {};
    const ended = (why: string) => {
      state.exitedAs ??= why;
      settle(why);
    };
    const program = startProgram(this.program, ['-D', '-e', '-f', this.configFile], {
      timeoutMs: 0,
      keepRunningOnExit: true,
      onStart: (pid) => {
        state.pid = pid;
      },
      // At its exit, not once the pipe closes: a connection's process may hold it longer.
      onExit: (code, signal) => ended(exitWords(code, signal)),
      onLine: (line, stream) => {
        if (stream !== 'stderr') return;
        this.output.push(line);
        this.opts.onLine?.(line);
        this.output.splice(0, Math.max(0, this.output.length - KEPT_LINES));
      },
    });
    const done = program.done.then((outcome) => {
      if (outcome.startError !== undefined) ended(`could not be run: spawn ${this.program} ${outcome.startError}`);
    });
    const child: SshdRun = { program, state, done };
    this.child = child;
    this.exited = exited;
    const deadline = Date.now() + (this.opts.startTimeoutMs ?? 10_000);
    for (;;) {
      // sshd writes its pid file once its sockets listen: a port that accepts before that may be another program's.
      if ((await pidFileHolds(this.pidFile, child.state.pid)) && (await accepts(listenAddress, port))) return { pid: child.state.pid, ended: exited };
      const failed = child.state.exitedAs !== undefined;
      if (failed || Date.now() > deadline) {
        await this.stop();
        // Its last words (why it stopped) may still be in the pipe.
        await Promise.race([done, delay(1_000)]);
        throw this.failure(failed ? `sshd stopped before it listened on ${listenAddress}:${port}` : `sshd did not listen on ${listenAddress}:${port} in time`, startFailure(child.state.exitedAs));
      }
      await delay(50);
    }
  }

  /** Whether sshd serves: its port accepts a connection and greets it as an SSH server does. */
  async check(): Promise<PartCheck> {
    const { listenAddress, port } = this.opts;
    const up = await accepts(listenAddress, port, 'SSH-');
    return { up, detail: up ? `answers SSH on ${listenAddress}:${port}` : `nothing answers SSH on ${listenAddress}:${port}` };
  }

  /** Stops the listener by its PID. Sessions already open end on their own (OpenSSH gives each its own process and session). */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    if (child.state.exitedAs === undefined) {
      // By its PID (a stop asked for while it is being started is sent once it has started).
      child.program.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([this.exited?.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 5_000)))]);
      clearTimeout(timer);
      if (!stopped) {
        child.program.kill('SIGKILL');
        await this.exited;
      }
    }
    this.child = undefined;
    await rm(this.pidFile, { force: true });
  }

  config(): string {
    const { port, listenAddress, user, authorizedKeysFile } = this.opts;
    return [
      '# Written by runplan-host at each start: the git push server, nothing else.',
      `Port ${port}`,
      `ListenAddress ${listenAddress}`,
      `HostKey ${this.hostKeyFile}`,
      `PidFile ${this.pidFile}`,
      // The keys come from the host's own file through a root-owned program, read at each login: sshd's
      // StrictModes would check every folder above an AuthorizedKeysFile up to the account's home, which
      // refuses a data folder under /tmp unless the account's home is that very folder (an existing
      // `git` account has its own). The file is root's, 0644, rewritten whole at each change.
      'AuthorizedKeysFile none',
      `AuthorizedKeysCommand /usr/bin/cat ${authorizedKeysFile}`,
      `AuthorizedKeysCommandUser ${user}`,
      `AllowUsers ${user}`,
      'AuthenticationMethods publickey',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'HostbasedAuthentication no',
      'PermitRootLogin no',
      'PermitEmptyPasswords no',
      // No PAM: no session modules, motd or lastlog for a forced command (the account's password is `*`, see ssh-user.ts).
      'UsePAM no',
      'StrictModes yes',
      'DisableForwarding yes',
      'AllowTcpForwarding no',
      'AllowStreamLocalForwarding no',
      'AllowAgentForwarding no',
      'X11Forwarding no',
      'PermitTunnel no',
      'GatewayPorts no',
      'PermitTTY no',
      'PermitUserRC no',
      'PermitUserEnvironment no',
      'PrintMotd no',
      'PrintLastLog no',
      // Per connection, nothing sshd does not need: no reverse lookup of the client (OpenSSH's default
      // since 6.8, said here so that no build's default changes it), and no compression of what git
      // sends already compressed (its packs) when a client asks for it. Neither touches who may log in
      // or what runs. The key exchange, ciphers and sshd's re-exec per connection stay OpenSSH's.
      'UseDNS no',
      'Compression no',
      // No Subsystem line: no sftp.
      'MaxAuthTries 6',
      'LoginGraceTime 30',
      '',
    ].join('\n');
  }

  private async tool(program: string, args: string[]): Promise<void> {
    try {
      await runChecked(program, args);
    } catch (cause) {
      const output = String((cause as { stderr?: string }).stderr ?? '').trim() || String((cause as Error).message);
      throw this.failure(`${program} ${args[0] === '-t' ? 'refused its configuration' : 'failed'}: ${output.split('\n').slice(-5).join(' | ')}`, cause);
    }
  }

  private failure(message: string, cause?: unknown, fix?: string) {
    const output = this.output.filter((line) => line.trim() !== '').slice(-5);
    return HostErrors.HOST_PART_FAILED.create({
      message: `sshd: ${message}${output.length > 0 ? ` (its last lines: ${output.join(' | ')})` : ''}`,
      file: this.configFile,
      ...(fix === undefined ? {} : { fix }),
      ...(cause === undefined ? {} : { cause }),
    });
  }
}

/** The error of an sshd that could not be run at all, as the failure's cause. */
function startFailure(exitedAs: string | undefined): Error | undefined {
  return exitedAs?.startsWith('could not be run: ') ? new Error(exitedAs.slice('could not be run: '.length)) : undefined;
}

async function pidFileHolds(file: string, pid: number | undefined): Promise<boolean> {
  try {
    return pid !== undefined && Number((await readFile(file, 'utf8')).trim()) === pid;
  } catch {
    return false;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
