import { appendFileSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { type ProcessIdentity, startProgram } from 'runplan/process';
import { signalByIdentity, stopByIdentity, watchAdopted } from '../supervision/adopted-process.js';
import { type FoundProcess, liveProcessOf, liveProcessOfPidFile, writeIdentityFile } from '../supervision/identity-file.js';
import { HostErrors } from '../errors.js';
import { exitWords, type Part, type PartRun, type SupervisedPart, Supervisor } from '../supervision/supervisor.js';
import { runChecked } from '../programs.js';

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
    const [uid, gid] = await Promise.all([runChecked('id', ['-u', name]), runChecked('id', ['-g', name])]);
    return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch (error) {
    throw HostErrors.ADDON_SERVER_FAILED.create({
      message: `the system account ${name} does not exist; the add-on server runs as it`,
      fix: `Install the Debian package that makes it (apt-get install ${PACKAGE_OF_ACCOUNT[name] ?? name}).`,
      details: { account: name },
      cause: error,
    });
  }
}

/** The Debian packages that make each server's account. */
const PACKAGE_OF_ACCOUNT: Readonly<Record<string, string>> = { postgres: 'postgresql', redis: 'redis-server', ceph: '--no-install-recommends ceph-mon ceph-osd radosgw' };

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
  /** The host's supervisor: each death and restart in the host's log too, and the server in `status` (by default one of its own, whose lines go to the server's log only). */
  readonly supervisor?: Supervisor;
  /** Its key in `status --json`, when its name does not make one ("Ceph OSD": ceph-osd). */
  readonly partId?: string;
  /** What `status` says of it, when more than whether ready() answers (Ceph's own health). */
  readonly check?: () => Promise<{ readonly up: boolean; readonly detail: string }>;
}

/** One run of a server: its PID once started, why it exited once it has, and how to signal it. */
interface Run {
  readonly pid: () => number | undefined;
  readonly exited: Promise<string>;
  /** Sends it a signal while it runs (never once it has exited: its PID may be another process's by then). */
  readonly kill: (signal: NodeJS.Signals) => void;
  /** Lets serve's process exit while it runs on (taken over by the next serve). */
  readonly release: () => void;
}

/** Where a server's identity (PID, start time, boot) is kept while it runs: found again by the next serve. */
const identityFile = (options: StartServerOptions) => join(options.cwd, 'server.identity');
/** Where a runplan-host of before identities kept its PID alone. */
const pidFile = (options: StartServerOptions) => join(options.cwd, 'server.pid');

/**
 * A server an earlier serve left running (stopped without its add-ons, killed, upgraded): its identity file
 * (or, from before identities, its pid file) names a live process working in this server's folder (servers
 * rename their process titles, redis-server to its address; each works in its own folder, or below it: Redis
 * in data/). Undefined for a process gone, or a PID another process got since.
 */
async function leftover(options: StartServerOptions): Promise<ProcessIdentity | undefined> {
  const inFolder = (found: FoundProcess | undefined) => {
    if (found === undefined) return false;
    try {
      const cwd = readlinkSync(`/proc/${found.identity.pid}/cwd`);
      return cwd === options.cwd || cwd.startsWith(`${options.cwd}/`);
    } catch {
      return false;
    }
  };
  const found = (await liveProcessOf(identityFile(options))) ?? (await liveProcessOfPidFile(pidFile(options), () => true));
  return inFolder(found) ? found?.identity : undefined;
}

/** The run of a server an earlier serve started: followed by its identity, since it is not this serve's child. */
function adopted(identity: ProcessIdentity): Run {
  const watch = watchAdopted(identity);
  return { pid: () => identity.pid, exited: watch.ended, release: () => watch.letGo(), kill: (signal) => void signalByIdentity(identity, signal) };
}

/** Stops a leftover that cannot be taken over (it does not answer): it holds the port and the data folder. */
async function stopLeftover(options: StartServerOptions, identity: ProcessIdentity): Promise<void> {
  appendFileSync(options.logFile, `runplan-host: ${options.what} left running by an earlier serve (PID ${identity.pid}) does not answer: stopping it first\n`);
  await stopByIdentity(identity, 20_000);
}

