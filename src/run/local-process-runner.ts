import type { Runner, RunningApp, RunOptions } from '../buildpack/contract.js';
import { materialiseFiles } from '../build/materialise-files.js';
import { systemClock, type Clock } from '../time/clock.js';
import { SupervisedProcess } from './supervised-process.js';

export interface LocalProcessRunnerOptions {
  /** Clock for restart back-off (tests pass one that does not sleep). */
  readonly clock?: Clock;
}

/**
 * The embedded default Runner: every process of the plan as a local child process
 * with its environment, restarted with exponential back-off when it crashes, and
 * stopped by process group (SIGTERM, grace period, SIGKILL).
 */
export class LocalProcessRunner implements Runner {
  private readonly clock: Clock;

  constructor(options: LocalProcessRunnerOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  async start({ plan, appDir, env, logger }: RunOptions): Promise<RunningApp> {
    await materialiseFiles(plan.files, 'run', appDir, env);
    const processes = plan.processes.map((spec) => new SupervisedProcess(spec, appDir, env, logger, this.clock));
    const started: SupervisedProcess[] = [];
    try {
      for (const p of processes) {
        await p.start();
        started.push(p);
      }
    } catch (error) {
      await Promise.all(started.map((p) => p.stop()));
      throw error;
    }
    for (const p of processes) {
      const s = p.state();
      logger.info(`started ${s.name} (pid ${s.pid ?? 'none'})`);
    }
    let stopping: Promise<void> | undefined;
    return {
      processes: () => processes.map((p) => p.state()),
      stop: () => (stopping ??= Promise.all(processes.map((p) => p.stop())).then(() => undefined)),
    };
  }
}
