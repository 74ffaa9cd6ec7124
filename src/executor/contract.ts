import type { HealthTarget, RunningApp } from '../buildpack/contract.js';
import type { Environment } from '../env/assemble.js';
import type { HostSettings } from '../host/host-settings.js';
import type { Logger } from '../log/logger.js';
import type { PlanWarning, RunPlan } from '../plan/schema.js';
import type { PlanToCarryOut } from '../planning/plan-to-carry-out.js';

/** What an executor made of a plan — a build directory, an image — which it starts, hooks, accepts or discards. */
export interface Built {
  /** The plan carried out. */
  readonly plan: RunPlan;
  /** The full environment with values (secrets included): keep it in memory, never print it. */
  readonly environment: Environment;
  readonly host: HostSettings;
  /** Where every line of this deployment goes, redacted. */
  readonly logger: Logger;
}

/** What Executor.start and Executor.outcomeHooks are given. */
export interface ExecutorStartOptions {
  /** SIGINT/SIGTERM to runplan: a pre-run hook still running is stopped with everything it started. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * One way to carry out a plan (issue 23), as CNB's lifecycle drives every
 * platform: each engine — this machine, an image on Docker — says how it
 * builds, starts, reaches and finishes a deployment, and the one deploy flow
 * (deploy-flow.ts) decides when: port check, start, health gate, outcome hooks,
 * accept or discard, redaction. A host embeds runplan by choosing an executor.
 */
export interface Executor<B extends Built = Built> {
  /** How logs and the conformance suite name it: "local", "docker"… */
  readonly name: string;
  /**
   * What of this plan the executor carries out otherwise than the plan says,
   * each a coded warning the deploy flow prints before the processes start: an
   * engine is never silently different (the conformance suite checks each case
   * an engine declares here).
   */
  unhonoured?(plan: RunPlan): readonly PlanWarning[];
  /** Carries out the plan's build: the plan is made (or read) once, before, by the caller of the deploy flow. */
  build(toCarryOut: PlanToCarryOut, options: ExecutorStartOptions): Promise<B>;
  /** Whether something already answers where the deployment's health check will look (it would answer in the application's place). */
  portInUse(built: B): Promise<boolean>;
  /** Starts the plan's processes (pre-run hooks first); rejects, with nothing left running, when one cannot start. */
  start(built: B, options: ExecutorStartOptions): Promise<RunningApp>;
  /** Where and how the health gate reaches the deployment. */
  healthTarget(built: B): HealthTarget;
  /** CC_RUN_SUCCEEDED_HOOK / CC_RUN_FAILED_HOOK: they never change the outcome; a failure is RUNPLAN_W_HOOK_FAILED. */
  outcomeHooks(built: B, which: 'succeeded' | 'failed', options: ExecutorStartOptions): Promise<void>;
  /** The deployment passed its gate: it becomes the current one; `settled` resolves once what it replaced is gone. */
  accept(built: B): Promise<{ readonly settled: Promise<void> }>;
  /** The deployment failed: what was made for it goes, and the previous one stays. */
  discard(built: B): Promise<void>;
}
