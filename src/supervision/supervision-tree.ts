import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, readlink, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatIdentity, identifyProcess, isRunning, parseIdentity, processArguments, type ProcessIdentity, watchUntilGone } from '../process/process-identity.js';
import { runProgram, startProgram } from '../process/run-program.js';
import { CoreErrors } from '../errors/core-errors.js';
import { checkS6, S6 } from './s6-programs.js';

/** What opening a tree found. */
export interface OpenedTree {
  /** The s6-svscan an earlier program left was taken over: what it supervises kept running. */
  readonly adopted: boolean;
  /**
   * Runs recorded in the tree that nothing supervised any more (the machine restarted, or s6-svscan
   * died): their services were removed from the scan directory; their records are left for the
   * caller, which knows what else each one held, to clean up (SupervisionTree.forgetRun).
   */
  readonly staleRuns: readonly string[];
}

/** Services one s6-svscan may supervise; two per process (the process and its logger). */
const MAX_SERVICES = 5_000;
const LINK_TIMEOUT_MS = 10_000;

/**
 * The processes of lasting runs, supervised by s6 (Debian's `s6`): one
 * s6-svscan per tree, started by runplan in a session of its own and left
 * running when runplan's process exits, so what it supervises outlives the
 * program that started it — a host's serve can crash, stop or be upgraded
 * while every application keeps running. The next program finds the same
 * s6-svscan again (its identity: PID, start time, boot, checked against its
 * arguments; never a PID alone) and takes it over; one that is gone (the
 * machine restarted) leaves only stale records, which are cleaned up.
 *
 * Layout under `dir`: `scan/` (s6-svscan's scan directory: one link per
 * service), `runs/<run id>/` (a run's record and one service directory per
 * process), `svscan.json` (its identity), `svscan.log` (what s6 itself says).
 */
export class SupervisionTree {
  readonly scanDir: string;
  readonly runsDir: string;
  private readonly identityFile: string;
  private readonly logFile: string;

  constructor(readonly dir: string) {
    this.scanDir = join(dir, 'scan');
    this.runsDir = join(dir, 'runs');
    this.identityFile = join(dir, 'svscan.json');
    this.logFile = join(dir, 'svscan.log');
  }

