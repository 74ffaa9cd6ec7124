import type { HealthChecker, HealthReport, HealthTarget, RunningApp } from '../buildpack/contract.js';
import { CoreErrors } from '../errors/core-errors.js';
import type { RunplanError } from '../errors/runplan-error.js';
import type { Logger } from '../log/logger.js';
import type { RunPlan } from '../plan/schema.js';
import type { Clock } from '../time/clock.js';
import { WebWatch } from './web-watch.js';

/** Options of healthGate(): how and where it checks, its clock and the stability window. */
export interface HealthGateOptions {
  readonly checker: HealthChecker;
  readonly target: HealthTarget;
  readonly clock: Clock;
  /** The stability window (host setting stabilityWindowMs). */
  readonly windowMs: number;
  readonly signal?: AbortSignal | undefined;
}

/**
 * The gate a started deployment passes before it is accepted, the same on
 * every executor: the plan's health check (the specification's log lines,
 * whatever the outcome), watching meanwhile what the web process does — the
 * check stops waiting once it will not come back (not restarted, or
 * crash-looping), and a web process that exited before it answered fails the
 * deployment with RUNPLAN_E_RUN_PROCESS_EXITED (how it ended, its restarts, its
 * last lines) rather than "not listening" — then the stability window: once
 * healthy, it must stay up that long.
 */
export async function healthGate(running: RunningApp, plan: RunPlan, logger: Logger, options: HealthGateOptions): Promise<{ health: HealthReport } | { error: RunplanError }> {
  const web = plan.processes.find((p) => p.role === 'web');
  const watch = web ? new WebWatch(running, web.name) : undefined;
  try {
    const signals = [options.signal, watch?.givenUp].filter((s): s is AbortSignal => s !== undefined);
    const health = await options.checker.check(options.target, logger, signals.length > 0 ? AbortSignal.any(signals) : undefined);
    if (options.signal?.aborted) return { error: interruptedDeployment() };
    if (!health.ok) return { error: watch?.beforeReady(health, plan.healthCheck) ?? healthError(health) };
    const unstable = await watch?.stableFor(options.windowMs, { clock: options.clock, logger, signal: options.signal });
    if (options.signal?.aborted) return { error: interruptedDeployment() };
    return unstable ? { error: unstable } : { health };
  } finally {
    watch?.close();
  }
}

function interruptedDeployment(): RunplanError {
  return CoreErrors.BUILD_INTERRUPTED.create({ message: 'the deployment was interrupted before it was accepted.' });
}

/** The coded error of a failed health check: not listening, listening on loopback only, or the paths that did not answer 200. */
export function healthError(health: HealthReport): RunplanError {
  const details = { results: health.results };
  if (health.problem?.kind === 'not-listening') {
    return CoreErrors.HEALTH_NOT_LISTENING.create({ message: `the deployment failed: ${health.problem.message}.`, details });
  }
  if (health.problem?.kind === 'loopback-only') {
    return CoreErrors.HEALTH_LOOPBACK_ONLY.create({ message: `the deployment failed: ${health.problem.message}.`, details });
  }
  const failing = health.results.filter((r) => !r.ok).map((r) => `GET ${r.path} returned ${r.status}`);
  return CoreErrors.HEALTH_CHECK_FAILED.create({ message: `the deployment failed its health check: ${failing.join('; ')}.`, details });
}
