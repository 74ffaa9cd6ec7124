import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startProgram } from 'runplan/process';
import { HostErrors } from '../errors.js';
import { signalByIdentity, stopByIdentity, watchAdopted } from '../supervision/adopted-process.js';
import { liveProcessOf, liveProcessOfPidFile, removeIdentityFile, writeIdentityFile } from '../supervision/identity-file.js';
import { logEnd, logTail } from '../supervision/log-tail.js';
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
  /** How long start() waits for the port (10 s by default). */
  readonly startTimeoutMs?: number;
  /** What sshd's part tells the host's log: an sshd adopted, or replaced, and why. */
  readonly log?: (line: string) => void;
}

/** One run of sshd: started by this serve (its child), or adopted from an earlier one (found by its identity). */
interface SshdRun {
  readonly pid: number | undefined;
  /** How it ended, once it has (a started one's exit is known at once; an adopted one's when the poll sees it gone). */
  readonly state: { exitedAs?: string };
  readonly ended: Promise<string>;
  kill(signal: NodeJS.Signals): void;
  letGo(): void;
  /** Where this run's lines begin in the log file. */
  readonly logOffset: number;
}
/** Characters a path or name may have in sshd_config: no spaces or quotes (its word splitting) and no `%` (AuthorizedKeysFile expands %-tokens). */
const CONFIG_SAFE = /^[A-Za-z0-9_./:@+-]+$/;

/**
 * The host's own OpenSSH server, for git push only: its own config, host key
 * and pid file in `dir`, nothing of the machine's sshd. It logs in only the
 * SSH user, by key, and authorized_keys gives every key a forced command.
 * It outlives serve (its log is a file, not a pipe of serve's): the next serve
 * adopts it when it runs the very configuration that serve would write.
 */
export class Sshd implements Part {
  readonly id = 'sshd';
  readonly name = 'sshd';
  readonly configFile: string;
  readonly hostKeyFile: string;
  readonly pidFile: string;
  /** Its identity (PID, start time, boot), beside the pid file: the next serve finds that very sshd again. */
  readonly identityFile: string;
  /** sshd's log (-e: what it would send to syslog, written to its standard error, this file). */
  readonly logFile: string;
  private run: SshdRun | undefined;

  constructor(private readonly opts: SshdOptions) {
    this.configFile = join(opts.dir, 'sshd_config');
    this.hostKeyFile = join(opts.dir, 'ssh_host_ed25519_key');
    this.pidFile = join(opts.dir, 'sshd.pid');
    this.identityFile = join(opts.dir, 'sshd.identity');
    this.logFile = join(opts.dir, 'sshd.log');
  }

  get program(): string {
    return this.opts.program ?? '/usr/sbin/sshd';
  }

  /** The PID of the sshd this part holds, if any. */
  get pid(): number | undefined {
    return this.run?.pid;
  }

  /** The host key's public half (`ssh-ed25519 AAAA…`), once start() made it. */
  get publicHostKeyFile(): string {
    return `${this.hostKeyFile}.pub`;
  }

  /** The host key as a known_hosts line needs it (`ssh-ed25519 AAAA…`), once start() made it. */
  async publicHostKey(): Promise<string> {
    return (await readFile(this.publicHostKeyFile, 'utf8')).trim().split(' ').slice(0, 2).join(' ');
  }

