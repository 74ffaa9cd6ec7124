/**
 * `runplan/buildpack`: everything a buildpack needs, and nothing of how runplan
 * carries a plan out. runplan's own buildpacks (node, ruby, play1) import only
 * this module, so a host's buildpack can do all that they do.
 *
 * - the contract: Buildpack, Detector, Planner, their inputs and results;
 * - the plan's types and its schema (RunPlanSchema validates a whole plan), and `decide()` for explained decisions;
 * - errors and warnings with a stable code (`defineErrors`, `defineWarnings`, a prefix of the host's choosing);
 * - reading the application (FileSource, MemorySource for tests), quoting it in messages;
 * - the edges of a buildpack's I/O: `runProgram`, `ensureCached`, `writeFileAtomic`, the machine's variables.
 *
 * @packageDocumentation
 */
export type {
  Buildpack,
  DefaultHealthCheck,
  Detector,
  DetectResult,
  DetectStatus,
  PlanContext,
  PlanContribution,
  Planner,
  SshGitDependency,
  StackBindings,
} from '../buildpack/contract.js';
export { DetectResultSchema, PlanContributionSchema } from '../buildpack/contribution-schema.js';
export {
  RunPlanSchema,
  PLAN_SCHEMA_VERSION,
  PLAN_NAME_MAX_CHARS,
  PLAN_PATH_MAX_CHARS,
  PLACEHOLDERS,
  EXECUTOR_PLACEHOLDERS,
  STACK_PLACEHOLDERS,
  placeholder,
  type Placeholder,
  type StackPlaceholder,
  type RunPlan,
  type BuildStep,
  type Command,
  type Decision,
  type Detection,
  type EnvSource,
  type FileChunk,
  type HealthCheckPlan,
  type Install,
  type Layer,
  type OutputWarningRule,
  type OverriddenSource,
  type PackageSource,
  type PlanEnvironment,
  type PlanInstance,
  type PlannedFile,
  type PlannedProcess,
  type PlanVariable,
  type PlanWarning,
  type Readiness,
  type RestartPolicy,
  type RunHooks,
  type Runtime,
  type RuntimeNeeds,
  type ShadowedVariable,
  type SshKeyPlan,
  type StepFailureRule,
  type StepRun,
} from '../plan/schema.js';
export { decide, type DecideInput, type DecisionRequest } from '../plan/decide.js';
export { previousDefault, keepPrevious, PREVIOUS_PLAN_SOURCE } from '../plan/previous.js';
export { failureRule, outputWarning } from '../plan/failure-rule.js';
export { textChunks } from '../plan/placeholders.js';
export { RunplanError, defineErrors, isRunplanError, listDefinitions, type CodeOptions, type ErrorDefinition, type ErrorKind, type ErrorOccurrence, type ErrorType } from '../errors/runplan-error.js';
export { CoreErrors } from '../errors/core-errors.js';
export { defineWarnings, listWarningDefinitions, type Warning, type WarningDefinition, type WarningType } from '../errors/warnings.js';
export { assignmentExcerpt, escapeControls, lineExcerpt, quoteExcerpt, quoteJsonValue, EXCERPT_MAX_CHARS } from '../errors/excerpt.js';
export { MAX_APP_FILE_BYTES, MAX_LOCKFILE_BYTES, type FileSource, type ReadOptions } from '../files/file-source.js';
export { MemorySource } from '../files/memory-source.js';
export { DirectorySource } from '../files/directory-source.js';
export { writeFileAtomic } from '../files/atomic-write.js';
export { ensureCached, type CachedEntry, type EnsureCachedOptions } from '../files/cache-entry.js';
export type { Environment, EnvEntry, EnvironmentInput, LinkedVariables } from '../env/assemble.js';
// How runplan reads variables, for a buildpack that declares its own and a host that stores them: the same names, secrets and files.
export { isValidVariableName } from '../env/names.js';
export { secretReason, type SecretReason } from '../env/secrets.js';
export { parseEnvFile, type Assignment } from '../env/assignments.js';
export type { HostSettings, InstanceSize } from '../host/host-settings.js';
export type { GatherContext, InventoryProvider } from '../inventory/inventory.js';
export { runProgram, type ProgramResult, type RunProgramOptions } from '../process/run-program.js';
export { SYSTEM_VARIABLES, systemEnvironment, childEnvironment } from '../process/process-env.js';
export {
  /** The restart policy of a process whose buildpack sets none: always, after a delay doubled after each crash. */
  DEFAULT_RESTART,
  /** Time between SIGTERM and SIGKILL when a process is stopped, unless its plan says otherwise. */
  DEFAULT_STOP_GRACE_MS,
} from '../run/backoff.js';
export { sshRemote, type SshRemote } from '../planning/ssh-remote.js';
export { procfileEntries, procfileIgnored, type ProcfileEntry, type ProcfileReader } from '../planning/procfile-hint.js';
export { hostNpmRegistry } from '../build/install/npm-registry.js';
export { runHostNpm, type NpmRunner } from '../build/install/npm-tarball.js';
export { systemClock, InstantClock, type Clock } from '../time/clock.js';
export type { Logger } from '../log/logger.js';
