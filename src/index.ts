/**
 * runplan: pluggable buildpacks that decide, explain and carry out how an
 * application is built, started and health-checked.
 *
 * @packageDocumentation
 */
export * from './plan/schema.js';
export { runPlanJsonSchema } from './plan/json-schema.js';
export { decide, type DecideInput, type DecisionRequest } from './plan/decide.js';
export { ensureCached, type CachedEntry, type EnsureCachedOptions } from './files/cache-entry.js';
export { writeFileAtomic } from './files/atomic-write.js';
export { runProgram, type ProgramResult, type RunProgramOptions } from './process/run-program.js';
export { SYSTEM_VARIABLES, systemEnvironment, childEnvironment } from './process/process-env.js';
export * from './buildpack/contract.js';
export { BuildpackRegistry } from './buildpack/registry.js';
export { selectBuildpack, type Selection } from './buildpack/detect.js';
export { defaultRegistry, type DefaultRegistryOptions } from './compose/default-registry.js';
export { createPlan, parsePlan, type CreatePlanOptions, type PlanResult } from './planning/create-plan.js';
export { environmentForPlan } from './planning/plan-environment.js';
export { gatherInventory, parseInventory, inventoryPart, machineInstance, type GatherOptions } from './planning/gather-inventory.js';
export { InventorySchema, INVENTORY_SCHEMA_VERSION, type Inventory, type InventoryProvider, type GatherContext } from './inventory/inventory.js';
export { planDigest } from './plan/digest.js';
export { diffPlans, formatDiff, type PlanChange } from './plan/diff.js';
export { describeStep, describeCommand } from './plan/describe.js';
export { fillPlaceholders, bindStep, bindProcess, textChunks, type Bindings } from './plan/placeholders.js';
export { failureRule } from './plan/failure-rule.js';
export { previousDefault, keepPrevious, PREVIOUS_PLAN_SOURCE } from './plan/previous.js';
export { carryOutInstall } from './build/install/install-step.js';
export { ensureTree, treeCacheEntry, type TreeOptions, type EnsuredTree } from './build/install/tree-cache.js';
export { buildApp, deployApp, redactError, type BuildAppOptions, type BuiltApp, type DeployOptions, type Deployment } from './deploy/deploy.js';
export { StepBuilder, type StepBuilderOptions } from './build/step-builder.js';
export { LayerCache } from './build/layer-cache.js';
export { LocalProcessRunner, type LocalProcessRunnerOptions } from './run/local-process-runner.js';
export { restartDelay, DEFAULT_RESTART, DEFAULT_STOP_GRACE_MS } from './run/backoff.js';
export { HttpHealthChecker, HEALTH_CLOSING_LINE, type HttpHealthCheckerOptions } from './health/http-health-checker.js';
export { healthPathsFromEnv, planHealthCheck, HEALTH_DEFAULTS, type HealthPath } from './health/health-paths.js';
export { assembleEnvironment, Environment, ENV_PRECEDENCE, type EnvironmentInput, type EnvEntry, type LinkedVariables } from './env/assemble.js';
export { parseAssignment, parseEnvFile, type Assignment } from './env/assignments.js';
export { isValidVariableName } from './env/names.js';
export { Redactor, secretReason, REDACTED } from './env/secrets.js';
export { RunplanError, defineErrors, isRunplanError, listDefinitions, type CodeOptions, type ErrorDefinition, type ErrorKind, type ErrorOccurrence, type ErrorType } from './errors/runplan-error.js';
export { CoreErrors } from './errors/core-errors.js';
export { defineWarnings, listWarningDefinitions, type WarningDefinition, type WarningType } from './errors/warnings.js';
export type { FileSource } from './files/file-source.js';
export { DirectorySource } from './files/directory-source.js';
export { MemorySource } from './files/memory-source.js';
export { resolveHostSettings, parseMemory, DEFAULT_PORT, type HostSettings, type InstanceSize } from './host/host-settings.js';
export { Logger, memorySink, type LogLine, type LogSink, type LineOrigin } from './log/logger.js';
export { systemClock, InstantClock, type Clock } from './time/clock.js';
export { formatPlan } from './cli/format-plan.js';
export { RUNPLAN_VERSION } from './version.js';
export {
  nodeBuildpack,
  createNodeBuildpack,
  NodeErrors,
  NodeWarnings,
  staticInventory,
  registryInventory,
  NodeInventorySchema,
  type NodeBuildpackOptions,
  type NodeInventory,
  type NodeInventoryData,
} from '../buildpacks/node/index.js';
export {
  createRubyBuildpack,
  RubyErrors,
  RubyWarnings,
  systemRubies,
  PUMA_SIZING_TABLE,
  RubyInventorySchema,
  type RubyBuildpackOptions,
  type InstalledRuby,
  type RubyInventory,
  type RubyInventoryData,
} from '../buildpacks/ruby/index.js';
export {
  createPlay1Buildpack,
  Play1Errors,
  Play1Warnings,
  PLAY1_HOST_VARIABLES,
  PLAY1_SERIES,
  PLAY1_ACCEPTED_VALUES,
  DEFAULT_PLAY1_SERIES,
  resolvePlay1Version,
  Play1InventorySchema,
  type Play1InventoryData,
  type Play1Options,
  type Play1Series,
} from '../buildpacks/play1/index.js';
export { DockerCli, type DockerOptions, type DockerResult } from './engines/docker-cli.js';
export { STACKS, ensureStackImage, stackImageTag, stackForType, type StackDefinition, type StackOptions } from './engines/stack-images.js';
export { buildImage, defaultImageTag, type ImageOptions, type BuiltImage } from './engines/image/build-image.js';
export { renderDockerfile, type DockerfileInput } from './engines/image/dockerfile.js';
export { renderEntrypoint, renderHealthcheck, IMAGE_BINDINGS } from './engines/image/scripts.js';
export { DockerRunner, secretVariables, MANAGED_LABEL, DEPLOYMENT_LABEL, PROCESS_LABEL, type DockerRunnerOptions } from './engines/docker-runner.js';
export { deployToDocker, type DockerDeployOptions, type DockerDeployment } from './engines/docker-deploy.js';
