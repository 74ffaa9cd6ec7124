import { chmod, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Builder, BuildOptions, StepReport } from '../buildpack/contract.js';
import { writablePathInside } from '../files/app-path.js';
import { type AppUser, appUser, userEnvironment } from '../process/app-user.js';
import type { Logger } from '../log/logger.js';
import { describeStep as describe } from '../plan/describe.js';
import { bindStep } from '../plan/placeholders.js';
import type { BuildStep, Layer } from '../plan/schema.js';
import { DEFAULT_BUILD_STEP_TIMEOUT_MS } from '../host/host-settings.js';
import { BUILD_TAG_VARIABLE } from '../process/process-tree.js';
import { localBindings } from '../process/run-dir.js';
import { carryOutInstall } from './install/install-step.js';
import type { TreeOptions } from './install/tree-cache.js';
import type { LayerCache } from './layer-cache.js';
import { materialiseFiles } from '../process/materialise-files.js';
import { prepareSsh, type SshSetup } from './ssh-setup.js';
import { assertReachable, mkdirOwned, ownPath, ownTree } from '../process/ownership.js';
import { childEnvironment, isolateNpm, systemEnvironment } from '../process/process-env.js';
import { runCommandStep } from '../process/command-step.js';

export interface StepBuilderOptions {
  /** Per-application layer cache; without one, every step runs. */
  readonly layers?: LayerCache;
  /** How install steps fetch (npm runner, fetch, clock, attempts); the defaults use the host's npm and the network. */
  readonly install?: Omit<TreeOptions, 'log' | 'signal'>;
  /** npm's cache for this application's builds (see isolateNpm); without one, steps get a cache in their temporary directory. */
  readonly npmCacheDir?: string;
  /** Who the steps run as; by default the unprivileged user when runplan is root, else runplan's own (process/app-user.ts). */
  readonly user?: AppUser;
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
  constructor(private readonly options: StepBuilderOptions = {}) {}

  async build({ plan, appDir, buildRoot, env: planned, host, logger, signal, tempDir, buildTag, noCache = false, sshDir, sshTrustedHostsFile }: BuildOptions): Promise<StepReport[]> {
    const bindings = localBindings(appDir);
    const env = planned.bound(bindings);
    // A committed `node_modules` → elsewhere would have the cache restore or save a folder of the host.
    for (const layer of plan.layers) await writablePathInside(appDir, layer.path, 'dependency layer');
    const written = await materialiseFiles(plan.files, 'build', appDir, env, bindings);
    for (const path of written) logger.info(`wrote ${path}`);
    // The copied source and the planned files become the user's: its steps write the build, and nothing else.
    const user = this.options.user ?? (await appUser());
    await assertReachable(appDir, user, 'build directory');
    await ownTree(buildRoot ?? appDir, user);
    const home = tempDir ?? join(appDir, '.runplan', 'home');
    if (user.dropped) {
      await mkdirOwned(home, user, 0o700);
      await ownPath(home, user);
      await chmod(home, 0o700);
      // npm's cache of this application is written by its steps: the user's (made by root before, it is handed over once).
      const npmCache = this.options.npmCacheDir;
      if (npmCache) {
        await mkdirOwned(npmCache, user, 0o700);
        if ((await stat(npmCache)).uid !== user.uid) await ownTree(npmCache, user);
      }
    }
    // The build's SSH key (CC_SSH_PRIVATE_KEY), outside the application, for the steps only; removed whatever happens.
    const ssh = plan.build.sshKey ? await prepareSsh(plan.build.sshKey, { env: planned, host, user, logger, dir: sshDir, trustedHostsFile: sshTrustedHostsFile }) : undefined;
    try {
      return await this.runSteps(plan, appDir, env, host, logger, user, home, { signal, tempDir, buildTag, ssh, noCache });
    } finally {
      await ssh?.remove();
    }
  }

