import { type FSWatcher, watch } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { join } from 'node:path';
import type { ProcessExit, ProcessState } from '../executor/contract.js';
import type { Environment } from '../env/assemble.js';
import type { Logger } from '../log/logger.js';
import { OutputTail } from '../log/output-tail.js';
import { type LoweredProcess, mergeEnvironment } from '../lowering/lower.js';
import { systemEnvironment } from '../process/process-env.js';
import { type AppUser, userEnvironment } from '../process/app-user.js';
import { groupAlive, groupMembers, signalGroup } from '../process/process-group.js';
import { runProgram } from '../process/run-program.js';
import type { LimitCounters, SandboxScope } from '../sandbox/sandbox.js';
import { type LimitStrike, limitStrike } from '../sandbox/limit-strike.js';
import { exitNotice } from './exit-notice.js';
import type { ProcessKeeper } from './process-keeper.js';
import { type KeptLine, LogFollower } from './log-follower.js';
import { S6 } from './s6-programs.js';
import { envFileText, finishScript, finishTimeoutMs, logRunScript, runScript, type ServiceScriptInput } from './service-scripts.js';
import { latestStatus, readServiceStatus, type ServiceStatus } from './service-status.js';
import type { SupervisionTree } from './supervision-tree.js';

/** Where a lasting process is kept: its tree, its run, and the run's marker of supervisor lines. */
export interface LastingPlace {
  readonly tree: SupervisionTree;
  readonly runId: string;
  readonly marker: string;
  /** Its TMPDIR and HOME (the run directory), its user, and its walls, as for a process runplan keeps itself. */
  readonly tempDir?: string;
  readonly user?: AppUser;
  readonly scope?: SandboxScope;
}

/** What `finish` tells of an exit (service-scripts.ts). */
interface ExitReport {
  readonly code: number | null;
  readonly signal: number;
  readonly ranMs: number;
  readonly inARow: number;
  readonly restarts: number;
  readonly willRestart: boolean;
  readonly delayMs: number;
}

/** How long start() waits for s6 to report the process up. */
const UP_TIMEOUT_MS = 10_000;

/** The name of a process's service in the tree's scan directory. */
function serviceName(runId: string, processName: string): string {
  return `${runId}--${processName}`;
}

/**
 * One process of a lasting run, kept by s6-supervise in the run's service
 * directory: started, restarted by its `finish` script as the plan's policy
 * says, its output kept by s6-log — all of it whether or not runplan's process
 * still runs. This object follows it while runplan does: every line of its log,
 * each exit (the marked lines `finish` writes), its status; and stops it
 * (SIGTERM to its group, its grace, SIGKILL) when asked.
 */
export class LastingProcess implements ProcessKeeper {
  readonly serviceDir: string;
  private readonly name: string;
  private follower: LogFollower | undefined;
  private statusWatch: FSWatcher | undefined;
  private status: ServiceStatus | undefined;
  private restarts = 0;
  private counters: LimitCounters | undefined;
  private stopping: Promise<void> | undefined;
  private readonly tail = new OutputTail();
  private readonly exitListeners = new Set<(exit: ProcessExit) => void>();

  constructor(
    readonly spec: LoweredProcess,
    private readonly env: Environment | undefined,
    private readonly logger: Logger,
    private readonly place: LastingPlace,
  ) {
    this.serviceDir = join(place.tree.runDir(place.runId), spec.name);
    this.name = serviceName(place.runId, spec.name);
  }

  private get dataDir(): string {
    return join(this.serviceDir, 'data');
  }

