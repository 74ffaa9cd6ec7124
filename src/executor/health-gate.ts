import type { HealthChecker, HealthReport, HealthTarget, RunningApp } from './contract.js';
import { CoreErrors } from '../errors/core-errors.js';
import type { RunplanError } from '../errors/runplan-error.js';
import { listeningSockets, whereItListens, type WhereItListens } from '../health/process-sockets.js';
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
    if (!health.ok)
      return {
        error: watch?.beforeReady(health, plan) ?? healthError(health, (options.target.whereItListens ?? options.target.verifyListenAddress) ? await listening(running, plan, health) : undefined),
      };
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

/**
 * Where the application's processes listen when the web port never accepted a
 * connection (read from /proc on this machine): the most common deployment
 * failure is a fixed port instead of PORT, and this names it.
 */
async function listening(running: RunningApp, plan: RunPlan, health: HealthReport): Promise<WhereItListens | undefined> {
  const refused = health.problem?.kind === 'not-listening' || (health.results.length > 0 && health.results.every((r) => typeof r.status === 'string' && r.status.includes('connection refused')));
  if (!refused) return undefined;
  const pids = running
    .processes()
    .map((p) => p.pid)
    .filter((pid): pid is number => pid !== undefined);
  const sockets = pids.length > 0 ? await listeningSockets(pids) : undefined;
  return sockets === undefined ? undefined : whereItListens(sockets, pids, plan.healthCheck.port, plan.app.type);
}

/**
 * The coded error of a failed health check: not listening, listening on loopback only, or the paths that did not answer 200;
 * with `where`, what the application's processes listen on instead and the fix that names PORT.
 */
export function healthError(health: HealthReport, where?: WhereItListens): RunplanError {
  const details = { results: health.results };
  if (health.problem?.kind === 'not-listening' && where?.loopbackOnly) {
    // In its own network the port refuses the host: what the application's own sockets show is why.
    return CoreErrors.HEALTH_LOOPBACK_ONLY.create({ message: `the deployment failed: ${health.problem.message}${where.message}.`, details, fix: where.fix });
  }
  if (health.problem?.kind === 'not-listening') {
    return CoreErrors.HEALTH_NOT_LISTENING.create({ message: `the deployment failed: ${health.problem.message}${where?.message ?? ''}.`, details, ...(where ? { fix: where.fix } : {}) });
  }
  if (health.problem?.kind === 'loopback-only') {
    return CoreErrors.HEALTH_LOOPBACK_ONLY.create({ message: `the deployment failed: ${health.problem.message}.`, details });
  }
  const failing = health.results.filter((r) => !r.ok).map((r) => `GET ${r.path} returned ${r.status}`);
  return CoreErrors.HEALTH_CHECK_FAILED.create({ message: `the deployment failed its health check: ${failing.join('; ')}${where?.message ?? ''}.`, details, ...(where ? { fix: where.fix } : {}) });
}
