import { mkdir } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import type { StackBindings } from '../../buildpack/contract.js';
import type { Builder, HealthChecker, HealthReport, HealthTarget, Runner, RunningApp, StepReport } from '../../executor/contract.js';
import type { Executor, ExecutorBuildOptions, ExecutorStartOptions, HookRunOptions } from '../../executor/contract.js';
import { deploy } from '../../executor/deploy-flow.js';
import { healthError } from '../../executor/health-gate.js';
import { type LoweredPlan, type LoweredStep, lowerPlan } from '../../lowering/lower.js';
import { LayerCache } from '../../building/layer-cache.js';
import type { Environment } from '../../env/assemble.js';
import { StepBuilder } from '../../building/step-builder.js';
import { ReadyLayers } from '../../building/ready-layers.js';
import { acquireBuildLock } from '../../building/build-lock.js';
import { appCacheKey, appWorkspace, closeWorkspace, createBuildDirectory, removeAbandonedBuildTemp, SSH_TRUSTED_HOSTS_FILE, workspaceTempDir, type AppWorkspace } from '../../building/workspace.js';
import { appUser } from '../../process/app-user.js';
import { handOver, mkdirOwned } from '../../process/ownership.js';
import { runHookSteps } from './run-hooks.js';
import { localBindings } from '../../process/run-dir.js';
import { redactError } from '../../env/redact-error.js';
import { probePort } from '../../health/probes.js';
import { DEFAULT_BUILD_LOCK_WAIT_MS, type HostSettings } from '../../host/host-settings.js';
import { Logger, type LogSink } from '../../log/logger.js';
import type { RunPlan } from '../../plan/schema.js';
import type { CreatePlanOptions } from '../../planning/create-plan.js';
import { planToCarryOut, type PlanToCarryOut } from '../../planning/plan-to-carry-out.js';
import { hostStackBindings } from '../../planning/stack-bindings.js';
import { type LastingRun, LocalProcessRunner } from './local-process-runner.js';
import type { Clock } from '../../time/clock.js';
import { type AppSandbox, instanceLimits, type SandboxScope } from '../../sandbox/sandbox.js';

/** Options of buildApp (and deployApp): the planning options, or a plan made earlier, and where the lines go. */
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
  /**
   * The application's walls (a host with several tenants gives each application
   * its own): its build steps, hooks and processes run as its own user, in
   * bubblewrap's namespaces with only its own folders writable, and in cgroups
   * limited to its instance (the build to its build instance). Without it they
   * run as runplan's one unprivileged user (docs/security.md, "Tenancy").
   */
  readonly sandbox?: AppSandbox;
}

/** A finished, current build of an application: the plan it carried out and the directory its processes run in. */
export interface BuiltApp {
  /** The plan that was carried out. */
  readonly plan: RunPlan;
  /** The plan lowered for `appDir`, once: what the build, the processes and the hooks carried out. */
  readonly lowered: LoweredPlan;
  /** The full environment with values (secrets included): keep it in memory, never print it. */
  readonly environment: Environment;
  readonly host: HostSettings;
  /** Directory of the successful build, where processes run. */
  readonly appDir: string;
  readonly steps: readonly StepReport[];
  readonly logger: Logger;
  /** Where this host keeps the programs the plan names (its stack placeholders' values). */
  readonly stack: StackBindings;
}

/**
 * Plans (unless given a plan) and builds an application in a fresh copy of its
 * source, and makes the build current. A failed build is removed; the previous
 * one stays.
 */
export async function buildApp(options: BuildAppOptions): Promise<BuiltApp> {
  const toCarryOut = await planToCarryOut(options);
  // A build without a deployment: no deploy flow makes its logger.
  const logger = new Logger(options.sink, toCarryOut.environment.redactor);
  const { promote, discard: _discard, workspace: _workspace, buildId: _buildId, ...built } = await buildCandidate(options, toCarryOut, logger);
  await (await promote()).settled;
  return built;
}

type LocalBuildOptions = Pick<BuildAppOptions, 'appDir' | 'registry' | 'sink' | 'builder' | 'signal' | 'clock' | 'onPlan' | 'noCache' | 'sandbox'>;

