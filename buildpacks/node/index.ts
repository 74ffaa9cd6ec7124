import type { Buildpack } from '../../src/buildpack/contract.js';
import { nodeDetector } from './detect.js';
import { NodeErrors } from './errors.js';
import { planNode } from './plan.js';
import { verifyMain } from './verify-main.js';

export { NodeErrors } from './errors.js';
export { parsePackageJson, type PackageJson } from './package-json.js';
export { resolveStart } from './resolve-start.js';

export const nodeBuildpack: Buildpack = {
  id: 'node',
  name: 'Node.js',
  // Lowest of the built-ins: Rails apps often carry a package.json for their assets.
  priority: 10,
  detector: nodeDetector,
  planner: { plan: planNode },
  defaultHealthCheck: { kind: 'port', reason: 'no CC_HEALTH_CHECK_PATH is set: the web port must accept connections' },
  actions: { 'verify-main': verifyMain },
  errors: NodeErrors,
};
