import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Buildpack } from '../buildpack/contract.js';
import { selectBuildpack } from '../buildpack/detect.js';
import type { BuildpackRegistry } from '../buildpack/registry.js';
import { assembleEnvironment, type Environment, type EnvironmentInput } from '../env/assemble.js';
import { CoreErrors } from '../errors/core-errors.js';
import { DirectorySource } from '../files/directory-source.js';
import type { FileSource } from '../files/file-source.js';
import { healthPathsFromEnv, planHealthCheck } from '../health/health-paths.js';
import { resolveHostSettings, serviceVariables, type HostSettings } from '../host/host-settings.js';
import { PLAN_SCHEMA_VERSION, RunPlanSchema, type RunPlan } from '../plan/schema.js';
import { RUNPLAN_VERSION } from '../version.js';

export interface CreatePlanOptions {
  /** The buildpacks to choose from. */
  readonly registry: BuildpackRegistry;
  /** Application directory. Required unless `files` is given. */
  readonly appDir?: string;
  /** Read the application from here instead of `appDir` (e.g. an in-memory tree). */
  readonly files?: FileSource;
  /** Force a buildpack instead of detecting one. */
  readonly type?: string;
  /** The application's, add-ons' and extra service variables. */
  readonly env?: EnvironmentInput;
  readonly host?: Partial<HostSettings>;
}

export interface PlanResult {
  /** The plan to show, store or send: every secret value redacted. */
  readonly plan: RunPlan;
  /**
   * The plan to carry out. Identical to `plan` unless a secret value happens to
   * occur in it (a short password inside a build path, say), where redaction
   * would break a path or a command. It holds no secret by construction (files
   * reference variables), but print `plan`, never this.
   */
  readonly executablePlan: RunPlan;
  /** The full environment with values (secrets included): keep it in memory, never print it. */
  readonly environment: Environment;
  readonly host: HostSettings;
  readonly buildpack: Buildpack;
}

/**
 * Detects the application type, lets its buildpack resolve everything, and
 * returns a validated, secret-free plan plus the environment to carry it out.
 * Pure apart from reading the application's files.
 */
export async function createPlan(options: CreatePlanOptions): Promise<PlanResult> {
  const appRoot = resolve(options.appDir ?? '.');
  const files = options.files ?? (await directorySource(appRoot));
  const host = resolveHostSettings(options.host);
  const environment = assembleEnvironment({
    ...options.env,
    service: { ...serviceVariables(host, appRoot), ...options.env?.service },
  });

  const { buildpack, detection } = await selectBuildpack(options.registry, files, options.type);
  const contribution = await buildpack.planner.plan({ files, appRoot, env: environment, host });
  for (const d of contribution.envDefaults ?? []) environment.putDefault(d.name, d.value, `${buildpack.id} buildpack: ${d.reason}`);

  const healthCheck = planHealthCheck(healthPathsFromEnv(environment.list().map((e) => [e.name, e.value])), contribution.defaultHealthCheck ?? buildpack.defaultHealthCheck, host.port, {
    ...contribution.healthTiming,
    ...(host.healthTimeoutMs === undefined ? {} : { readyTimeoutMs: host.healthTimeoutMs }),
  });

  const candidate: RunPlan = {
    schemaVersion: PLAN_SCHEMA_VERSION,
    runplanVersion: RUNPLAN_VERSION,
    app: { type: buildpack.id, root: appRoot, detection },
    runtimes: [...contribution.runtimes],
    decisions: [...contribution.decisions],
    environment: environment.toPlan(),
    build: { steps: [...contribution.steps] },
    layers: [...contribution.layers],
    processes: [...contribution.processes],
    files: [...contribution.files],
    healthCheck,
    warnings: [...contribution.warnings],
  };
  const parsed = RunPlanSchema.safeParse(candidate);
  if (!parsed.success) {
    throw CoreErrors.PLAN_INVALID.create({
      message: `buildpack "${buildpack.id}" produced an invalid plan: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    });
  }
  // Defence in depth: whatever a buildpack copied into the plan, no secret value leaves.
  const plan = environment.redactor.redactDeep(parsed.data);
  return { plan, executablePlan: parsed.data, environment, host, buildpack };
}

async function directorySource(appRoot: string): Promise<FileSource> {
  const info = await stat(appRoot).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw CoreErrors.APP_DIR_NOT_FOUND.create({ message: `${appRoot} is not a directory.`, file: appRoot });
  }
  return new DirectorySource(appRoot);
}

/** Validates a plan read from JSON (e.g. made on another machine). */
export function parsePlan(json: unknown): RunPlan {
  const parsed = RunPlanSchema.safeParse(json);
  if (!parsed.success) {
    throw CoreErrors.PLAN_DOCUMENT_INVALID.create({
      message: `not a valid run plan: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    });
  }
  return parsed.data;
}
