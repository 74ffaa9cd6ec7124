import { mkdir, rm } from 'node:fs/promises';
import type { Runner, RunningApp, RunOptions } from '../buildpack/contract.js';
import { bindProcess } from '../plan/placeholders.js';
import { materialiseFiles } from '../build/materialise-files.js';
import { formatSeconds } from '../health/probes.js';
import { systemClock, type Clock } from '../time/clock.js';
import { describeReadiness, waitUntilReady } from './readiness.js';
import { localBindings } from './run-dir.js';
import { SupervisedProcess } from './supervised-process.js';

export interface LocalProcessRunnerOptions {
  /** Clock for restart back-off and readiness polling (tests pass one that does not sleep). */
  readonly clock?: Clock;
}

/**
 * The embedded default Runner: every process of the plan as a local child process
 * with its environment, restarted with exponential back-off when it crashes, and
 * stopped by process group (SIGTERM, grace period, SIGKILL).
 *
 * A process with `startAfter` conditions is started only once they hold (checked
 * in the background, after the other processes started): a proxy in front of an
 * application server must not accept connections — and so pass a port health
 * check — while the server behind it is still booting.
 *
 * The plan's ${RUN_DIR} (localRunDir) is made fresh when the processes start;
 * it is also their TMPDIR, and it is removed once they have stopped.
 */
export class LocalProcessRunner implements Runner {
  private readonly clock: Clock;

  constructor(options: LocalProcessRunnerOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  async start({ plan, appDir, env: planned, logger }: RunOptions): Promise<RunningApp> {
    const bindings = localBindings(appDir);
    const runDir = bindings.RUN_DIR as string;
    // A run that was killed may have left its sockets: start from an empty directory.
    await rm(runDir, { recursive: true, force: true });
    await mkdir(runDir, { recursive: true, mode: 0o700 });
    const env = planned.bound(bindings);
    const removeRunDir = () => rm(runDir, { recursive: true, force: true });
    let processes: SupervisedProcess[];
    try {
      await materialiseFiles(plan.files, 'run', appDir, env, bindings);
      processes = plan.processes.map((spec) => new SupervisedProcess(bindProcess(spec, bindings), appDir, env, logger, this.clock, runDir));
    } catch (error) {
      await removeRunDir();
      throw error;
    }
    const immediate = processes.filter((p) => !p.spec.startAfter?.length);
    const deferred = processes.filter((p) => (p.spec.startAfter?.length ?? 0) > 0);
    const started: SupervisedProcess[] = [];
    try {
      for (const p of immediate) {
        await p.start();
        started.push(p);
      }
    } catch (error) {
      await Promise.all(started.map((p) => p.stop()));
      await removeRunDir();
      throw error;
    }
    for (const p of immediate) {
      const s = p.state();
      logger.info(`started ${s.name} (pid ${s.pid ?? 'none'})`);
    }

    const stopWaiting = new AbortController();
    const waits = deferred.map(async (p) => {
      const conditions = p.spec.startAfter ?? [];
      logger.info(`${p.spec.name} starts once ${conditions.map(describeReadiness).join(' and ')}`);
      const since = this.clock.now();
      if (!(await waitUntilReady(conditions, this.clock, stopWaiting.signal))) return;
      try {
        await p.start();
        started.push(p);
        logger.info(`started ${p.spec.name} (pid ${p.state().pid ?? 'none'}) after waiting ${formatSeconds(this.clock.now() - since)}`);
      } catch (error) {
        // Nothing listens then, so the health check reports the failure; the reason is logged here.
        logger.error((error as Error).message);
      }
    });

    let stopping: Promise<void> | undefined;
    return {
      processes: () => processes.map((p) => p.state()),
      stop: () =>
        (stopping ??= (async () => {
          stopWaiting.abort();
          await Promise.all(waits);
          await Promise.all(processes.map((p) => p.stop()));
          await removeRunDir();
        })()),
    };
  }
}
