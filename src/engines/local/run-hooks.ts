import { systemEnvironment } from '../../process/process-env.js';
import { runCommandStep } from '../../steps/command-step.js';
import type { Environment } from '../../env/assemble.js';
import { type AppUser, userEnvironment } from '../../process/app-user.js';
import { DEFAULT_BUILD_STEP_TIMEOUT_MS } from '../../host/host-settings.js';
import type { Logger } from '../../log/logger.js';
import { describeStep } from '../../plan/describe.js';
import { type LoweredStep, mergeEnvironment } from '../../lowering/lower.js';
import type { SandboxScope } from '../../sandbox/sandbox.js';

export interface RunHookContext {
  /** The deployment environment, placeholders bound. */
  readonly env: Environment;
  readonly logger: Logger;
  readonly user: AppUser;
  /** The walls the hooks run in (their user is the scope's). */
  readonly scope?: SandboxScope | undefined;
  /** A private directory of the hooks' user: their HOME (when runplan is root) and TMPDIR. */
  readonly home: string;
  /** How long each hook may run (the host's step timeout); default DEFAULT_BUILD_STEP_TIMEOUT_MS. */
  readonly timeoutMs?: number | undefined;
  /** Stops the running hook, with everything it started, and rejects (SIGINT/SIGTERM to runplan). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Runs run-phase hooks (the lowered plan's runHooks) in order, each as a build step is
 * run: a shell line in the application folder, with the application's
 * environment, as the unprivileged user when runplan is root. The first
 * failure is thrown (its onFailure rule gives RUNPLAN_E_HOOK_FAILED and the
 * variable); the caller decides whether it fails the deployment.
 */
export async function runHookSteps(steps: readonly LoweredStep[], ctx: RunHookContext): Promise<void> {
  for (const step of steps) {
    ctx.logger.info(`hook ${step.name}: ${describeStep(step)}`);
    await runCommandStep(step, {
      env: mergeEnvironment({ ...systemEnvironment(process.env, ctx.home), ...userEnvironment(ctx.user, ctx.home) }, ctx.env.toRecord(), step),
      logger: ctx.logger,
      user: ctx.user,
      scope: ctx.scope,
      timeoutMs: ctx.timeoutMs ?? DEFAULT_BUILD_STEP_TIMEOUT_MS,
      signal: ctx.signal,
    });
  }
}
