import type { RunPlan } from '../plan/schema.js';
import type { HealthReport, ProcessExit, ProcessState, RunningApp } from './contract.js';
import type { RunplanError } from '../errors/runplan-error.js';
import { formatSeconds } from '../health/probes.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import { processExitError } from './process-exit-error.js';
import { refusalError, refusalIn } from './refusal.js';

/**
 * Exits in a row, each soon after its start, that make a crash loop
 * (RUNPLAN_W_RUN_CRASH_LOOP; a web process not yet healthy fails its
 * deployment): the deploy flow's rule, which every runner warns by.
 */
export const CRASH_LOOP_EXITS = 3;

/**
 * What the web process of a deployment does while the deployment waits for it:
 * its exits, as its runner tells them (RunningApp.onExit), and whether it will
 * come back at all. A web process that is not restarted, or exits again and
 * again soon after starting (CRASH_LOOP_EXITS in a row), makes the deployment
 * stop waiting for its health check: `givenUp` aborts.
 */
export class WebWatch {
  private readonly controller = new AbortController();
  private readonly exits: ProcessExit[] = [];
  // The exit that made it give up: the one reported, whatever restarts follow before the check returns.
  private decisive: ProcessExit | undefined;
  private readonly listeners = new Set<() => void>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly running: RunningApp,
    readonly web: string,
  ) {
    this.unsubscribe =
      running.onExit?.((exit) => {
        if (exit.process !== web) return;
        this.exits.push(exit);
        // An entrypoint's refusal (refusal.ts) is final: the restart would refuse again, as the local runner fails at once.
        const refused = refusalIn(exit.output) !== undefined;
        if (this.decisive === undefined && (refused || !exit.willRestart || exit.inARow >= CRASH_LOOP_EXITS)) {
          this.decisive = exit;
          this.controller.abort(`the ${web} process ${refused ? 'was refused its start' : exit.willRestart ? 'is crash-looping' : 'exited and is not restarted'}`);
        }
        for (const listener of this.listeners) listener();
      }) ?? (() => undefined);
  }

  /** Aborted once waiting for the web process is pointless. */
  get givenUp(): AbortSignal {
    return this.controller.signal;
  }

  close(): void {
    this.unsubscribe();
  }

  /**
   * The error of a failed health check when the web process's exits explain it
   * better than "not listening": it gave up, or it exited and never answered
   * HTTP at all. A process that answered (a 500, a 404) failed the check itself.
   */
  beforeReady(health: HealthReport, plan: RunPlan): RunplanError | undefined {
    const check = plan.healthCheck;
    const last = this.decisive ?? this.exits[this.exits.length - 1];
    if (last === undefined || health.problem?.kind === 'loopback-only') return undefined;
    const refusal = refusalIn(last.output);
    if (refusal !== undefined) return refusalError(refusal, plan);
    const answered = health.results.some((r) => typeof r.status === 'number');
    if (!this.givenUp.aborted && answered) return undefined;
    return processExitError(last, { kind: 'before-ready', port: check.port, paths: check.kind === 'http' ? check.paths.map((p) => p.path) : [] }, health.results);
  }

  /**
   * The stability window: once healthy, the web process must stay up `windowMs`
   * more. Resolves with the error when it exits meanwhile (at once when it told
   * its exit; a runner that cannot tell is looked at once the window is over),
   * undefined when it stayed up or `signal` aborted.
   */
  async stableFor(windowMs: number, options: { clock: Clock; logger: Logger; signal?: AbortSignal | undefined }): Promise<RunplanError | undefined> {
    if (windowMs <= 0) return undefined;
    const { clock, logger, signal } = options;
    const since = clock.now();
    const seen = this.exits.length;
    let before = this.state();
    // Down without an exit told: what the runner read last may be older than the check that just passed.
    if (before?.running === false && this.exits.length === seen) {
      await this.running.refresh?.();
      before = this.state();
    }
    logger.info(`health check passed; the deployment is accepted once ${this.web} has stayed up ${formatSeconds(windowMs)} (stability window)`);
    const exited = new AbortController();
    const wake = () => exited.abort();
    this.listeners.add(wake);
    try {
      // Between the check and now it may have exited already, its restart pending.
      if (before?.running !== false) await clock.sleep(windowMs, signal ? AbortSignal.any([exited.signal, signal]) : exited.signal);
    } finally {
      this.listeners.delete(wake);
    }
    if (signal?.aborted) return undefined;
    await this.running.refresh?.();
    const phase = { kind: 'stability-window', windowMs, afterReadyMs: clock.now() - since } as const;
    const last = this.exits[this.exits.length - 1];
    if (last !== undefined && (this.exits.length > seen || before?.running === false)) return processExitError(last, phase);
    const after = this.state();
    if (before === undefined || after === undefined) return undefined;
    if (before.running && after.running && after.restarts === before.restarts) return undefined;
    // A runner that does not tell exits: what its process table shows.
    return processExitError({ process: this.web, role: 'web', code: null, signal: null, ranMs: 0, restarts: after.restarts, inARow: 1, willRestart: after.running, output: [] }, phase);
  }

  private state(): ProcessState | undefined {
    return this.running.processes().find((p) => p.name === this.web);
  }
}