  /** Starts sshd (again, after it died), or adopts the one an earlier serve left running, and resolves once it listens. */
  async start(): Promise<PartRun> {
    if (this.run !== undefined && this.run.state.exitedAs === undefined) return { pid: this.run.pid, ended: this.run.ended };
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
    const adopted = await this.adoptLeftover();
    if (adopted !== undefined) return adopted;
    if (!existsSync(this.hostKeyFile)) {
      await this.tool('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'runplan-host', '-f', this.hostKeyFile]);
    }
    await writeFile(this.configFile, this.config(), { mode: 0o644 });
    await chmod(this.configFile, 0o644);
    // sshd's privilege separation folder, which Debian's own service makes at boot.
    await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
    await this.tool(this.program, ['-t', '-f', this.configFile]);
    await rm(this.pidFile, { force: true });

    const run = this.startRun();
    this.run = run;
    const deadline = Date.now() + (this.opts.startTimeoutMs ?? 10_000);
    let identified = false;
    for (;;) {
      // Written as soon as it has a PID: a serve that dies from now on leaves an sshd the next one finds again.
      if (!identified && run.pid !== undefined) identified = (await writeIdentityFile(this.identityFile, run.pid)) !== undefined;
      // sshd writes its pid file once its sockets listen: a port that accepts before that may be another program's.
      if (identified && (await pidFileHolds(this.pidFile, run.pid)) && (await accepts(listenAddress, port))) return { pid: run.pid, ended: run.ended };
      const failed = run.state.exitedAs !== undefined;
      if (failed || Date.now() > deadline) {
        await this.stop();
        throw await this.failureWithLog(
          failed ? `sshd stopped before it listened on ${listenAddress}:${port}` : `sshd did not listen on ${listenAddress}:${port} in time`,
          startFailure(run.state.exitedAs),
          run.logOffset,
        );
      }
      await delay(50);
    }
  }

  /**
   * Its standard error (-e: its log) goes to a file it writes itself, never a pipe of serve's: sshd and each
   * connection's process outlive serve, and must never write into a pipe nobody reads. It runs in a session of
   * its own, left running if the host's process ends; stop() ends it by its PID.
   */
  private startRun(): SshdRun {
    const state: { pid?: number; exitedAs?: string } = {};
    let settle: (why: string) => void = () => undefined;
    const ended = new Promise<string>((resolve) => {
      settle = resolve;
    });
    const end = (why: string) => {
      state.exitedAs ??= why;
      settle(why);
    };
    const logOffset = logEnd(this.logFile);
    const program = startProgram(this.program, sshdArguments(this.configFile), {
      timeoutMs: 0,
      keepRunningOnExit: true,
      detached: true,
      outputFile: this.logFile,
      onStart: (pid) => {
        state.pid = pid;
      },
      onExit: (code, signal) => end(exitWords(code, signal)),
    });
    void program.done.then((outcome) => {
      if (outcome.startError !== undefined) end(`could not be run: spawn ${this.program} ${outcome.startError}`);
    });
    return {
      get pid() {
        return state.pid;
      },
      state,
      ended,
      kill: program.kill,
      letGo: () => program.unref(),
      logOffset,
    };
  }

  /**
   * An sshd an earlier serve of this folder left running, found by its identity file (or, from before identity
   * files, its pid file and arguments): adopted when the config file it read is byte for byte the one this serve
   * writes and it answers SSH; stopped by its identity otherwise. A process that is not an sshd of this config
   * file is never signalled.
   */
  private async adoptLeftover(): Promise<PartRun | undefined> {
    const isOurs = (args: readonly string[]) => isSshdOf(args, this.configFile);
    const found = (await liveProcessOf(this.identityFile)) ?? (await liveProcessOfPidFile(this.pidFile, isOurs));
    if (found === undefined || !isOurs(found.args)) {
      await removeIdentityFile(this.identityFile);
      return undefined;
    }
    const { pid } = found.identity;
    const same = (await readFile(this.configFile, 'utf8').catch(() => '')) === this.config();
    const answers = same && (await accepts(this.opts.listenAddress, this.opts.port, 'SSH-'));
    if (same && answers) {
      await writeIdentityFile(this.identityFile, pid);
      const watch = watchAdopted(found.identity);
      const state: { exitedAs?: string } = {};
      const ended = watch.ended.then((why) => {
        state.exitedAs = why;
        return why;
      });
      this.run = { pid, state, ended, kill: (signal) => signalByIdentity(found.identity, signal), letGo: watch.letGo, logOffset: logEnd(this.logFile) };
      this.opts.log?.(`sshd (PID ${pid}) an earlier serve left running is adopted: its configuration is this serve's`);
      return { pid, ended };
    }
    const why = same ? `it does not answer SSH on ${this.opts.listenAddress}:${this.opts.port}` : `its configuration (${this.configFile}) is not the one this serve writes`;
    this.opts.log?.(`sshd (PID ${pid}) an earlier serve left running is stopped, ${why}; a new one is started`);
    await stopByIdentity(found.identity, 5_000);
    await rm(this.pidFile, { force: true });
    await removeIdentityFile(this.identityFile);
    return undefined;
  }

  /** Whether sshd serves: its port accepts a connection and greets it as an SSH server does. */
  async check(): Promise<PartCheck> {
    const { listenAddress, port } = this.opts;
    const up = await accepts(listenAddress, port, 'SSH-');
    return { up, detail: up ? `answers SSH on ${listenAddress}:${port}` : `nothing answers SSH on ${listenAddress}:${port}` };
  }

  /** Stops the listener (by its PID, or by its identity once adopted). Sessions already open end on their own (OpenSSH gives each its own process and session). */
  async stop(): Promise<void> {
    const run = this.run;
    if (run === undefined) return;
    if (run.state.exitedAs === undefined) {
      // A stop asked for while it is being started is sent once it has started.
      run.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([run.ended.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 5_000)))]);
      clearTimeout(timer);
      if (!stopped) {
        run.kill('SIGKILL');
        await run.ended;
      }
    }
    this.run = undefined;
    await rm(this.pidFile, { force: true });
    await removeIdentityFile(this.identityFile);
  }

  /** Lets go of sshd, which keeps serving pushes: no longer watched, and serve may exit; the next serve adopts it. */
  detach(): void {
    const run = this.run;
    this.run = undefined;
    run?.letGo();
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

  private async failureWithLog(message: string, cause: unknown, offset: number): Promise<Error> {
    const output = (await logTail(this.logFile, offset, 5)).split('\n').filter((line) => line.trim() !== '');
    return this.failure(`${message}${output.length > 0 ? ` (its last lines: ${output.join(' | ')})` : ''}`, cause);
  }

  private failure(message: string, cause?: unknown, fix?: string) {
    return HostErrors.HOST_PART_FAILED.create({
      message: `sshd: ${message}`,
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

/** What this part starts sshd with: the adoption of an sshd left running checks these. */
function sshdArguments(configFile: string): string[] {
  return ['-D', '-e', '-f', configFile];
}

/**
 * Whether a process's arguments are those of an sshd this part started on `configFile`. sshd rewrites its
 * process title (`sshd: /usr/sbin/sshd -D -e -f <config> [listener] 0 of 10-100 startups`), so its words
 * are read, not its argv; the config file's path holds no space (CONFIG_SAFE).
 */
function isSshdOf(args: readonly string[], configFile: string): boolean {
  const words = args
    .join(' ')
    .replace(/^sshd: /, '')
    .split(' ');
  return sshdArguments(configFile).every((arg, i) => words[i + 1] === arg);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
