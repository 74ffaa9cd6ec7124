import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Builder, BuildOptions, StepReport } from '../executor/contract.js';
import { writablePathInside } from '../files/app-path.js';
import { type AppUser, appUser, userEnvironment } from '../process/app-user.js';
import type { Logger } from '../log/logger.js';
import { describeStep as describe } from '../plan/describe.js';
import { type LoweredLayer, type LoweredPlan, type LoweredStep, lowerPlan, mergeEnvironment } from '../lowering/lower.js';
import { DEFAULT_BUILD_STEP_TIMEOUT_MS } from '../host/host-settings.js';
import { BUILD_TAG_VARIABLE } from '../process/process-tree.js';
import { localBindings } from '../process/run-dir.js';
import { carryOutInstall } from './install/install-step.js';
import type { TreeOptions } from './install/tree-cache.js';
import type { LayerCache, LayerWarning } from './layer-cache.js';
import type { ReadyLayers } from './ready-layers.js';
import { materialiseFiles } from '../process/materialise-files.js';
import { prepareSsh, type SshSetup } from './ssh-setup.js';
import { removeBuildCredentials } from './build-credentials.js';
import { assertReachable, handOver, mkdirOwned } from '../process/ownership.js';
import { UserFiles } from '../process/user-files.js';
import { isolateNpm, systemEnvironment } from '../process/process-env.js';
import { runCommandStep } from '../steps/command-step.js';
import type { SandboxScope } from '../sandbox/sandbox.js';
import { type OutputWarning, reportWarnings } from '../process/output-warnings.js';

export interface StepBuilderOptions {
  /** Per-application layer cache; without one, every step runs. */
  readonly layers?: LayerCache;
  /** How install steps fetch (npm runner, fetch, clock, attempts); the defaults use the host's npm and the network. */
  readonly install?: Omit<TreeOptions, 'log' | 'signal'>;
  /** npm's cache for this application's builds (see isolateNpm); without one, steps get a cache in their temporary directory. */
  readonly npmCacheDir?: string;
  /** Who the steps run as; by default the unprivileged user when runplan is root, else runplan's own (process/app-user.ts). */
  readonly user?: AppUser;
  /** The build's walls: every command step runs inside them, as their user (which `user` then must be). */
  readonly scope?: SandboxScope;
  /** Copies of the cached layers made ahead for the next build (prepareNext): restoring one is a rename. */
  readonly ready?: ReadyLayers;
}

/**
 * Carries out a plan's build steps in order — commands with execa, installs
 * through the shared tree cache — with every output line shown with the step's
 * name. The first failing step stops the build with the coded error of the
 * first of its onFailure rules that matches, else RUNPLAN_E_BUILD_STEP_FAILED.
 * A step that fills a cacheable layer is skipped when the layer is cached under
 * the same key. Nothing here knows a buildpack: the plan is all it reads.
 */
export class StepBuilder implements Builder {
  /** The layers the last build left in the cache, whose copies prepareNext makes. */
  private cached: { layer: LoweredLayer; files: UserFiles }[] = [];

  constructor(private readonly options: StepBuilderOptions = {}) {}

  /**
   * Makes, for each layer the last build restored or saved, the copy the next
   * build will restore by a rename (ReadyLayers). For the caller to run once the
   * build is accepted, under the build lock: the copy costs what restoring it
   * used to, off the deployment's way. A copy that cannot be made only costs the
   * next build the usual restore.
   */
  async prepareNext(logger?: Logger): Promise<void> {
    const { layers, ready } = this.options;
    const cached = this.cached;
    this.cached = [];
    if (!layers || !ready) return;
    for (const { layer, files } of cached) {
      await ready.prepare(layers, layer.name, layer.cacheKey as string, files).catch((error: Error) => logger?.warn(`could not prepare layer ${layer.name} for the next build: ${error.message}`));
    }
  }