/** A finished build that is not current yet: a deployment promotes it only once healthy. */
async function buildCandidate(
  options: Omit<LocalBuildOptions, 'sink'> & Pick<DeployOptions, 'network'>,
  { plan, environment, host, inventory }: PlanToCarryOut,
  logger: Logger,
): Promise<BuiltApp & { workspace: AppWorkspace; buildId: string; promote(): Promise<{ settled: Promise<void> }>; discard(): Promise<void> }> {
  options.onPlan?.(plan);
  // Before anything is copied: a host without the plan's Ruby refuses it here.
  const stack = await hostStackBindings(plan, { registry: options.registry, inventory, host, signal: options.signal }).catch((error: unknown) => {
    throw redactError(error, environment.redactor);
  });
  // One application per folder: two folders of one repository (APP_FOLDER) are two applications.
  const workspace = appWorkspace(host.workDir, join(resolve(options.appDir), plan.app.folder ?? ''));
  // The application's own disk under everything of its workspace (the build lock's file included).
  const disk = await options.sandbox?.mountDisk(workspace.root);
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
  const { sandbox } = options;
  const user = sandbox?.user ?? (await appUser());
  const appKey = appCacheKey(workspace);
  // On the application's own disk when it has one: what its builds download counts against it too.
  const npmCacheDir = disk ? join(workspace.root, 'npm-cache') : join(host.cacheDir, 'npm-cache', appKey);
  let scope: SandboxScope | undefined;
  try {
    await closeWorkspace(workspace, user);
    await removeAbandonedBuildTemp(workspace, user);
    buildDir = await createBuildDirectory(workspace, options.appDir, plan.app.folder ?? '', user);
    temp = await workspaceTempDir(workspace, `build-${basename(buildDir.dir)}`, user);
    if (sandbox) {
      // The applications' caches side by side: the parent root's (0711), each one its application's own (0700).
      await mkdir(dirname(npmCacheDir), { recursive: true, mode: 0o711 });
      await mkdirOwned(npmCacheDir, user, 0o700);
      await handOver(npmCacheDir, user);
      // The build is sized for its build instance (the steps are told that size too).
      // In the release's own network when it has one: the build reaches what the release will, and nothing more.
      scope = await sandbox.open({
        name: `build-${basename(buildDir.dir)}`,
        limits: instanceLimits(host.buildInstance ?? host.instance),
        writable: [workspace.root, npmCacheDir],
        ...(options.network ? { network: options.network } : {}),
      });
    }
  } catch (error) {
    await released(async () => buildDir?.discard().catch(() => undefined))();
    throw error;
  }
  const build = buildDir;
  // A failed build that cannot be removed (its application made part of it unremovable) must not hide why it failed.
  const discard = () => build.discard().catch((error: Error) => logger.warn(`could not remove the failed build ${build.dir}: ${error.message}`));
  try {
    // npm's cache is this application's own (never the user's shared ~/.npm), kept between its builds.
    const own = options.builder
      ? undefined
      : new StepBuilder({ layers: LayerCache.forApp(host.cacheDir, appKey), ready: new ReadyLayers(workspace.root, user), npmCacheDir, user, ...(scope ? { scope } : {}) });
    const builder = options.builder ?? (own as StepBuilder);
    // Lowered once for this build's directory: the builder, the runner and the outcome hooks carry out this one.
    const lowered = lowerPlan(plan, localBindings(build.appDir, stack));
    const steps = await builder.build({
      plan,
      lowered,
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
      stack,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // In the application's terms: where its workspace is on the host is the host's business (a tenant reads this line).
    logger.info(`build succeeded: builds/${relative(join(workspace.root, 'builds'), build.appDir)}`);
    return {
      plan,
      lowered,
      environment,
      host,
      appDir: build.appDir,
      steps,
      logger,
      stack,
      workspace,
      buildId: basename(build.dir),
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
          // The next build's copy of node_modules, made now rather than on its way.
          await own?.prepareNext(logger);
        })();
        return { settled };
      },
      discard: released(discard),
    };
  } catch (error) {
    await released(discard)();
    throw redactError(error, environment.redactor);
  } finally {
    // Nothing the build started outlives it.
    await scope?.close();
    await temp.remove();
  }
}

/** Options of deployApp and LocalExecutor: those of buildApp, and the runner and health checker to use instead of the defaults. */
export interface DeployOptions extends BuildAppOptions {
  readonly runner?: Runner;
  readonly healthChecker?: HealthChecker;
  /** The processes kept by s6 in a supervision tree, so that they outlive runplan's process (docs/engines.md). */
  readonly lasting?: LastingRun;
  /**
   * The release's own network namespace (ReleaseNetworks.create()), with a
   * sandbox: its processes run in it and are health-checked at its address.
   */
  readonly network?: { readonly path: string; readonly address: string };
}

/** A healthy deployment on this machine (deployApp): its build, its running processes and its health report. */
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
 * What the service does on a push, on this machine: the one deploy flow
 * (src/executor/deploy-flow.ts) with the local executor. Only a healthy
 * deployment's build becomes current; a failed one leaves nothing running, its
 * build removed and the previous one current, and throws the coded error.
 */
export async function deployApp(options: DeployOptions): Promise<Deployment> {
  const { built, running, health, settled, stop } = await deploy(await planToCarryOut(options), new LocalExecutor(options), options);
  const { promote: _promote, discard: _discard, workspace: _workspace, buildId: _buildId, ...app } = built;
  return { ...app, running, health, settled, stop };
}

