import type { Buildpack } from '../../src/kit/index.js';
import { nodeDetector } from './detect.js';
import { NodeErrors, NodeWarnings } from './errors.js';
import { registryInventory, type NodeInventory, type NpmRunner } from './inventory.js';
import type { LtsLine } from './lts.js';
import { planNode } from './plan.js';

export { NodeErrors, NodeWarnings } from './errors.js';
export { parsePackageJson, type PackageJson } from './package-json.js';
export { resolveStart } from './resolve-start.js';
export { resolveNodeVersion, releaseLine, nearestVersions, type NodeVersionInput, type NodeVersionResolution } from './resolve-version.js';
export { resolveBuildTool, BUILD_TOOLS, PINNED_TOOLS, type BuildTool, type BuildToolResolution } from './resolve-build-tool.js';
export { resolveDevDependencies } from './resolve-dev-dependencies.js';
export { resolveNpm, type NpmRelease } from './resolve-npm.js';
export { resolveNodeOptions } from './resolve-node-options.js';
export { NODE_LTS_LINES, latestLts, ltsCodename, type LtsLine } from './lts.js';
export { registryInventory, staticInventory, NodeInventorySchema, type NodeInventory, type NodeInventoryData, type RegistryInventoryOptions } from './inventory.js';

/** Options of createNodeBuildpack. */
export interface NodeBuildpackOptions {
  /** Where the available Node.js versions and npm releases come from. Default: the registry npm is configured with, cached on disk for a day. */
  readonly inventory?: NodeInventory;
  /** The LTS release lines (default NODE_LTS_LINES). */
  readonly ltsLines?: readonly LtsLine[];
  /** Runs npm to list what the registry publishes (default: the host's npm). */
  readonly npm?: NpmRunner;
}

/** The Node.js buildpack with its providers injected. */
export function createNodeBuildpack(options: NodeBuildpackOptions = {}): Buildpack {
  const inventory = options.inventory ?? registryInventory(options.npm ? { npm: options.npm } : {});
  return {
    id: 'node',
    name: 'Node.js',
    // Lowest of the built-ins: Rails apps often carry a package.json for their assets.
    priority: 10,
    detector: nodeDetector,
    planner: { plan: (context) => planNode(context, options.ltsLines ? { ltsLines: options.ltsLines } : {}) },
    inventory,
    defaultHealthCheck: { kind: 'port', reason: 'no CC_HEALTH_CHECK_PATH is set: the web port must accept connections' },
    errors: NodeErrors,
    warnings: NodeWarnings,
  };
}

/** The Node.js buildpack with its default options. */
export const nodeBuildpack: Buildpack = createNodeBuildpack();
