import { chmod } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Builder, HealthChecker, HealthReport, Runner, RunningApp, StepReport } from '../buildpack/contract.js';
import { LayerCache } from '../build/layer-cache.js';
import type { Environment } from '../env/assemble.js';
import { StepBuilder } from '../build/step-builder.js';
import { acquireBuildLock } from '../build/build-lock.js';
import { appCacheKey, appWorkspace, createBuildDirectory, removeAbandonedBuildTemp, SSH_TRUSTED_HOSTS_FILE, workspaceTempDir, type AppWorkspace } from '../build/workspace.js';
import { CoreErrors } from '../errors/core-errors.js';
import { CoreWarnings } from '../errors/core-warnings.js';
import { ownPath } from '../process/ownership.js';
import { appUser } from '../process/app-user.js';
import { runHookSteps } from '../run/run-hooks.js';
import { localBindings } from '../process/run-dir.js';
import { isRunplanError, type RunplanError } from '../errors/runplan-error.js';
import { redactError } from '../env/redact-error.js';
import { HttpHealthChecker } from '../health/http-health-checker.js';
import { probePort } from '../health/probes.js';
import { DEFAULT_BUILD_LOCK_WAIT_MS, type HostSettings } from '../host/host-settings.js';
import { Logger, type LogSink } from '../log/logger.js';
import type { RunPlan } from '../plan/schema.js';
import type { CreatePlanOptions } from '../planning/create-plan.js';
import { planToCarryOut } from '../planning/plan-to-carry-out.js';
import { LocalProcessRunner } from '../run/local-process-runner.js';
import type { Clock } from '../time/clock.js';

export interface BuildAppOptions extends CreatePlanOptions {
  readonly appDir: string;
  /**
   * A plan made earlier (`runplan plan --json`, or createPlan): carried out as
   * made, without planning again. The environment then only supplies the values
   * of the plan's secret variables.
   */
  readonly plan?: RunPlan;
  /** Receives every line (already redacted). */
  readonly sink: LogSink;
  /** Defaults to the StepBuilder with the per-application layer cache. */
  readonly builder?: Builder;
  readonly signal?: AbortSignal;
  /** Clock for waiting on another build's lock (and, deploying, the default runner's back-off and health checker's waits). */
  readonly clock?: Clock;
  /** Called with the plan before the build starts (e.g. to print it). */
  readonly onPlan?: (plan: RunPlan) => void;
  /** Restore nothing from the build cache for this build (what it builds is saved for the next one). */
  readonly noCache?: boolean;
}

export interface BuiltApp {
  /** The plan that was carried out. */
  readonly plan: RunPlan;
  /** The full environment with values (secrets included): keep it in memory, never print it. */
  readonly environment: Environment;
  readonly host: HostSettings;
  /** Directory of the successful build, where processes run. */
  readonly appDir: string;
  readonly steps: readonly StepReport[];
  readonly logger: Logger;
}

/**
 * Plans (unless given a plan) and builds an application in a fresh copy of its
 * source, and makes the build current. A failed build is removed; the previous
 * one stays.
 */
export async function buildApp(options: BuildAppOptions): Promise<BuiltApp> {
  const { promote, discard: _discard, workspace: _workspace, ...built } = await buildCandidate(options);
  await (await promote()).settled;
  return built;
}

