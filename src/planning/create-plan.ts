import { resolve } from 'node:path';
import { quickSafeParse } from '../plan/quick-parse.js';
import { callBuildpack } from '../buildpack/call-buildpack.js';
import type { Buildpack, PlanContext, PlanContribution } from '../buildpack/contract.js';
import { PlanContributionSchema } from '../buildpack/contribution-schema.js';
import { selectBuildpack } from '../buildpack/detect.js';
import { isOwnPlanner } from '../buildpack/own-planners.js';
import type { BuildpackRegistry } from '../buildpack/registry.js';
import { redactError } from '../env/redact-error.js';
import { addServiceVariables, assembleEnvironment, type Environment, type EnvironmentInput } from '../env/assemble.js';
import { assertNoSecretCopied, MIN_COPIED_SECRET_LENGTH } from '../env/copied-secrets.js';
import { CoreErrors } from '../errors/core-errors.js';
import { lineExcerpt, quoteJsonValue } from '../errors/excerpt.js';
import { listIssues } from '../errors/issues.js';
import { DirectorySource } from '../files/directory-source.js';
import type { FileSource } from '../files/file-source.js';
import { SubdirectorySource } from '../files/sub-source.js';
import { healthPathsFromEnv, planHealthCheck } from '../health/health-paths.js';
import { buildpackLimits, defaultCacheDir, resolveHostSettings, serviceVariables, type HostSettings } from '../host/host-settings.js';
import { gatherInventory, inventoryPart } from './gather-inventory.js';
import type { Inventory } from '../inventory/inventory.js';
import { PLAN_SCHEMA_VERSION, RunPlanSchema, type Decision, type RunPlan } from '../plan/schema.js';
import { APP_FOLDER_VARIABLE, appFolderDecision, checkAppFolderInSource, checkApplicationOnDisk, normaliseAppFolder } from './app-folder.js';
import { RUNPLAN_VERSION } from '../version.js';
import { checkPlanValues } from './check-plan.js';
import { resolveBuildCache } from './resolve-build-cache.js';
import { resolveHooks, type UserCommandEnvironment } from './resolve-hooks.js';
import { planBuildInstance, planInstance } from './resolve-instance.js';
import { resolveSshKey, SSH_KEY_VARIABLE, SSH_KNOWN_HOSTS_VARIABLE } from './resolve-ssh-key.js';
import { resolveWorkers } from './resolve-workers.js';
import { environmentDigest, keptPlan, PlanCache, type PlanInputs, type PlanSite } from './plan-cache.js';

/** The plans createPlan keeps when it is given no cache of its own. */
const processPlanCache = new PlanCache();

/** Options of createPlan: the buildpacks, the application, its environment, the host, the inventory and a previous plan. */
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
  /**
   * What planning may know of the machine and the network. Without it, the
   * selected buildpack's part is gathered now (which runs programs and may open
   * connections); with it, planning reads files and nothing else.
   */
  readonly inventory?: Inventory;
  /** A plan made earlier: defaults stay what it resolved while still available and allowed. */
  readonly previous?: RunPlan;
  /** Stops waiting for a buildpack's code (RUNPLAN_E_BUILD_INTERRUPTED). */
  readonly signal?: AbortSignal;
  /**
   * Where plans of applications on disk are kept and given out again while
   * nothing they were made from changed (the buildpacks, the environment, the
   * host, the inventory, the previous plan, every file looked at). Default: one
   * cache for the process; `false` plans afresh.
   */
  readonly planCache?: PlanCache | false;
}

/** What createPlan returns: the secret-free plan, and the full environment it was made with. */
export interface PlanResult {
  /** The plan: secret-free by construction, to show, store, send or carry out. */
  readonly plan: RunPlan;
  /** The full environment with values (secrets included): keep it in memory, never print it. */
  readonly environment: Environment;
  readonly host: HostSettings;
  readonly buildpack: Buildpack;
  /** What planning knew of the machine (the one given, or the part gathered for this plan). */
  readonly inventory: Inventory;
}

/**
 * Detects the application type, lets its buildpack resolve everything from the
 * application's files, the environment, the host settings and the inventory,
 * and returns a validated plan plus the environment to carry it out. The same
 * inputs give the same plan, byte for byte: no timestamp, no path of the machine.
 */