  private async runSteps(
    plan: BuildOptions['plan'],
    appDir: string,
    env: BuildOptions['env'],
    host: BuildOptions['host'],
    logger: Logger,
    user: AppUser,
    home: string,
    { signal, tempDir, buildTag, ssh, noCache }: { signal: AbortSignal | undefined; tempDir: string | undefined; buildTag: string | undefined; ssh: SshSetup | undefined; noCache: boolean },
  ): Promise<StepReport[]> {
    const bindings = localBindings(appDir);
    const reports: StepReport[] = [];
    const restored = new Set<string>();
    const layers = noCache ? undefined : this.options.layers;
    // Saved all the same: the next build finds what this one made.
    const saving = this.options.layers;
    if (noCache && saving && plan.layers.some((l) => l.cacheKey)) logger.info('build cache not used for this build (--no-cache): every layer is built, then saved for the next build');
    // Warm-start layers no step fills (CC_OVERRIDE_BUILDCACHE paths): in place before the first step, saved after the last.
    const unattached = plan.layers.filter((l) => l.reuse === 'warm-start' && l.cacheKey && !plan.build.steps.some((s) => s.layer === l.name));
    if (layers) for (const layer of unattached) await warmStart(layers, layer, appDir, logger, user);
    for (const planned of plan.build.steps) {
      const started = Date.now();
      if (planned.onlyIfLayerRestored !== undefined && !restored.has(planned.onlyIfLayerRestored)) continue;
      const layer = planned.layer === null ? undefined : plan.layers.find((l) => l.name === planned.layer);
      if (layer?.reuse === 'warm-start' && layer.cacheKey && layers) await warmStart(layers, layer, appDir, logger, user);
      if (layer?.cacheKey && layer.reuse === undefined && layers && (await restoreLayer(layers, layer, appDir, logger, user))) {
        logger.emit({ kind: 'step', name: planned.name, stream: 'stdout' }, `reused cached layer ${layer.name} (key ${layer.cacheKey.slice(0, 12)})`);
        restored.add(layer.name);
        reports.push({ name: planned.name, status: 'cached', durationMs: Date.now() - started });
        logger.event({ type: 'step-finished', step: planned.name, status: 'cached', durationMs: Date.now() - started });
        continue;
      }
      const step = bindStep(planned, bindings);
      logger.event({ type: 'step-started', step: step.name }, `step ${step.name}: ${describe(step)}`);
      const log = (line: string) => logger.emit({ kind: 'step', name: step.name, stream: 'stdout' }, line);
      try {
        if (step.run.kind === 'install') {
          await carryOutInstall(step.run, appDir, host.cacheDir, { ...this.options.install, log, user, ...(signal ? { signal } : {}) });
        } else {
          try {
            await this.runCommand(step, appDir, env, logger, user, home, signal, tempDir, host.buildStepTimeoutMs ?? DEFAULT_BUILD_STEP_TIMEOUT_MS, buildTag, ssh?.env);
          } finally {
            await ssh?.afterStep();
          }
        }
      } catch (error) {
        logger.event({ type: 'step-finished', step: step.name, status: 'failed', durationMs: Date.now() - started });
        throw error;
      }
      if (layer?.cacheKey && saving) await saveLayer(saving, layer, appDir, logger);
      reports.push({ name: step.name, status: 'succeeded', durationMs: Date.now() - started });
      logger.event({ type: 'step-finished', step: step.name, status: 'succeeded', durationMs: Date.now() - started });
    }
    if (saving) for (const layer of unattached) await saveLayer(saving, layer, appDir, logger);
    return reports;
  }

  private async runCommand(
    step: BuildStep,
    appDir: string,
    env: BuildOptions['env'],
    logger: Logger,
    user: AppUser,
    home: string,
    signal: AbortSignal | undefined,
    tempDir: string | undefined,
    timeoutMs: number,
    buildTag: string | undefined,
    sshEnv: Readonly<Record<string, string>> | undefined,
  ): Promise<void> {
    const childEnv = isolateNpm(childEnvironment(appDir, env, step.env, step.pathPrepend, { ...systemEnvironment(process.env, tempDir), ...userEnvironment(user, home) }), {
      tempDir,
      cacheDir: this.options.npmCacheDir ?? (tempDir === undefined ? undefined : join(tempDir, 'npm-cache')),
    });
    // Last, so that no variable of the application replaces them.
    Object.assign(childEnv, sshEnv);
    if (buildTag !== undefined) childEnv[BUILD_TAG_VARIABLE] = buildTag;
    await runCommandStep(step, {
      appDir,
      env: childEnv,
      logger,
      user,
      signal,
      timeoutMs,
    });
  }
}

/** Links a cached layer into the build; on any failure the step simply runs. */
async function restoreLayer(layers: LayerCache, layer: Layer, appDir: string, logger: Logger, user: AppUser): Promise<boolean> {
  const key = layer.cacheKey as string;
  if (!(await layers.has(layer.name, key))) return false;
  const target = resolve(appDir, layer.path);
  try {
    await rm(target, { recursive: true, force: true });
    await layers.restore(layer.name, key, target, user);
    return true;
  } catch (error) {
    logger.warn(`could not reuse cached layer ${layer.name}: ${(error as Error).message}; running the step instead`);
    await rm(target, { recursive: true, force: true });
    return false;
  }
}

/** Puts the last build's copy of a warm-start layer in place; the steps run all the same. */
async function warmStart(layers: LayerCache, layer: Layer, appDir: string, logger: Logger, user: AppUser): Promise<void> {
  const key = layer.cacheKey as string;
  if (!(await layers.has(layer.name, key))) return;
  try {
    await layers.restoreCopy(layer.name, key, resolve(appDir, layer.path), user);
    logger.info(`restored ${layer.path} from the build cache (the last build's copy; the steps still run)`);
  } catch (error) {
    logger.warn(`could not restore ${layer.path} from the build cache: ${(error as Error).message}; building without it`);
  }
}

async function saveLayer(layers: LayerCache, layer: Layer, appDir: string, logger: Logger): Promise<void> {
  const path = resolve(appDir, layer.path);
  // An application without dependencies: the step made no layer, and there is nothing to keep.
  if (!(await stat(path).catch(() => undefined))) return;
  try {
    await layers.save(layer.name, layer.cacheKey as string, path, { copy: layer.reuse === 'warm-start' });
  } catch (error) {
    // A cache that cannot be written only costs time on the next build.
    logger.warn(`could not cache layer ${layer.name}: ${(error as Error).message}`);
  }
}