/** A finished build that is not current yet: a deployment promotes it only once healthy. */
async function buildCandidate(options: BuildAppOptions): Promise<BuiltApp & { workspace: AppWorkspace; promote(): Promise<{ settled: Promise<void> }>; discard(): Promise<void> }> {
  const { plan, environment, host } = await planToCarryOut(options);
  const logger = new Logger(options.sink, environment.redactor);
  options.onPlan?.(plan);
  // One application per folder: two folders of one repository (APP_FOLDER) are two applications.
  const workspace = appWorkspace(host.workDir, join(resolve(options.appDir), plan.app.folder ?? ''));
  // Held until the build is promoted or discarded: two builds of one application
  // would otherwise promote over, and remove, each other's directories.
  const lock = await acquireBuildLock(workspace.root, {
    waitMs: host.buildLockWaitMs ?? DEFAULT_BUILD_LOCK_WAIT_MS,
    log: (line) => logger.info(line),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const released =
    <T>(work: () => Promise<T>) =>
    async () => {
      try {
        return await work();
      } finally {
        await lock.release();
      }
    };
  let buildDir: Awaited<ReturnType<typeof createBuildDirectory>> | undefined;
  let temp: Awaited<ReturnType<typeof workspaceTempDir>>;
  try {
    await removeAbandonedBuildTemp(workspace);
    buildDir = await createBuildDirectory(workspace, options.appDir, plan.app.folder ?? '');
    temp = await workspaceTempDir(workspace, `build-${basename(buildDir.dir)}`);
  } catch (error) {
    await released(async () => buildDir?.discard())();
    throw error;
  }
  const build = buildDir;
  try {
    const appKey = appCacheKey(workspace);
    // npm's cache is this application's own (never the user's shared ~/.npm), kept between its builds.
    const builder = options.builder ?? new StepBuilder({ layers: LayerCache.forApp(host.cacheDir, appKey), npmCacheDir: join(host.cacheDir, 'npm-cache', appKey) });
    const steps = await builder.build({
      plan,
      appDir: build.appDir,
      ...(build.appDir === build.dir ? {} : { buildRoot: build.dir }),
      env: environment,
      host,
      logger,
      tempDir: temp.dir,
      buildTag: lock.token,
      ...(options.noCache ? { noCache: true } : {}),
      // Beside the build's temporary directory, outside the build: removed when the build ends, or by the next build after a crash.
      sshDir: join(workspace.root, 'tmp', `ssh-${basename(build.dir)}`),
      sshTrustedHostsFile: join(workspace.root, SSH_TRUSTED_HOSTS_FILE),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    logger.info(`build succeeded: ${build.appDir}`);
    return {
      plan,
      environment,
      host,
      appDir: build.appDir,
      steps,
      logger,
      workspace,
      async promote() {
        let prune: () => Promise<void>;
        try {
          prune = await build.makeCurrent();
        } catch (error) {
          await lock.release();
          throw error;
        }
        // `current` is switched now. Older builds are removed afterwards, still under
        // the lock (no other build may start meanwhile), off a deployment's way to "healthy".
        const settled = released(async () => {
          try {
            await prune();
          } catch (error) {
            logger.warn(`could not remove older builds: ${(error as Error).message}`);
          }
        })();
        return { settled };
      },
      discard: released(() => build.discard()),
    };
  } catch (error) {
    await released(() => build.discard())();
    throw redactError(error, environment.redactor);
  } finally {
    await temp.remove();
  }
}

export interface DeployOptions extends BuildAppOptions {
  readonly runner?: Runner;
  readonly healthChecker?: HealthChecker;
}

export interface Deployment extends BuiltApp {
  readonly running: RunningApp;
  readonly health: HealthReport;
  /**
   * Resolves once the builds this deployment replaced are removed and the
   * application's build lock is released: done after "healthy", off its way.
   */
  readonly settled: Promise<void>;
  /** Stops every process of the deployment (and waits for `settled`). */
  stop(): Promise<void>;
}

/**
 * What the service does on a push: build, start the processes, run the health
 * check. Only a healthy deployment's build becomes current. When the check fails,
 * everything started is stopped, the build is removed and a coded error is
 * thrown: a failed deployment leaves nothing running.
 */
export async function deployApp(options: DeployOptions): Promise<Deployment> {
  const { promote, discard, workspace, ...built } = await buildCandidate(options);
  const { plan, environment, logger } = built;
  const fail = async (error: unknown, running?: RunningApp): Promise<never> => {
    await running?.stop();
    // CC_RUN_FAILED_HOOK: in the failed build, before it is removed; it cannot change the outcome.
    await runOutcomeHooks('failed', built, workspace);
    // The failed build is not kept: the previous good build remains current.
    await discard();
    throw redactError(error, environment.redactor);
  };

  // Another program on the port would answer the health check in the application's place.
  const { port } = plan.healthCheck;
  if (await probePort('127.0.0.1', port, 1_000)) {
    return fail(CoreErrors.RUN_PORT_IN_USE.create({ message: `port ${port} already accepts connections before the application has started.`, details: { port } }));
  }
  const runner = options.runner ?? new LocalProcessRunner(options.clock ? { clock: options.clock } : {});
  const running = await runner.start({ plan, appDir: built.appDir, env: environment, logger }).catch((error: unknown) => fail(error));
  let health: HealthReport;
  try {
    const checker = options.healthChecker ?? new HttpHealthChecker(options.clock ? { clock: options.clock } : {});
    health = await checker.check({ baseUrl: `http://127.0.0.1:${plan.healthCheck.port}`, check: plan.healthCheck, verifyListenAddress: true }, logger, options.signal);
  } catch (error) {
    return fail(error, running);
  }
  if (!health.ok) return fail(healthError(health), running);
  const { settled } = await promote();
  await runOutcomeHooks('succeeded', built, workspace);
  return {
    ...built,
    running,
    health,
    settled,
    stop: async () => {
      await running.stop();
      await settled;
    },
  };
}

/**
 * CC_RUN_SUCCEEDED_HOOK or CC_RUN_FAILED_HOOK, in the deployment's build with
 * the application's environment: the service runs them after the outcome is
 * known, and they never change it — a failure is logged as RUNPLAN_W_HOOK_FAILED.
 */
async function runOutcomeHooks(which: 'succeeded' | 'failed', built: BuiltApp, workspace: AppWorkspace): Promise<void> {
  const steps = built.plan.runHooks?.[which] ?? [];
  if (steps.length === 0) return;
  let temp: Awaited<ReturnType<typeof workspaceTempDir>> | undefined;
  try {
    temp = await workspaceTempDir(workspace, `hook-${which}-${basename(built.appDir)}`);
    const user = await appUser();
    await ownPath(temp.dir, user);
    await chmod(temp.dir, 0o700);
    await runHookSteps(steps, { appDir: built.appDir, env: built.environment.bound(localBindings(built.appDir)), bindings: localBindings(built.appDir), logger: built.logger, user, home: temp.dir });
  } catch (error) {
    const redacted = redactError(error, built.environment.redactor);
    const reason = isRunplanError(redacted) ? `${redacted.code}: ${redacted.reason}` : (redacted as Error).message;
    built.logger.warn(`${CoreWarnings.HOOK_FAILED.code}: ${reason} The deployment ${which === 'succeeded' ? 'succeeded' : 'failed'} all the same.`);
  } finally {
    await temp?.remove();
  }
}

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

// Kept here too: hosts and engines import it from the deploy module.
export { redactError };