type LocalBuild = Awaited<ReturnType<typeof buildCandidate>>;

/** How this machine builds and runs a plan: where the application's files are, where lines go, and the parts a host may replace. */
export type LocalExecutorOptions = Omit<LocalBuildOptions, 'sink'> & Pick<DeployOptions, 'runner' | 'lasting' | 'network'>;

/**
 * This machine as an executor: the build in a fresh copy of the source under
 * the work directory, the processes as local child processes of the
 * LocalProcessRunner (or the runner given), the health check on 127.0.0.1 with
 * the listen address verified, the outcome hooks in the build, and a healthy
 * build made current.
 */
export class LocalExecutor implements Executor<LocalBuild> {
  readonly name = 'local';

  constructor(private readonly options: LocalExecutorOptions) {}

  build(toCarryOut: PlanToCarryOut, { signal, logger }: ExecutorBuildOptions): Promise<LocalBuild> {
    return buildCandidate({ ...this.options, ...(signal ? { signal } : {}) }, toCarryOut, logger);
  }

  portInUse(built: LocalBuild): Promise<boolean> {
    return probePort(this.address, built.plan.healthCheck.port, 1_000);
  }

  start(built: LocalBuild, { signal }: ExecutorStartOptions): Promise<RunningApp> {
    const { sandbox, clock } = this.options;
    const runner =
      this.options.runner ??
      new LocalProcessRunner({
        ...(clock ? { clock } : {}),
        ...(this.options.lasting ? { lasting: this.options.lasting } : {}),
        ...(sandbox
          ? {
              user: sandbox.user,
              // The release's own cgroup, sized for its instance; a draining release keeps its own meanwhile.
              confine: (runDir: string) =>
                sandbox.open({
                  name: `run-${built.buildId}`,
                  limits: instanceLimits(built.host.instance),
                  writable: [built.workspace.root, runDir],
                  ...(this.options.network ? { network: this.options.network } : {}),
                }),
            }
          : {}),
      });
    return runner.start({
      plan: built.plan,
      lowered: built.lowered,
      appDir: built.appDir,
      env: built.environment,
      logger: built.logger,
      stack: built.stack,
      ...(signal ? { signal } : {}),
      ...(built.host.buildStepTimeoutMs ? { hookTimeoutMs: built.host.buildStepTimeoutMs } : {}),
    });
  }

  healthTarget(built: LocalBuild): HealthTarget {
    // In its own namespace a server bound to its loopback is simply not reached: there is no host's table to read that from.
    return { baseUrl: `http://${this.address}:${built.plan.healthCheck.port}`, check: built.plan.healthCheck, verifyListenAddress: this.options.network === undefined, whereItListens: true };
  }

  /** Where the host reaches the release: its namespace's address, or the machine's loopback. */
  private get address(): string {
    return this.options.network?.address ?? '127.0.0.1';
  }

  // CC_RUN_FAILED_HOOK runs in the failed build, before it is removed.
  runHook(built: LocalBuild, hook: LoweredStep, options: HookRunOptions): Promise<void> {
    return runLocalHook(built, hook, { ...options, sandbox: this.options.sandbox, network: this.options.network });
  }

  accept(built: LocalBuild): Promise<{ settled: Promise<void> }> {
    return built.promote();
  }

  // The failed build is not kept: the previous good build remains current.
  discard(built: LocalBuild): Promise<void> {
    return built.discard();
  }
}

/**
 * One run-succeeded or run-failed hook in the deployment's build, with the
 * application's environment, as its user and in walls of its own when runplan
 * has them; bounded by the step timeout, stopped by SIGINT/SIGTERM, rejecting
 * with its coded error (the deploy flow warns of it).
 */
async function runLocalHook(
  built: LocalBuild,
  hook: LoweredStep,
  { timeoutMs, signal, sandbox, network }: HookRunOptions & { readonly sandbox: AppSandbox | undefined; readonly network: DeployOptions['network'] },
): Promise<void> {
  let temp: Awaited<ReturnType<typeof workspaceTempDir>> | undefined;
  let scope: SandboxScope | undefined;
  try {
    const user = sandbox?.user ?? (await appUser());
    temp = await workspaceTempDir(built.workspace, `hook-${hook.name}-${basename(built.appDir)}`, user);
    scope = await sandbox?.open({ name: `${hook.name}-${built.buildId}`, limits: instanceLimits(built.host.instance), writable: [built.workspace.root], ...(network ? { network } : {}) });
    await runHookSteps([hook], { env: built.environment.bound(built.lowered.bindings), logger: built.logger, user, scope, home: temp.dir, timeoutMs, signal });
  } finally {
    await scope?.close();
    await temp?.remove();
  }
}

// Kept here for hosts that import them from the deploy module.
export { redactError, healthError };