  async build({
    plan,
    lowered: given,
    appDir,
    buildRoot,
    env: planned,
    host,
    logger,
    signal,
    tempDir,
    buildTag,
    noCache = false,
    sshDir,
    sshTrustedHostsFile,
    stack,
  }: BuildOptions): Promise<StepReport[]> {
    const bindings = localBindings(appDir, stack);
    const lowered = given ?? lowerPlan(plan, bindings);
    const env = planned.bound(bindings);
    // A committed `node_modules` → elsewhere would have the cache restore or save a folder of the host.
    for (const layer of plan.layers) await writablePathInside(appDir, layer.path, 'dependency layer');
    const user = this.options.scope?.user ?? this.options.user ?? (await appUser());
    await assertReachable(appDir, user, 'build directory');
    // A build createBuildDirectory made is the user's already; a directory a host prepared becomes the user's here.
    await handOver(buildRoot ?? appDir, user);
    // Everything below is done in the user's tree as the user (docs/security.md, "Privilege model").
    const files = new UserFiles(user);
    const written = await materialiseFiles(lowered.files, 'build', appDir, env, files);
    for (const path of written) logger.info(`wrote ${path}`);
    const home = tempDir ?? join(appDir, '.runplan', 'home');
    if (user.dropped) {
      if (tempDir === undefined) await files.apply([{ kind: 'mkdir', path: home, mode: 0o700 }]);
      else await handOver(home, user);
      // npm's cache of this application is written by its steps: the user's (made by root before, it is handed over once).
      const npmCache = this.options.npmCacheDir;
      if (npmCache) {
        // Only the application's own folder is the user's: the folder of every application's caches stays root's.
        await mkdir(dirname(npmCache), { recursive: true, mode: 0o711 });
        await mkdirOwned(npmCache, user, 0o700);
        await handOver(npmCache, user);
      }
    }
    // The build's SSH key (CC_SSH_PRIVATE_KEY), outside the application, for the steps only; removed whatever happens.
    const ssh = plan.build.sshKey ? await prepareSsh(plan.build.sshKey, { env: planned, host, user, logger, dir: sshDir, trustedHostsFile: sshTrustedHostsFile }) : undefined;
    try {
      const reports = await this.runSteps(lowered, appDir, env, host, logger, user, home, { signal, tempDir, buildTag, ssh, noCache, files });
      await removeBuildCredentials(plan, appDir, files, logger);
      return reports;
    } finally {
      await ssh?.remove();
    }
  }

  private async runSteps(
    lowered: LoweredPlan,
    appDir: string,
    env: BuildOptions['env'],
    host: BuildOptions['host'],
    logger: Logger,
    user: AppUser,
    home: string,
    {
      signal,
      tempDir,
      buildTag,
      ssh,
      noCache,
      files,
    }: { signal: AbortSignal | undefined; tempDir: string | undefined; buildTag: string | undefined; ssh: SshSetup | undefined; noCache: boolean; files: UserFiles },
  ): Promise<StepReport[]> {
    const reports: StepReport[] = [];
    this.cached = [];
    const restored = new Map<string, LoweredLayer>();
    const layers = noCache ? undefined : this.options.layers;
    // Saved all the same: the next build finds what this one made.
    const saving = this.options.layers;
    const { plan } = lowered;
    if (noCache && saving && plan.layers.some((l) => l.cacheKey)) logger.info('build cache not used for this build (--no-cache): every layer is built, then saved for the next build');
    // Warm-start layers no step fills (CC_OVERRIDE_BUILDCACHE paths): in place before the first step, saved after the last.
    const unattached = lowered.build.warmStart;
    if (layers) for (const layer of unattached) await warmStart(layers, layer, logger, files);
    // A layer a later step checks is saved once that step has passed: the cache holds only what passed it.
    const verified = new Set(plan.build.steps.map((s) => s.verifiesLayer).filter((name): name is string => name !== undefined));
    const awaitingCheck = new Map<string, { layer: LoweredLayer; warnings: LayerWarning[] }>();
    for (const { step, layer } of lowered.build.steps) {
      const started = Date.now();
      if (step.onlyIfLayerRestored !== undefined && !restored.has(step.onlyIfLayerRestored)) continue;
      const restoredLayer = step.verifiesLayer === undefined ? undefined : restored.get(step.verifiesLayer);
      if (restoredLayer && layers) {
        logger.emit({ kind: 'step', name: step.name, stream: 'stdout' }, `layer ${restoredLayer.name} came from the cache, which holds it only once it passed this check`);
        // What the check found when the layer was made is still true of this copy.
        await replayWarnings(layers, restoredLayer, step.name, logger);
        reports.push({ name: step.name, status: 'cached', durationMs: Date.now() - started });
        logger.event({ type: 'step-finished', step: step.name, status: 'cached', durationMs: Date.now() - started });
        continue;
      }
      if (layer?.reuse === 'warm-start' && layer.cacheKey && layers) await warmStart(layers, layer, logger, files);
      if (layer?.cacheKey && layer.reuse === undefined && layers && (await restoreLayer(layers, layer, logger, files, this.options.ready, signal))) {
        this.cached.push({ layer, files });
        logger.emit({ kind: 'step', name: step.name, stream: 'stdout' }, `reused cached layer ${layer.name} (key ${layer.cacheKey.slice(0, 12)})`);
        // What the step said while filling the layer (npm's blocked install scripts) is still true of this copy.
        await replayWarnings(layers, layer, step.name, logger);
        restored.set(layer.name, layer);
        reports.push({ name: step.name, status: 'cached', durationMs: Date.now() - started });
        logger.event({ type: 'step-finished', step: step.name, status: 'cached', durationMs: Date.now() - started });
        continue;
      }
      logger.event({ type: 'step-started', step: step.name }, `step ${step.name}: ${describe(step)}`);
      const log = (line: string) => logger.emit({ kind: 'step', name: step.name, stream: 'stdout' }, line);
      let warnings: OutputWarning[] = [];
      try {
        if (step.run.kind === 'install') {
          await carryOutInstall(step.run, appDir, host.cacheDir, { ...this.options.install, log, user, ...(signal ? { signal } : {}) });
        } else {
          try {
            warnings = await this.runCommand(step, env, logger, user, home, signal, tempDir, host.buildStepTimeoutMs ?? DEFAULT_BUILD_STEP_TIMEOUT_MS, buildTag, ssh?.env);
          } finally {
            await ssh?.afterStep();
          }
        }
      } catch (error) {
        logger.event({ type: 'step-finished', step: step.name, status: 'failed', durationMs: Date.now() - started });
        throw error;
      }
      const raised = warnings.map((w) => ({ ...w, step: step.name }));
      if (layer?.cacheKey && saving) {
        if (verified.has(layer.name)) awaitingCheck.set(layer.name, { layer, warnings: raised });
        else if (await saveLayer(saving, layer, logger, files, raised)) this.cached.push({ layer, files });
      }
      const checked = step.verifiesLayer === undefined ? undefined : awaitingCheck.get(step.verifiesLayer);
      if (checked && saving) {
        awaitingCheck.delete(checked.layer.name);
        if (await saveLayer(saving, checked.layer, logger, files, [...checked.warnings, ...raised])) this.cached.push({ layer: checked.layer, files });
      }
      reports.push({ name: step.name, status: 'succeeded', durationMs: Date.now() - started });
      logger.event({ type: 'step-finished', step: step.name, status: 'succeeded', durationMs: Date.now() - started });
    }
    if (saving) for (const layer of unattached) await saveLayer(saving, layer, logger, files);
    return reports;
  }

