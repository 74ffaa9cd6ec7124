import { childEnvironment, systemEnvironment } from '../process/process-env.js';
import { runCommandStep } from '../process/command-step.js';
import type { Environment } from '../env/assemble.js';
import { type AppUser, userEnvironment } from '../process/app-user.js';
import { DEFAULT_BUILD_STEP_TIMEOUT_MS } from '../host/host-settings.js';
import type { Logger } from '../log/logger.js';
import { describeStep } from '../plan/describe.js';
import { bindStep, type Bindings } from '../plan/placeholders.js';
import type { BuildStep } from '../plan/schema.js';

export interface RunHookContext {
  /** Absolute directory of the built application. */
  readonly appDir: string;
  /** The deployment environment, placeholders bound. */
  readonly env: Environment;
  readonly bindings: Bindings;
  readonly logger: Logger;
  readonly user: AppUser;
  /** A private directory of the hooks' user: their HOME (when runplan is root) and TMPDIR. */
  readonly home: string;
  readonly timeoutMs?: number;
}

/**
 * Runs run-phase hooks (the plan's runHooks) in order, each as a build step is
 * run: a shell line in the application folder, with the application's
 * environment, as the unprivileged user when runplan is root. The first
 * failure is thrown (its onFailure rule gives RUNPLAN_E_HOOK_FAILED and the
 * variable); the caller decides whether it fails the deployment.
 */
export async function runHookSteps(steps: readonly BuildStep[], ctx: RunHookContext): Promise<void> {
  for (const planned of steps) {
    const step = bindStep(planned, ctx.bindings);
    ctx.logger.info(`hook ${step.name}: ${describeStep(step)}`);
    await runCommandStep(step, {
      appDir: ctx.appDir,
      env: childEnvironment(ctx.appDir, ctx.env, step.env, step.pathPrepend, { ...systemEnvironment(process.env, ctx.home), ...userEnvironment(ctx.user, ctx.home) }),
      logger: ctx.logger,
      user: ctx.user,
      timeoutMs: ctx.timeoutMs ?? DEFAULT_BUILD_STEP_TIMEOUT_MS,
    });
  }
}