export async function createPlan(options: CreatePlanOptions): Promise<PlanResult> {
  // The service's variables come last (they are the strongest and need the host); APP_FOLDER, an
  // application's setting, is known before anything is read.
  const secretNames = [...(options.env?.secretNames ?? []), ...options.registry.secretVariables()];
  const environment = assembleEnvironment({ ...options.env, service: {}, secretNames });
  const plans = options.planCache === false ? undefined : (options.planCache ?? processPlanCache);
  const { files, repository, folder, decision: folderDecision, site, lookedAt } = await applicationFiles(options, environment, plans !== undefined);
  const started = plans?.now() ?? 0;
  // Known before anything else of the host: every call into a buildpack's code is bounded by them.
  const limits = buildpackLimits(options.host);
  const signal = options.signal ? { signal: options.signal } : {};
  const call = { timeoutMs: limits.buildpackTimeoutMs, ...signal };
  const buildpacks = options.registry.list();
  // A plan of the same files: its detection holds (detection reads files and nothing else).
  const earlier = site && !options.signal?.aborted ? plans?.find(site, buildpacks) : undefined;
  const { buildpack, detection } = earlier ?? (await selectBuildpack(options.registry, files, options.type, call));
  const inventory =
    options.inventory ?? (await gatherInventory(options.registry, { cacheDir: options.host?.cacheDir ?? defaultCacheDir(), ids: [buildpack.id], timeoutMs: limits.inventoryTimeoutMs, ...signal }));
  const host = resolveHostSettings({ ...options.host, instance: options.host?.instance ?? inventory.host.instance });
  addServiceVariables(environment, { ...serviceVariables(host), ...options.env?.service });
  assertNoSecretCopied(
    environment.list().filter((e) => !e.secret),
    [...environment.list(), ...environment.withheldList()].filter((e) => e.secret),
  );
  const part = inventoryPart(inventory, buildpack);
  const inputs: PlanInputs | undefined = site && {
    environment: environmentDigest(environment, secretNames),
    host: JSON.stringify(host),
    inventoryPart: part,
    previous: options.previous,
  };
  const kept = earlier && inputs && keptPlan(earlier, inputs);
  if (kept) {
    for (const d of kept.envDefaults) environment.putDefault(d.name, d.value, d.origin);
    return { plan: JSON.parse(kept.plan) as RunPlan, environment, host, buildpack, inventory };
  }

  // Errors of the buildpack's resolution may quote a variable's value: they leave redacted.
  try {
    const context: PlanContext = {
      files,
      ...(folder === '' ? {} : { repository, folder }),
      env: environment,
      host,
      inventory: part,
      ...(options.previous ? { previous: options.previous } : {}),
    };
    const contribution = contributionOf(buildpack, await callBuildpack(buildpack.id, 'plan', call, () => buildpack.planner.plan(context)));
    const envDefaults = (contribution.envDefaults ?? []).map((d) => ({ name: d.name, value: d.value, origin: `${buildpack.id} buildpack: ${d.reason}` }));
    for (const d of envDefaults) environment.putDefault(d.name, d.value, d.origin);

    const healthCheck = planHealthCheck(healthPathsFromEnv(environment.list().map((e) => [e.name, e.value])), contribution.defaultHealthCheck ?? buildpack.defaultHealthCheck, host.port, {
      ...contribution.healthTiming,
      ...(host.healthTimeoutMs === undefined ? {} : { readyTimeoutMs: host.healthTimeoutMs }),
    });

    // The service's hooks and workers apply to every type: the core adds them around the buildpack's part.
    const variables = new Map(environment.list().map((e) => [e.name, e.value]));
    const web = contribution.processes.find((p) => p.role === 'web');
    const commands: UserCommandEnvironment = contribution.userCommands ?? { env: web?.env ?? {}, pathPrepend: web?.pathPrepend ?? [] };
    // The build's private SSH key applies to every type: its refusals are told on the step that installs the dependencies.
    const ssh = resolveSshKey({
      key: environment.withheld(SSH_KEY_VARIABLE),
      knownHosts: environment.entry(SSH_KNOWN_HOSTS_VARIABLE),
      gitSshCommand: environment.entry('GIT_SSH_COMMAND'),
      hostKnownHosts: host.sshKnownHostsFile !== undefined,
      dependencies: contribution.sshGitDependencies ?? [],
    });
    const dependencyStep = contribution.hookPoints?.dependencies;
    const steps = contribution.steps.map((s) => (s.name === dependencyStep && ssh.failureRules.length > 0 ? { ...s, onFailure: [...ssh.failureRules, ...(s.onFailure ?? [])] } : s));
    const hooks = resolveHooks(variables, steps, contribution.hookPoints ?? {}, commands, contribution.buildCommands);
    const workers = resolveWorkers(variables, commands, new Set(contribution.processes.map((p) => p.name)));
    const cache = resolveBuildCache(variables, contribution.layers);

    const candidate: RunPlan = {
      schemaVersion: PLAN_SCHEMA_VERSION,
      runplanVersion: RUNPLAN_VERSION,
      app: { type: buildpack.id, detection, ...(folder === '' ? {} : { folder }) },
      runtimes: [...contribution.runtimes],
      instance: planInstance(host.instance, options.host?.instance),
      ...(host.buildInstance ? { buildInstance: planBuildInstance(host.buildInstance, host.instance) } : {}),
      decisions: [...(folderDecision ? [folderDecision] : []), ...contribution.decisions, ...hooks.decisions, ...workers.decisions, ...cache.decisions, ...(ssh.decision ? [ssh.decision] : [])],
      environment: environment.toPlan(),
      build: { steps: hooks.steps, ...(ssh.sshKey ? { sshKey: ssh.sshKey } : {}) },
      layers: cache.layers,
      processes: [...contribution.processes, ...workers.processes],
      ...(hooks.runHooks ? { runHooks: hooks.runHooks } : {}),
      files: [...contribution.files],
      healthCheck,
      warnings: [...contribution.warnings, ...ssh.warnings],
    };
    const parsed = quickSafeParse(RunPlanSchema, candidate);
    if (!parsed.success) {
      throw CoreErrors.PLAN_INVALID.create({ message: `buildpack "${buildpack.id}" produced an invalid plan: ${listIssues(parsed.error.issues)}.` });
    }
    checkPlanValues(parsed.data, { label: `the plan of buildpack "${buildpack.id}"`, structural: CoreErrors.BUILDPACK_RESULT_INVALID });
    assertNoSecretValue(parsed.data, environment, buildpack.id);
    // The files an earlier plan of this site looked at count too: this plan's detection is that one's.
    if (site && inputs && lookedAt) plans?.keep(site, started, lookedAt, { detection, buildpack, buildpacks, inputs, json: () => JSON.stringify(parsed.data), envDefaults }, earlier);
    return { plan: parsed.data, environment, host, buildpack, inventory };
  } catch (error) {
    throw redactError(error, environment.redactor);
  }
}