  private async runCommand(
    step: LoweredStep,
    env: BuildOptions['env'],
    logger: Logger,
    user: AppUser,
    home: string,
    signal: AbortSignal | undefined,
    tempDir: string | undefined,
    timeoutMs: number,
    buildTag: string | undefined,
    sshEnv: Readonly<Record<string, string>> | undefined,
  ): Promise<OutputWarning[]> {
    const childEnv = isolateNpm(mergeEnvironment({ ...systemEnvironment(process.env, tempDir), ...userEnvironment(user, home) }, env.toRecord(), step), {
      tempDir,
      cacheDir: this.options.npmCacheDir ?? (tempDir === undefined ? undefined : join(tempDir, 'npm-cache')),
    });
    // Last, so that no variable of the application replaces them.
    Object.assign(childEnv, sshEnv);
    if (buildTag !== undefined) childEnv[BUILD_TAG_VARIABLE] = buildTag;
    return runCommandStep(step, {
      env: childEnv,
      logger,
      user,
      scope: this.options.scope,
      signal,
      timeoutMs,
    });
  }
}

/** Puts a cached layer in the build (a copy of the build's own: the one made ahead, else unpacked now); on any failure the step simply runs. */
async function restoreLayer(layers: LayerCache, layer: LoweredLayer, logger: Logger, files: UserFiles, ready: ReadyLayers | undefined, signal: AbortSignal | undefined): Promise<boolean> {
  const key = layer.cacheKey as string;
  if (!(await layers.has(layer.name, key))) return false;
  const target = layer.dir;
  try {
    if (!(await ready?.take(layers, layer.name, key, target, files, signal))) await layers.restore(layer.name, key, target, files);
    return true;
  } catch (error) {
    logger.warn(`could not reuse cached layer ${layer.name}: ${(error as Error).message}; running the step instead`);
    // The step then meets whatever is in the way, and fails with its own code if it must.
    await files.remove(target).catch(() => undefined);
    return false;
  }
}

/** Puts the last build's copy of a warm-start layer in place, under what the build already has; the steps run all the same. */
async function warmStart(layers: LayerCache, layer: LoweredLayer, logger: Logger, files: UserFiles): Promise<void> {
  const key = layer.cacheKey as string;
  if (!(await layers.has(layer.name, key))) return;
  try {
    await layers.restore(layer.name, key, layer.dir, files, { keepExisting: true });
    logger.info(`restored ${layer.path} from the build cache (the last build's copy; the steps still run)`);
  } catch (error) {
    logger.warn(`could not restore ${layer.path} from the build cache: ${(error as Error).message}; building without it`);
  }
}

/** Logs the warnings `step` raised when the restored layer was made. */
async function replayWarnings(layers: LayerCache, layer: LoweredLayer, step: string, logger: Logger): Promise<void> {
  const saved = await layers.warnings(layer.name, layer.cacheKey as string);
  const own = saved.filter((w) => w.step === step);
  reportWarnings(own, logger, ` (found by step ${step} when layer ${layer.name} was cached)`);
}

/** Whether the layer is now in the cache. */
async function saveLayer(layers: LayerCache, layer: LoweredLayer, logger: Logger, files: UserFiles, warnings: readonly LayerWarning[] = []): Promise<boolean> {
  const path = layer.dir;
  // An application without dependencies: the step made no layer, and there is nothing to keep.
  if (!(await files.isDirectory(path).catch(() => false))) return false;
  try {
    await layers.save(layer.name, layer.cacheKey as string, path, files, { warnings });
    return true;
  } catch (error) {
    // A cache that cannot be written only costs time on the next build.
    logger.warn(`could not cache layer ${layer.name}: ${(error as Error).message}`);
    return false;
  }
}
