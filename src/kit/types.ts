/**
 * The kit's types: the buildpack contract, the plan, errors, sources, the machine.
 * `runplan/buildpack` exports them with its functions; the root entry exports
 * them alone, for the plans and contracts its functions take and return.
 */
export type { Buildpack, DefaultHealthCheck, Detector, DetectResult, DetectStatus, PlanContext, PlanContribution, Planner, SshGitDependency, StackBindings } from '../buildpack/contract.js';
export type {
  Placeholder,
  StackPlaceholder,
  RunPlan,
  BuildStep,
  Command,
  Decision,
  Detection,
  EnvSource,
  FileChunk,
  HealthCheckPlan,
  Install,
  Layer,
  OutputWarningRule,
  OverriddenSource,
  PackageSource,
  PlanEnvironment,
  PlanInstance,
  PlannedFile,
  PlannedProcess,
  PlanVariable,
  PlanWarning,
  Readiness,
  RestartPolicy,
  RunHooks,
  Runtime,
  RuntimeNeeds,
  ShadowedVariable,
  SshKeyPlan,
  StepFailureRule,
  StepRun,
} from '../plan/schema.js';
export type { DecideInput, DecisionRequest } from '../plan/decide.js';
export type { CodeOptions, ErrorDefinition, ErrorKind, ErrorOccurrence, ErrorType } from '../errors/runplan-error.js';
export type { Warning, WarningDefinition, WarningType } from '../errors/warnings.js';
export type { FileSource, ReadOptions } from '../files/file-source.js';
export type { CachedEntry, EnsureCachedOptions } from '../files/cache-entry.js';
export type { Environment, EnvEntry, EnvironmentInput, LinkedVariables } from '../env/assemble.js';
export type { SecretReason } from '../env/secrets.js';
export type { Assignment } from '../env/assignments.js';
export type { HostSettings, InstanceSize } from '../host/host-settings.js';
export type { GatherContext, InventoryProvider } from '../inventory/inventory.js';
export type { ProgramResult, RunProgramOptions } from '../process/run-program.js';
export type { SshRemote } from '../planning/ssh-remote.js';
export type { ProcfileEntry, ProcfileReader } from '../planning/procfile-hint.js';
export type { NpmRunner } from '../building/install/npm-tarball.js';
export type { Clock } from '../time/clock.js';
export type { Logger } from '../log/logger.js';