/** What plan() returned, checked against the contract before the core uses any of it. */
function contributionOf(buildpack: Buildpack, returned: unknown): PlanContribution {
  if (isOwnPlanner(buildpack.planner)) return returned as PlanContribution;
  const parsed = quickSafeParse(PlanContributionSchema, returned);
  if (!parsed.success) {
    throw CoreErrors.BUILDPACK_RESULT_INVALID.create({
      message: `buildpack "${buildpack.id}" returned from plan() something that is not its part of a plan: ${listIssues(parsed.error.issues)}.`,
      details: { buildpack: buildpack.id, phase: 'plan' },
    });
  }
  return parsed.data;
}

/**
 * Plans hold secrets only by name; this is the last check before the plan is
 * shown, stored or carried out. The value may have come from the application's own
 * files (a token in a script of package.json, or lower-cased in an address the
 * buildpack read from them), or from a buildpack's bug: the error names the
 * variable and where in the plan it is, never the value. A value lower-cased on
 * the way (host names are) is found too.
 */
function assertNoSecretValue(plan: RunPlan, environment: Environment, buildpackId: string): void {
  const secrets = [...environment.list(), ...environment.withheldList()].filter((e) => e.secret && e.value.length >= MIN_COPIED_SECRET_LENGTH);
  // Most plans are made with no secret at all: nothing to look for, no copy of the plan as text.
  if (secrets.length === 0) return;
  const text = JSON.stringify(plan);
  const lower = text.toLowerCase();
  for (const e of secrets) {
    if (!text.includes(e.value) && !lower.includes(e.value.toLowerCase())) continue;
    const at = pathOfValue(plan, e.value.toLowerCase()) ?? 'the plan';
    throw CoreErrors.PLAN_SECRET_VALUE.create({
      message: `the plan of buildpack "${buildpackId}" would hold the value of the secret variable ${e.name}, at ${at}; plans only name secrets.`,
      variable: e.name,
    });
  }
}

