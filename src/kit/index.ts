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
export type * from './types.js';
export { DetectResultSchema, PlanContributionSchema } from '../buildpack/contribution-schema.js';
export { RunPlanSchema, PLAN_SCHEMA_VERSION, PLAN_NAME_MAX_CHARS, PLAN_PATH_MAX_CHARS, PLACEHOLDERS, EXECUTOR_PLACEHOLDERS, STACK_PLACEHOLDERS, placeholder } from '../plan/schema.js';
export { decide } from '../plan/decide.js';
export { previousDefault, keepPrevious, PREVIOUS_PLAN_SOURCE } from '../plan/previous.js';
export { failureRule, outputWarning } from '../plan/failure-rule.js';
export { textChunks } from '../plan/placeholders.js';
export { RunplanError, defineErrors, isRunplanError, listDefinitions } from '../errors/runplan-error.js';
export { CoreErrors } from '../errors/core-errors.js';
export { defineWarnings, listWarningDefinitions } from '../errors/warnings.js';
export { assignmentExcerpt, escapeControls, lineExcerpt, quoteExcerpt, quoteJsonValue, EXCERPT_MAX_CHARS } from '../errors/excerpt.js';
export { MAX_APP_FILE_BYTES, MAX_LOCKFILE_BYTES } from '../files/file-source.js';
export { MemorySource } from '../files/memory-source.js';
export { DirectorySource } from '../files/directory-source.js';
export { writeFileAtomic } from '../files/atomic-write.js';
export { ensureCached } from '../files/cache-entry.js';
// How runplan reads variables, for a buildpack that declares its own and a host that stores them: the same names, secrets and files.
export { isValidVariableName } from '../env/names.js';
export { secretReason } from '../env/secrets.js';
export { parseEnvFile } from '../env/assignments.js';
export { runProgram } from '../process/run-program.js';
export { SYSTEM_VARIABLES, systemEnvironment, childEnvironment } from '../process/process-env.js';
export {
  /** The restart policy of a process whose buildpack sets none: always, after a delay doubled after each crash. */
  DEFAULT_RESTART,
  /** Time between SIGTERM and SIGKILL when a process is stopped, unless its plan says otherwise. */
  DEFAULT_STOP_GRACE_MS,
} from '../plan/restart-policy.js';
export { sshRemote } from '../planning/ssh-remote.js';
export { procfileEntries, procfileIgnored } from '../planning/procfile-hint.js';
export { hostNpmRegistry } from '../building/install/npm-registry.js';
export { runHostNpm } from '../building/install/npm-tarball.js';
export { systemClock, InstantClock } from '../time/clock.js';
