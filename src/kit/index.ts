/**
 * `runplan/buildpack`: everything a buildpack needs, and nothing of how runplan
 * carries a plan out. runplan's own buildpacks (node, ruby, play1) import only
 * this module, so a host's buildpack can do all that they do.
 *
 * - the contract: Buildpack, Detector, Planner, their inputs and results;
 * - the plan's types and schema, and `decide()` for explained decisions;
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
} from '../buildpack/contract.js';
export * from '../plan/schema.js';
export { decide, type DecideInput, type DecisionRequest } from '../plan/decide.js';
export { previousDefault, keepPrevious, PREVIOUS_PLAN_SOURCE } from '../plan/previous.js';
export { failureRule } from '../plan/failure-rule.js';
export { textChunks } from '../plan/placeholders.js';
export { RunplanError, defineErrors, isRunplanError, listDefinitions, type CodeOptions, type ErrorDefinition, type ErrorKind, type ErrorOccurrence, type ErrorType } from '../errors/runplan-error.js';
export { CoreErrors } from '../errors/core-errors.js';
export { defineWarnings, listWarningDefinitions, type Warning, type WarningDefinition, type WarningType } from '../errors/warnings.js';
export { escapeControls, lineExcerpt, quoteExcerpt, quoteJsonValue, EXCERPT_MAX_CHARS } from '../errors/excerpt.js';
export { MAX_APP_FILE_BYTES, MAX_LOCKFILE_BYTES, type FileSource, type ReadOptions } from '../files/file-source.js';
export { MemorySource } from '../files/memory-source.js';
export { DirectorySource } from '../files/directory-source.js';
export { writeFileAtomic } from '../files/atomic-write.js';
export { ensureCached, type CachedEntry, type EnsureCachedOptions } from '../files/cache-entry.js';
export type { Environment, EnvEntry } from '../env/assemble.js';
export type { HostSettings, InstanceSize } from '../host/host-settings.js';
export type { GatherContext, InventoryProvider } from '../inventory/inventory.js';
export { runProgram, type ProgramResult, type RunProgramOptions } from '../process/run-program.js';
export { SYSTEM_VARIABLES, systemEnvironment, childEnvironment } from '../process/process-env.js';
export { DEFAULT_RESTART, DEFAULT_STOP_GRACE_MS } from '../run/backoff.js';
export { sshRemote, type SshRemote } from '../planning/ssh-remote.js';
export { hostNpmRegistry } from '../build/install/npm-registry.js';
export { runHostNpm, type NpmRunner } from '../build/install/npm-tarball.js';
export { systemClock, InstantClock, type Clock } from '../time/clock.js';
export type { Logger } from '../log/logger.js';
