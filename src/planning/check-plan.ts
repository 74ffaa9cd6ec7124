import { isValidVariableName } from '../env/names.js';
import { CoreErrors } from '../errors/core-errors.js';
import { quoteExcerpt } from '../errors/excerpt.js';
import type { ErrorType, RunplanError } from '../errors/runplan-error.js';
import { isHealthPath } from '../health/health-paths.js';
import type { RunPlan } from '../plan/schema.js';
import { normaliseAppFolder } from './app-folder.js';

/**
 * What the schema cannot say of a plan, checked on every plan before anything
 * of it runs: a fresh one (a buildpack's mistakes) and one read back (`--plan`:
 * made anywhere, edited by anyone). Values that come from the application's
 * variables are refused with the codes planning gives the same variables
 * (APP_FOLDER, CC_HEALTH_CHECK_PATH, a NUL byte, a variable's name), so that a
 * saved plan is held to what a fresh one is; the plan's own structure
 * (references between its parts) with RUNPLAN_E_PLAN_DOCUMENT_INVALID.
 */
export function checkPlanValues(plan: RunPlan, origin: PlanOrigin): void {
  checkFolder(plan.app.folder, origin);
  checkHealthPaths(plan, origin);
  checkVariables(plan, origin);
  checkReferences(plan, origin);
}

/** Where a plan comes from: a file read back, or a buildpack planning now (whose bug a structural fault is). */
export interface PlanOrigin {
  /** e.g. "plan.json", or 'the plan of buildpack "node"'. */
  readonly label: string;
  /** The file, for a plan read back. */
  readonly file?: string;
  /** The code of a structural fault: RUNPLAN_E_PLAN_DOCUMENT_INVALID for a file, RUNPLAN_E_BUILDPACK_RESULT_INVALID for a buildpack's plan. */
  readonly structural: ErrorType;
}

function invalid(origin: PlanOrigin, why: string): RunplanError {
  return origin.structural.create({ message: `${origin.label} is not a valid run plan: ${why}.`, ...at(origin) });
}

const at = (origin: PlanOrigin) => (origin.file === undefined ? {} : { file: origin.file });

function checkFolder(folder: string | undefined, origin: PlanOrigin): void {
  if (folder === undefined) return;
  // Refuses what APP_FOLDER itself may not be: absolute, climbing out, NUL, a line break.
  const normal = normaliseAppFolder(folder);
  if (normal === '' || normal !== folder) {
    throw invalid(origin, `app.folder ${quoteExcerpt(folder)} is not written as planning writes it (${normal === '' ? 'the repository root has no app.folder' : `"${normal}"`})`);
  }
}

function checkHealthPaths(plan: RunPlan, origin: PlanOrigin): void {
  const { kind, paths } = plan.healthCheck;
  if (kind === 'http' && paths.length === 0) throw invalid(origin, 'healthCheck.kind is "http" but it lists no path, so nothing would be checked');
  for (const { path, source } of paths) {
    if (isHealthPath(path)) continue;
    const variable = isValidVariableName(source) ? source : undefined;
    throw CoreErrors.HEALTH_CHECK_PATH_INVALID.create({
      message: `the health-check path ${quoteExcerpt(path)} of ${origin.label} (from ${quoteExcerpt(source)}) is not a URL path: it must start with a single "/" and contain no spaces or control characters.`,
      ...(variable === undefined ? {} : { variable }),
      ...at(origin),
    });
  }
}

/** The plan's environment and every step's and process's overrides: names a process can be given, values without NUL. */
function checkVariables(plan: RunPlan, origin: PlanOrigin): void {
  for (const v of plan.environment.variables) {
    checkVariable(v.name, v.value, `the plan's environment`, origin);
    if (v.secret && v.value !== undefined) throw invalid(origin, `the secret variable ${v.name} holds a value; plans name secrets and never hold their values`);
  }
  const steps = [...plan.build.steps, ...(plan.runHooks ? [...plan.runHooks.preRun, ...plan.runHooks.succeeded, ...plan.runHooks.failed] : [])];
  for (const s of steps) for (const [name, value] of Object.entries(s.env)) checkVariable(name, value, `step "${s.name}"`, origin);
  for (const p of plan.processes) for (const [name, value] of Object.entries(p.env)) checkVariable(name, value, `process "${p.name}"`, origin);
}

function checkVariable(name: string, value: string | undefined, where: string, origin: PlanOrigin): void {
  if (!isValidVariableName(name)) {
    throw CoreErrors.ENV_INVALID_NAME.create({
      message: `variable name ${quoteExcerpt(name)} of ${where} in ${origin.label} is not valid: only ASCII letters, digits and "_", not starting with a digit.`,
      ...at(origin),
    });
  }
  if (value?.includes('\0')) {
    throw CoreErrors.ENV_VALUE_INVALID.create({
      message: `the value of ${name} (${where} in ${origin.label}) contains a NUL byte, which no process environment can hold; the value is not shown.`,
      variable: name,
      ...at(origin),
    });
  }
}

/** Names are unique where they are looked up, and every layer a step names exists. */
function checkReferences(plan: RunPlan, origin: PlanOrigin): void {
  const unique = (names: readonly string[], what: string) => {
    const seen = new Set<string>();
    for (const name of names) {
      if (seen.has(name)) throw invalid(origin, `two ${what} are named "${name}"; names are unique`);
      seen.add(name);
    }
  };
  unique(
    plan.build.steps.map((s) => s.name),
    'build steps',
  );
  unique(
    plan.processes.map((p) => p.name),
    'processes',
  );
  unique(
    plan.layers.map((l) => l.name),
    'layers',
  );
  const layers = new Set(plan.layers.map((l) => l.name));
  for (const s of plan.build.steps) {
    for (const name of [s.layer, s.onlyIfLayerRestored, s.verifiesLayer]) {
      if (name !== null && name !== undefined && !layers.has(name)) throw invalid(origin, `build step "${s.name}" names the layer "${name}", which the plan's layers do not hold`);
    }
  }
}