  /** The directory of a run's record and services. */
  runDir(runId: string): string {
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,120}$/.test(runId))
      throw CoreErrors.HOST_INVALID_SETTING.create({ message: `${JSON.stringify(runId.slice(0, 60))} cannot name a run (letters, digits, ".", "_" and "-").` });
    return join(this.runsDir, runId);
  }

  /** Takes over the s6-svscan of this tree when it runs, or starts one (the services of a stale tree removed first). */
  async open(): Promise<OpenedTree> {
    await checkS6();
    await mkdir(this.scanDir, { recursive: true, mode: 0o700 });
    await mkdir(this.runsDir, { recursive: true, mode: 0o700 });
    const running = await this.runningScanner();
    if (running !== undefined) return { adopted: true, staleRuns: [] };
    const staleRuns = await this.clearStale();
    await this.startScanner();
    return { adopted: false, staleRuns };
  }

  /** The s6-svscan of this tree, when one runs: its identity names a live process that scans this very directory. */
  private async runningScanner(): Promise<ProcessIdentity | undefined> {
    const identity = parseIdentity(await readFile(this.identityFile, 'utf8').catch(() => ''));
    if (identity === undefined || !isRunning(identity)) return undefined;
    const args = processArguments(identity.pid) ?? [];
    return args[0] === S6.svscan && args[args.length - 1] === this.scanDir && existsSync(join(this.scanDir, '.s6-svscan', 'control')) ? identity : undefined;
  }

  /**
   * No s6-svscan runs for this tree: each service link goes, and a supervisor that
   * still runs on one (its s6-svscan alone was killed) is told to stop its process
   * and exit, so that nothing of a run is left half-supervised.
   */
  private async clearStale(): Promise<string[]> {
    for (const name of await readdir(this.scanDir).catch(() => [] as string[])) {
      if (name.startsWith('.')) continue;
      const link = join(this.scanDir, name);
      const target = await readlink(link).catch(() => undefined);
      // The service, then its logger (a supervisor of its own), so that its last lines are kept.
      for (const dir of target === undefined ? [] : [target, join(target, 'log')]) {
        if ((await runProgram(S6.svok, [dir]))?.ok) await runProgram(S6.svc, ['-xd', dir]);
      }
      await unlink(link).catch(() => undefined);
    }
    await rm(join(this.scanDir, '.s6-svscan'), { recursive: true, force: true });
    return (await readdir(this.runsDir, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory()).map((e) => e.name);
  }

  private async startScanner(): Promise<void> {
    // Its own session (detached), its output appended to a file of its own and nothing of runplan's environment:
    // it must survive runplan's process, its terminal and its pipes. Two descriptors per logged service: as many as the hard limit allows.
    let pid: number | undefined;
    const program = startProgram('/bin/sh', ['-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"', 's6-tree', S6.svscan, '-c', String(MAX_SERVICES), this.scanDir], {
      cwd: this.dir,
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
      outputFile: this.logFile,
      detached: true,
      keepRunningOnExit: true,
      timeoutMs: 0,
      onStart: (started) => {
        pid = started;
      },
    });
    // Never waited for: it outlives this process, which must be free to exit before it.
    program.unref();
    // Ready once its control directory is there (it makes it before its first scan).
    for (let i = 0; i < 200; i++) {
      if (pid !== undefined && existsSync(join(this.scanDir, '.s6-svscan', 'control'))) {
        const identity = identifyProcess(pid);
        if (identity !== undefined) {
          await writeFile(this.identityFile, formatIdentity(identity), { mode: 0o600 });
          return;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw CoreErrors.HOST_SUPERVISOR_UNAVAILABLE.create({ message: `s6-svscan did not start on ${this.scanDir} within 5 s; what it said is in ${this.logFile}.` });
  }

  /** Puts a service directory under supervision as `name` (its process starts at once) and waits for its supervisor. */
  async link(serviceDir: string, name: string): Promise<void> {
    const ran = await runProgram(S6.svlink, ['-t', String(LINK_TIMEOUT_MS), this.scanDir, serviceDir, name], { timeoutMs: LINK_TIMEOUT_MS + 5_000 });
    if (!ran?.ok) throw CoreErrors.HOST_SUPERVISOR_UNAVAILABLE.create({ message: `s6 could not supervise ${serviceDir}: ${(ran?.stderr ?? '').trim() || 'no answer'}.` });
  }

  /** Takes `name` out of supervision and waits for its supervisor (and its logger's) to exit; the process should be down already. */
  async unlink(name: string): Promise<void> {
    if (!existsSync(join(this.scanDir, name))) return;
    await runProgram(S6.svunlink, ['-t', String(LINK_TIMEOUT_MS), this.scanDir, name], { timeoutMs: LINK_TIMEOUT_MS + 5_000 });
  }

  /** The runs the tree has a record of (a directory under runs/). */
  async runs(): Promise<string[]> {
    return (await readdir(this.runsDir, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory()).map((e) => e.name);
  }

  /** Removes a run's directory (its record, services and logs), once nothing of it runs. */
  async forgetRun(runId: string): Promise<void> {
    await rm(this.runDir(runId), { recursive: true, force: true });
  }

  /** Stops s6-svscan and every supervisor it still has (the runs should be stopped first), and forgets its identity. */
  async close(): Promise<void> {
    const identity = await this.runningScanner();
    if (identity === undefined) return;
    await runProgram(S6.svscanctl, ['-t', this.scanDir]);
    const gone = watchUntilGone(identity, { intervalMs: 50 });
    const timer = new Promise<false>((resolve) => setTimeout(() => resolve(false), 10_000).unref());
    if (!(await Promise.race([gone, timer]))) {
      try {
        process.kill(identity.pid, 'SIGKILL');
      } catch {}
    }
    await rm(this.identityFile, { force: true });
    await rm(join(this.scanDir, '.s6-svscan'), { recursive: true, force: true });
  }
}
