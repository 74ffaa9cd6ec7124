import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Builder, BuildOptions, StepReport } from '../buildpack/contract.js';
import type { BuildpackRegistry } from '../buildpack/registry.js';
import { CoreErrors } from '../errors/core-errors.js';
import { isRunplanError } from '../errors/runplan-error.js';
import { LineSplitter, type Logger } from '../log/logger.js';
import type { BuildStep, Layer } from '../plan/schema.js';
import { LayerCache } from './layer-cache.js';
import { materialiseFiles } from './materialise-files.js';
import { childEnvironment, systemEnvironment } from './process-env.js';
import { terminateGroup } from '../run/process-group.js';

const STEP_STOP_GRACE_MS = 5_000;

export interface StepBuilderOptions {
  /** Where actions named by steps are found. */
  readonly registry: BuildpackRegistry;
  /** Per-application layer cache; without one, every step runs. */
  readonly layers?: LayerCache;
}

/**
 * Runs a plan's build steps in order with execa: each output line is shown with
 * the step's name; the first failing step stops the build with
 * RUNPLAN_E_BUILD_STEP_FAILED naming the step and its exit status. A step that
 * fills a cacheable layer is skipped when the layer is cached under the same key.
 */
const OUTPUT_TAIL_LINES = 200;

export class StepBuilder implements Builder {
  constructor(private readonly options: StepBuilderOptions) {}

  async build({ plan, appDir, env, host, logger, signal, tempDir }: BuildOptions): Promise<StepReport[]> {
    const written = await materialiseFiles(plan.files, 'build', appDir, env);
    for (const path of written) logger.info(`wrote ${path}`);
    const reports: StepReport[] = [];
    const restored = new Set<string>();
    for (const step of plan.build.steps) {
      const started = Date.now();
      if (step.onlyIfLayerRestored !== undefined && !restored.has(step.onlyIfLayerRestored)) continue;
      const layer = step.layer === null ? undefined : plan.layers.find((l) => l.name === step.layer);
      const { layers } = this.options;
      if (layer?.cacheKey && layers && (await restoreLayer(layers, layer, appDir, logger))) {
        logger.emit({ kind: 'step', name: step.name, stream: 'stdout' }, `reused cached layer ${layer.name} (key ${layer.cacheKey.slice(0, 12)})`);
        restored.add(layer.name);
        reports.push({ name: step.name, status: 'cached', durationMs: Date.now() - started });
        continue;
      }
      logger.info(`step ${step.name}: ${describe(step)}`);
      await this.runStep(step, appDir, env, host, logger, signal, plan.app?.type, tempDir);
      if (layer?.cacheKey && layers) await saveLayer(layers, layer, appDir, logger);
      reports.push({ name: step.name, status: 'succeeded', durationMs: Date.now() - started });
    }
    return reports;
  }