function launch(options: StartServerOptions): Run {
  let pid: number | undefined;
  let ended = false;
  // Through runplan's one runner: its output appended to its log by the server itself, left running if the
  // host's process dies (the next serve stops it, stopLeftover), stopped by its PID.
  const program = startProgram(options.command, options.args, {
    cwd: options.cwd,
    outputFile: options.logFile,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
    ...(options.account ? { uid: options.account.uid, gid: options.account.gid } : {}),
    timeoutMs: 0,
    keepRunningOnExit: true,
    onStart: (started) => {
      pid = started;
      void writeIdentityFile(identityFile(options), started);
    },
  });
  // Settles as it exits: nothing of its holds a pipe of the host's.
  const exited = program.done.then((outcome) => {
    ended = true;
    return outcome.startError !== undefined ? `could not be run: spawn ${options.command} ${outcome.startError}` : exitWords(outcome.exitCode, outcome.signal);
  });
  return { pid: () => pid, exited, kill: (signal) => (ended ? undefined : program.kill(signal)), release: () => program.unref() };
}

/** Until ready() says yes; a run that exits first, or never answers, is reported with the end of its log. */
async function waitReady(run: Run, options: StartServerOptions): Promise<void> {
  let exitedWhy: string | undefined;
  void run.exited.then((why) => {
    exitedWhy = why;
  });
  const pollMs = options.pollMs ?? 50;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (exitedWhy !== undefined) throw failed(options, exitedWhy);
    // Raced with its exit: a server that died while ready() waits on its port is reported at once.
    if (await Promise.race([options.ready().catch(() => false), run.exited.then(() => false)])) return;
    if (Date.now() > deadline) {
      await stopRun(run, options.stopSignal ?? 'SIGTERM', 20_000);
      throw failed(options, `did not answer within ${options.timeoutMs ?? 30_000} ms`);
    }
    await Promise.race([new Promise((r) => setTimeout(r, pollMs)), run.exited]);
  }
}

async function stopRun(run: Run, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  // Nothing is sent once it has exited (kill() knows); `exited` has settled then.
  run.kill(signal);
  const timer = setTimeout(() => run.kill('SIGKILL'), graceMs);
  await run.exited;
  clearTimeout(timer);
}

/**
 * A server process the host started, supervised and stopped by its PID: one that
 * exits unasked (a crash, the OOM killer) is started again by the host's
 * Supervisor, after a back-off that grows with each exit in a row up to its
 * ceiling; each event is written to the server's own log as well as the host's.
 * stop() ends the supervision first.
 */
export class ServerProcess {
  private run: Run | undefined;
  /** A run an earlier serve started, which the first start() takes over instead of launching one. */
  private takeOver: Run | undefined;
  private graceMs = 20_000;
  private supervised: SupervisedPart | undefined;

  private constructor(private readonly options: StartServerOptions) {}

  get pid(): number {
    return this.run?.pid() as number;
  }

  static async start(options: StartServerOptions): Promise<ServerProcess> {
    const server = new ServerProcess(options);
    const left = await leftover(options);
    // One that answers is taken over as it runs: the applications keep their connections to it.
    if (left !== undefined && (await options.ready().catch(() => false))) {
      server.takeOver = adopted(left);
      appendFileSync(options.logFile, `runplan-host: ${options.what} (PID ${left.pid}) left running by an earlier serve answers: taken over\n`);
    } else if (left !== undefined) await stopLeftover(options, left);
    const supervisor = options.supervisor ?? new Supervisor({ log: () => {} });
    server.supervised = await supervisor.start(server.part(), (line) => appendFileSync(options.logFile, `runplan-host: ${line}\n`));
    return server;
  }

  /** The server as the supervisor runs it: a run is started and waited for until it answers. */
  private part(): Part {
    const { options } = this;
    return {
      // "Redis add-on addon_…" → "redis:addon_…", "PostgreSQL" → "postgresql": the key of status --json.
      id: options.partId ?? options.what.toLowerCase().replace(/ add-on /, ':'),
      name: options.what,
      start: async (): Promise<PartRun> => {
        const run = this.takeOver ?? launch(options);
        this.takeOver = undefined;
        this.run = run;
        await waitReady(run, options);
        return { pid: run.pid(), ended: run.exited };
      },
      stop: async () => {
        if (this.run !== undefined) await stopRun(this.run, options.stopSignal ?? 'SIGTERM', this.graceMs);
      },
      detach: () => this.run?.release(),
      check: async () => {
        if (options.check) return options.check();
        const up = await options.ready().catch(() => false);
        return { up, detail: up ? `answers (${options.command})` : `does not answer (${options.command}); its log: ${options.logFile}` };
      },
    };
  }

  /** Ends the supervision and leaves it running: serve exits and the applications keep their add-on; the next serve takes it over. */
  detach(): void {
    this.supervised?.detach();
  }

  /** Ends the supervision, asks it to shut down, then kills it if it has not within `graceMs`; resolves once it has exited. */
  async stop(graceMs = 20_000): Promise<void> {
    this.graceMs = graceMs;
    await this.supervised?.stop();
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
