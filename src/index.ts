/**
 * runplan: pluggable buildpacks that decide, explain and carry out how an
 * application is built, started and health-checked.
 *
 * The root entry holds what a host embedding runplan needs, and nothing of how
 * an executor works inside:
 *
 * - the kit's types (the plan, the buildpack contract); its functions (the plan's
 *   schema, `decide()`, defining errors and warnings, file sources, a buildpack's
 *   I/O) are at `runplan/buildpack` only;
 * - runplan's errors: `RunplanError`, `isRunplanError`, `CoreErrors`;
 * - the registry (`defaultRegistry`, `BuildpackRegistry`) and the other contracts
 *   (Builder, Runner, HealthChecker…);
 * - planning: `createPlan`, `parsePlan`, the inventory, `planDigest`, `diffPlans`,
 *   the plan's JSON Schema;
 * - the deploy flow: the `Executor` contract, `deploy()`, `healthGate()`, the
 *   HTTP health check, and the local executor (`LocalExecutor`, `buildApp`,
 *   `deployApp`) with its lasting runs (`SupervisionTree`, `adoptRun`: processes
 *   kept by s6, which outlive the program that started them).
 *
 * Running programs as runplan does (one runner, a child environment from an
 * allow-list, atomic writes, clocks) is `runplan/process`. The engines are entries of their own (`runplan/engines/docker`,
 * `runplan/engines/swarm`, `runplan/engines/kubernetes`), as each built-in
 * buildpack is (`runplan/buildpacks/node`…). Every name exported here is listed
 * in api/exports.txt, which a test compares with this module.
 *
 * @packageDocumentation
 */
// The kit's types, for the plans and contracts the functions below take and return; its functions are at runplan/buildpack.
export type * from './kit/types.js';
export { RunplanError, isRunplanError } from './errors/runplan-error.js';
export { CoreErrors } from './errors/core-errors.js';
export type * from './buildpack/contract.js';
export { BuildpackRegistry } from './buildpack/registry.js';
export { defaultRegistry, type DefaultRegistryOptions } from './compose/default-registry.js';
export { runPlanJsonSchema } from './plan/json-schema.js';
export { RunPlanSchema } from './plan/schema.js';
export { createPlan, parsePlan, type CreatePlanOptions, type PlanResult } from './planning/create-plan.js';
export { PlanCache, type PlanCacheOptions } from './planning/plan-cache.js';
export { planToCarryOut, type PlanToCarryOut } from './planning/plan-to-carry-out.js';
export { gatherInventory, parseInventory, type GatherOptions } from './planning/gather-inventory.js';
export type { Inventory } from './inventory/inventory.js';
export { planDigest } from './plan/digest.js';
export { diffPlans, formatDiff, type PlanChange } from './plan/diff.js';
export type * from './executor/contract.js';
export { deploy, type DeployFlowOptions, type Deployed } from './executor/deploy-flow.js';
export { healthGate, type HealthGateOptions } from './executor/health-gate.js';
export { HttpHealthChecker, type HttpHealthCheckerOptions } from './executor/http-health-checker.js';
export type { LastingRun } from './supervision/run-resources.js';
export { adoptRun, discardRun, type AdoptRunOptions, type AdoptedRun } from './supervision/adopt-run.js';
export { SupervisionTree, type OpenedTree } from './supervision/supervision-tree.js';
export { RUN_FORMAT, type RunRecord } from './supervision/run-record.js';
export { buildApp, deployApp, LocalExecutor, type LocalExecutorOptions, type BuildAppOptions, type BuiltApp, type DeployOptions, type Deployment } from './engines/local/local-executor.js';
export { Logger, memorySink, type LineOrigin, type LogLine, type LogSink } from './log/logger.js';
export { formatLogLine } from './log/format-line.js';
export { type NetworkSettings, type NetworkTarget, RELEASE_PORT, ReleaseNamespace, ReleaseNetworks } from './sandbox/release-network.js';
export { AppDisk, type DiskSettings, type DiskUsage, diskFullLine, diskIsFull, diskUsage, MIN_DISK_MB } from './sandbox/app-disk.js';
export { AppSandbox, type LimitCounters, type ResourceLimits, type SandboxMachine, type SandboxOptions, type SandboxPhase, type SandboxScope, type SandboxUser } from './sandbox/sandbox.js';