  private async runStep(step: BuildStep, appDir: string, env: BuildOptions['env'], host: BuildOptions['host'], logger: Logger, signal?: AbortSignal, appType?: string, tempDir?: string): Promise<void> {
    const cwd = resolve(appDir, step.cwd);
    // The tail of the output, for the buildpack to recognise a known cause of failure.
    const tail: string[] = [];
    const out = (stream: 'stdout' | 'stderr') => (line: string) => {
      tail.push(line);
      if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
      logger.emit({ kind: 'step', name: step.name, stream }, line, stream === 'stderr' ? 'warn' : 'info');
    };
    if (step.run.kind === 'action') {
      const action = this.options.registry.action(step.run.action);
      if (!action) {
        throw CoreErrors.BUILD_ACTION_UNKNOWN.create({ message: `step "${step.name}" uses action "${step.run.action}", which no registered buildpack provides.` });
      }
      try {
        await action(step.run.params, { appDir, env, host, log: out('stdout'), ...(signal ? { signal } : {}) });
      } catch (error) {
        if (isRunplanError(error)) throw error;
        throw CoreErrors.BUILD_STEP_FAILED.create({
          message: `step "${step.name}" failed: ${(error as Error).message}`,
          details: { step: step.name },
          cause: error,
        });
      }
      return;
    }
    const [file, ...args] = step.run.kind === 'exec' ? step.run.argv : ['/bin/sh', '-c', step.run.script];
    // Loaded on first use: planning never spawns, and execa is a third of the CLI's start-up time.
    const { execa } = await import('execa');
    // Its own process group, so that stopping the step reaches everything it
    // started: a background process holding the output pipe would otherwise
    // keep the step "running" for ever.
    const child = execa(file as string, args, {
      cwd,
      env: childEnvironment(appDir, env, step.env, step.pathPrepend, systemEnvironment(process.env, tempDir)),
      extendEnv: false,
      stdin: 'ignore',
      buffer: false,
      reject: false,
      detached: true,
    });
    const stdout = new LineSplitter(out('stdout'));
    const stderr = new LineSplitter(out('stderr'));
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    const pgid = child.pid;
    const stopGroup = () => (pgid === undefined ? undefined : void terminateGroup(pgid, STEP_STOP_GRACE_MS));
    signal?.addEventListener('abort', stopGroup, { once: true });
    // A step is over when its own process exits; whatever it left behind goes too.
    child.once('exit', stopGroup);
    const result = await child;
    signal?.removeEventListener('abort', stopGroup);
    stdout.flush();
    stderr.flush();
    if (signal?.aborted) {
      throw CoreErrors.BUILD_INTERRUPTED.create({ message: `the build was interrupted during step "${step.name}".`, details: { step: step.name } });
    }
    if (result.failed) {
      const diagnosed = appType === undefined ? undefined : this.options.registry.get(appType)?.diagnoseFailure?.({ step, exitCode: result.exitCode ?? null, output: tail });
      if (diagnosed) throw diagnosed;
      const status = result.exitCode !== undefined ? `exit status ${result.exitCode}` : result.signal ? `signal ${result.signal}` : (result.originalMessage ?? 'unknown failure');
      throw CoreErrors.BUILD_STEP_FAILED.create({
        message: `step "${step.name}" (${describe(step)}) failed with ${status}.`,
        details: { step: step.name, exitCode: result.exitCode ?? null, signal: result.signal ?? null },
        ...(result.code === 'ENOENT' ? { fix: `"${file}" was not found on PATH; install it or fix the command.` } : {}),
      });
    }
  }
}

/** Links a cached layer into the build; on any failure the step simply runs. */
async function restoreLayer(layers: LayerCache, layer: Layer, appDir: string, logger: Logger): Promise<boolean> {
  const key = layer.cacheKey as string;
  if (!(await layers.has(layer.name, key))) return false;
  const target = resolve(appDir, layer.path);
  try {
    await rm(target, { recursive: true, force: true });
    await layers.restore(layer.name, key, target);
    return true;
  } catch (error) {
    logger.warn(`could not reuse cached layer ${layer.name}: ${(error as Error).message}; running the step instead`);
    await rm(target, { recursive: true, force: true });
    return false;
  }
}

async function saveLayer(layers: LayerCache, layer: Layer, appDir: string, logger: Logger): Promise<void> {
  try {
    await layers.save(layer.name, layer.cacheKey as string, resolve(appDir, layer.path));
  } catch (error) {
    // A cache that cannot be written only costs time on the next build.
    logger.warn(`could not cache layer ${layer.name}: ${(error as Error).message}`);
  }
}

/** The step's command as the user would type it. */
export function describe(step: BuildStep): string {
  switch (step.run.kind) {
    case 'exec':
      return step.run.argv.map(quoteArg).join(' ');
    case 'shell':
      return step.run.script;
    case 'action':
      return `${step.run.action} ${JSON.stringify(step.run.params)}`;
  }
}

function quoteArg(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