/** Where in `value` a string holds `needle` (compared lower-cased), as `processes[0].command.script`. */
function pathOfValue(value: unknown, needle: string, path = ''): string | undefined {
  if (typeof value === 'string') return value.toLowerCase().includes(needle) ? path || '(the plan)' : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const found = pathOfValue(child, needle, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The files planning reads: the repository's, or those of its folder APP_FOLDER
 * (with the repository's, for the root files of a workspace). The folder is
 * checked before detection: a missing one must not deploy the root instead.
 */
async function applicationFiles(
  options: CreatePlanOptions,
  environment: Environment,
  noted: boolean,
): Promise<{ files: FileSource; repository: FileSource; folder: string; decision: Decision | undefined; site?: PlanSite; lookedAt?: Set<string> }> {
  const entry = environment.entry(APP_FOLDER_VARIABLE);
  const requested = entry?.value.trim() === '' ? undefined : entry?.value;
  const folder = requested === undefined ? '' : normaliseAppFolder(requested);
  const decision = requested === undefined ? undefined : appFolderDecision(requested, entry?.origin, folder);
  if (options.files) {
    await checkAppFolderInSource(options.files, folder);
    return { files: folder === '' ? options.files : new SubdirectorySource(options.files, folder), repository: options.files, folder, decision };
  }
  const root = resolve(options.appDir ?? '.');
  // Synchronous, as DirectorySource's own calls (src/files/directory-source.ts).
  const appDir = checkApplicationOnDisk(root, folder);
  // What planning looks at, when a plan of it may be kept (PlanCache).
  const lookedAt = noted ? new Set<string>() : undefined;
  const repository = new DirectorySource(root, { lookedAt });
  const files = folder === '' ? repository : new DirectorySource(appDir, { lookedAt });
  if (!lookedAt) return { files, repository, folder, decision };
  return { files, repository, folder, decision, site: { root, realRoot: repository.resolvedRoot(), folder, type: options.type }, lookedAt };
}

/**
 * Validates a plan read from JSON (e.g. made on another machine, or by another
 * runplan version) as strictly as a fresh one: the schema, then what
 * checkPlanValues checks, with the codes planning gives the same values.
 */
export function parsePlan(json: unknown, origin = 'the plan'): RunPlan {
  const version = (json as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== PLAN_SCHEMA_VERSION) {
    const made = (json as { runplanVersion?: unknown } | null)?.runplanVersion;
    throw CoreErrors.PLAN_SCHEMA_UNSUPPORTED.create({
      message: `${origin} has schema version ${quoteJsonValue(version ?? null)}${typeof made === 'string' ? ` (made by runplan ${lineExcerpt(made)})` : ''}; runplan ${RUNPLAN_VERSION} carries out schema version ${PLAN_SCHEMA_VERSION}.`,
      file: origin,
    });
  }
  // A valid plan (what a host reads back at each start) is taken by the validator derived from the schema; Zod reports the rest.
  const parsed = quickSafeParse(RunPlanSchema, json);
  if (!parsed.success) {
    throw CoreErrors.PLAN_DOCUMENT_INVALID.create({ message: `${origin} is not a valid run plan: ${listIssues(parsed.error.issues)}.`, file: origin });
  }
  checkPlanValues(parsed.data, { label: origin, file: origin, structural: CoreErrors.PLAN_DOCUMENT_INVALID });
  return parsed.data;
}
