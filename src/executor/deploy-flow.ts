import type { HealthChecker, HealthReport, RunningApp } from './contract.js';
import { redactError } from '../env/redact-error.js';
import { CoreErrors } from '../errors/core-errors.js';
import { HttpHealthChecker } from './http-health-checker.js';
import { DEFAULT_BUILD_STEP_TIMEOUT_MS, DEFAULT_STABILITY_WINDOW_MS } from '../host/host-settings.js';
import type { PlanToCarryOut } from '../planning/plan-to-carry-out.js';
import { type Clock, systemClock } from '../time/clock.js';
import type { Built, Executor } from './contract.js';
import { healthGate } from './health-gate.js';
import { CoreWarnings } from '../errors/core-warnings.js';
import { isRunplanError } from '../errors/runplan-error.js';
import { Logger, type LogSink } from '../log/logger.js';

/** Options of deploy(): where the deployment's lines go, the health checker (default HTTP), the clock of its waits, and the signal that interrupts it. */
export interface DeployFlowOptions {
  /** Where every line of the deployment goes, redacted by the one logger the flow makes and hands to the executor. */
  readonly sink: LogSink;
  readonly healthChecker?: HealthChecker | undefined;
  /** Clock of the health check's waits and the stability window (tests pass one that does not sleep). */
  readonly clock?: Clock | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** A deployment that passed its health gate (deploy()): what its executor built, its running processes and its health report. */
export interface Deployed<B extends Built> {
  readonly built: B;
  readonly running: RunningApp;
  readonly health: HealthReport;
  /** Resolves once what this deployment replaced is gone (off its way to "healthy"). */
  readonly settled: Promise<void>;
  /** Stops every process of the deployment (and waits for `settled`). */
  stop(): Promise<void>;
}

/**
 * What the service does on a push, the same for every executor: build the
 * plan (made or read once, before: planToCarryOut); refuse
 * a port another program answers on; start the processes; pass the health gate
 * (the specification's lines, what the web process did, the stability window);
 * then accept the deployment and run the succeeded hooks — or stop everything
 * it started, run the failed hooks, discard it, and throw the coded error,
 * redacted. A failed build's error is redacted here too, whatever the
 * executor (the secret values of the environment to carry out): the one place
 * every engine's build error passes on its way out of a deployment. A failed
 * deployment leaves nothing running and the previous one current; an
 * interrupted one runs no more of the application's code.
 */
export async function deploy<B extends Built>(toCarryOut: PlanToCarryOut, executor: Executor<B>, options: DeployFlowOptions): Promise<Deployed<B>> {
  const { signal } = options;
  // One logger for the whole deployment, whatever the engine: every line it writes is redacted with the secrets it carries out.
  const logger = new Logger(options.sink, toCarryOut.environment.redactor);
  // Every engine's build error leaves here redacted, whatever the engine quoted in it (a step's output, an engine's message).
  const built = await executor.build(toCarryOut, { signal, logger }).catch((error: unknown) => {
    throw redactError(error, toCarryOut.environment.redactor);
  });
  const { plan, environment, host } = built;
  for (const w of executor.unhonoured?.(plan) ?? []) logger.warn(`${w.code}: ${w.message} Fix: ${w.fix}`);
  const fail = async (error: unknown, running?: RunningApp): Promise<never> => {
    await running?.stop();
    if (!signal?.aborted) await runOutcomeHooks(executor, built, 'failed', signal);
    await executor.discard(built);
    throw redactError(error, environment.redactor);
  };
  if (await executor.portInUse(built)) {
    const { port } = plan.healthCheck;
    return fail(CoreErrors.RUN_PORT_IN_USE.create({ message: `port ${port} already accepts connections before the application has started.`, details: { port } }));
  }
  const running = await executor.start(built, { signal }).catch((error: unknown) => fail(error));
  const gate = await healthGate(running, plan, logger, {
    checker: options.healthChecker ?? new HttpHealthChecker(options.clock ? { clock: options.clock } : {}),
    target: executor.healthTarget(built),
    clock: options.clock ?? systemClock,
    windowMs: host.stabilityWindowMs ?? DEFAULT_STABILITY_WINDOW_MS,
    signal,
  }).catch((error: unknown) => fail(error, running));
  if ('error' in gate) return fail(gate.error, running);
  const { settled } = await executor.accept(built);
  await runOutcomeHooks(executor, built, 'succeeded', signal);
  return {
    built,
    running,
    health: gate.health,
    settled,
    stop: async () => {
      await running.stop();
      await settled;
    },
  };
}

/**
 * CC_RUN_SUCCEEDED_HOOK or CC_RUN_FAILED_HOOK, once the outcome is known: the
 * one loop every engine's hooks go through — in the plan's order, each bounded by
 * the host's step timeout, none after an interruption — and a failure, whatever
 * the engine, is the same redacted warning: it never changes the outcome.
 */
async function runOutcomeHooks<B extends Built>(executor: Executor<B>, built: B, which: 'succeeded' | 'failed', signal: AbortSignal | undefined): Promise<void> {
  const timeoutMs = built.host.buildStepTimeoutMs ?? DEFAULT_BUILD_STEP_TIMEOUT_MS;
  for (const hook of built.lowered.runHooks[which]) {
    if (signal?.aborted) return;
    try {
      await executor.runHook(built, hook, { signal, timeoutMs });
    } catch (error) {
      const redacted = redactError(error, built.environment.redactor);
      const reason = isRunplanError(redacted) ? `${redacted.code}: ${redacted.reason}` : (redacted as Error).message;
      built.logger.warn(`${CoreWarnings.HOOK_FAILED.code}: ${reason} The deployment ${which === 'succeeded' ? 'succeeded' : 'failed'} all the same.`);
    }
  }
}