  /** Writes its service directory, puts it under s6 and resolves once it runs. */
  async start(): Promise<void> {
    if (this.env === undefined) throw new Error('a lasting process taken over from an earlier run cannot be started again');
    const { spec, place } = this;
    const { tempDir, user, scope } = place;
    const argv = spec.command.kind === 'exec' ? spec.command.argv : ['/bin/sh', '-c', spec.command.script];
    const input: ServiceScriptInput = {
      process: spec.name,
      argv: scope ? scope.command(argv, spec.cwd) : argv,
      cwd: spec.cwd,
      ...(user?.dropped ? { drop: { uid: user.uid, gid: user.gid } } : {}),
      envFile: join(this.dataDir, 'env'),
      marker: place.marker,
      restart: spec.restart,
      stopGraceMs: spec.stopGraceMs,
      wrapped: scope !== undefined,
    };
    const environment = mergeEnvironment({ ...systemEnvironment(process.env, tempDir), ...(tempDir === undefined ? {} : userEnvironment(user, tempDir)) }, this.env.toRecord(), spec);
    await mkdir(join(this.serviceDir, 'log'), { recursive: true, mode: 0o700 });
    await mkdir(join(this.dataDir, 'log'), { recursive: true, mode: 0o700 });
    // Root's, read by the shell that becomes the process: the values never reach a command line.
    await writeFile(input.envFile, envFileText(environment), { mode: 0o600 });
    await executable(join(this.serviceDir, 'run'), runScript(input));
    await executable(join(this.serviceDir, 'finish'), finishScript(input));
    await writeFile(join(this.serviceDir, 'timeout-finish'), `${finishTimeoutMs(input)}\n`);
    await executable(join(this.serviceDir, 'log', 'run'), logRunScript(join(this.dataDir, 'log')));
    this.counters = await scope?.counters();
    await this.follow();
    await place.tree.link(this.serviceDir, this.name);
    const deadline = Date.now() + UP_TIMEOUT_MS;
    while (!(await this.refresh())?.up) {
      if (Date.now() > deadline) throw new Error(`s6 did not start process ${spec.name} within ${UP_TIMEOUT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Follows a process an earlier program put under s6: its log from where that program stopped reading. */
  async attach(): Promise<ServiceStatus | undefined> {
    this.restarts = Number((await readFile(join(this.dataDir, 'restarts'), 'utf8').catch(() => '0')).trim()) || 0;
    this.counters = await this.place.scope?.counters();
    await this.follow();
    return this.refresh();
  }

  /** Whether s6-supervise still runs for it (it keeps the process, and starts it again when it dies). */
  async supervised(): Promise<boolean> {
    return (await runProgram(S6.svok, [this.serviceDir]))?.ok ?? false;
  }

  private async follow(): Promise<void> {
    this.follower = new LogFollower(join(this.dataDir, 'log'), join(this.dataDir, 'log-checkpoint'), (line) => this.kept(line));
    await this.follower.start();
    try {
      await mkdir(join(this.serviceDir, 'supervise'), { recursive: true });
      this.statusWatch = watch(join(this.serviceDir, 'supervise'), { persistent: false }, () => void this.refresh());
      this.statusWatch.on('error', () => undefined);
    } catch {
      // state() then shows the status of the last refresh.
    }
  }

  /** Reads s6's status of it again. */
  async refresh(): Promise<ServiceStatus | undefined> {
    // Reads overlap (each change in supervise/ starts one): the one that ends last may have read first.
    this.status = latestStatus(this.status, await readServiceStatus(this.serviceDir));
    return this.status;
  }

  state(): ProcessState {
    return { name: this.spec.name, pid: this.status?.pid, restarts: this.restarts, running: this.status?.up ?? false };
  }

  onExit(listener: (exit: ProcessExit) => void): () => void {
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  /** A line of its log: one of the process's own, or the report of an exit `finish` wrote. */
  private kept(line: KeptLine): void {
    if (line.text.startsWith(`${this.place.marker} `)) {
      const report = parseReport(line.text.slice(this.place.marker.length + 1));
      if (report !== undefined) void this.exited(report);
      return;
    }
    this.tail.push(this.logger.redact(line.text));
    this.logger.emit({ kind: 'process', name: this.spec.name, stream: 'stdout' }, line.text, 'info');
  }

  private async exited(report: ExitReport): Promise<void> {
    const signal = report.signal > 0 ? ((Object.entries(constants.signals).find(([, n]) => n === report.signal)?.[0] as NodeJS.Signals | undefined) ?? null) : null;
    const code = signal === null ? report.code : null;
    const { scope } = this.place;
    const now = await scope?.counters();
    const struck: LimitStrike | undefined = scope && this.counters && now ? limitStrike(scope.limits, this.counters, now) : undefined;
    this.counters = now;
    const strike = struck?.resource === 'memory' ? (signal === 'SIGKILL' ? struck : undefined) : struck && (code !== 0 || signal !== null) ? struck : undefined;
    this.restarts = report.restarts;
    const before = report.willRestart ? report.restarts - 1 : report.restarts;
    this.logger.event({ type: 'process-exited', process: this.spec.name, code, signal });
    const told: ProcessExit = {
      process: this.spec.name,
      role: this.spec.role,
      code,
      signal,
      ranMs: report.ranMs,
      restarts: before,
      inARow: report.inARow,
      willRestart: report.willRestart,
      output: this.tail.snapshot(),
      ...(strike ? { limit: { resource: strike.resource, limit: strike.limit } } : {}),
    };
    for (const listener of this.exitListeners) listener(told);
    for (const line of exitNotice(this.spec, {
      code,
      signal,
      ranMs: report.ranMs,
      willRestart: report.willRestart,
      delayMs: report.delayMs,
      restarts: report.restarts,
      inARow: report.inARow,
      strike,
    })) {
      this.logger.warn(line);
    }
  }

  /**
   * Stops it for good: s6 told not to start it again, SIGTERM to its process group
   * (with walls, all of it but bubblewrap's monitor, whose death would kill the
   * sandbox at once), its grace, SIGKILL; then it leaves s6, its last lines read.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await runProgram(S6.svc, ['-O', this.serviceDir]);
      const pgid = Number((await readFile(join(this.dataDir, 'pgid'), 'utf8').catch(() => '')).trim());
      const status = await this.refresh();
      if (status?.up && Number.isInteger(pgid) && pgid > 1 && groupAlive(pgid)) {
        const wrapped = this.place.scope !== undefined;
        for (const pid of groupMembers(pgid)) {
          if (wrapped && pid === pgid) continue;
          try {
            process.kill(pid, 'SIGTERM');
          } catch {}
        }
        if (!wrapped) signalGroup(pgid, 'SIGCONT');
        const deadline = Date.now() + this.spec.stopGraceMs;
        while (groupAlive(pgid) && Date.now() < deadline) {
          // With walls the monitor outlives its command briefly: what counts is that nothing but it is left.
          if (wrapped && groupMembers(pgid).every((pid) => pid === pgid)) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        if (groupAlive(pgid)) {
          if (!wrapped || groupMembers(pgid).some((pid) => pid !== pgid)) this.logger.warn(`${this.spec.name} still running after ${this.spec.stopGraceMs / 1000} s; sending SIGKILL`);
          signalGroup(pgid, 'SIGKILL');
        }
      }
      // Down, and its finish script done: then it leaves the tree.
      for (let i = 0; i < 200; i++) {
        const now = await this.refresh();
        if (now === undefined || (!now.up && !now.finishing)) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await this.place.tree.unlink(this.name);
      await this.detach();
    })();
    return this.stopping;
  }

  /** Stops following it, its last lines read; it keeps running under s6 (runplan's process is going away). */
  async detach(): Promise<void> {
    this.statusWatch?.close();
    this.statusWatch = undefined;
    await this.follower?.stop();
    this.follower = undefined;
  }
}

async function executable(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o700 });
  await chmod(path, 0o700);
}

function parseReport(text: string): ExitReport | undefined {
  try {
    const value = (JSON.parse(text) as { exit?: Partial<ExitReport> }).exit;
    if (value === undefined || typeof value.ranMs !== 'number' || typeof value.willRestart !== 'boolean') return undefined;
    return {
      code: typeof value.code === 'number' ? value.code : null,
      signal: typeof value.signal === 'number' ? value.signal : 0,
      ranMs: value.ranMs,
      inARow: typeof value.inARow === 'number' ? value.inARow : 1,
      restarts: typeof value.restarts === 'number' ? value.restarts : 0,
      willRestart: value.willRestart,
      delayMs: typeof value.delayMs === 'number' ? value.delayMs : 0,
    };
  } catch {
    return undefined;
  }
}
