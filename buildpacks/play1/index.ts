import type { Buildpack } from '../../src/kit/index.js';
import { play1Detector } from './detect.js';
import { Play1Errors } from './errors.js';
import { hostConfiguration, play1InventoryProvider, type Play1Options } from './options.js';
import { planPlay1 } from './plan.js';
import { Play1Warnings } from './warnings.js';

export { Play1Errors } from './errors.js';
export { Play1Warnings } from './warnings.js';
export { HOST_VARIABLES as PLAY1_HOST_VARIABLES, Play1InventorySchema, type Play1Options, type Play1InventoryData } from './options.js';
export { PLAY1_SERIES, DEFAULT_PLAY1_SERIES, ACCEPTED_VALUES as PLAY1_ACCEPTED_VALUES, type Play1Series } from './versions.js';
export { resolvePlay1Version, type VersionInputs, type VersionResolution } from './resolve-version.js';
export { parseProperties, type PropertyEntry } from './properties.js';
export { applyFrameworkId, classifyReferences, readApplicationConf, FRAMEWORK_ID } from './application-conf.js';
export { heapSize, resolveJvmMemory, DEFAULT_JVM_SIZING, type JvmSizing } from './jvm-memory.js';
export { frameworkSource, type FrameworkRelease } from './framework-source.js';
export { javaMajor } from './host-programs.js';

/**
 * The Play Framework 1.x buildpack. Host-level settings (mirror, checksums,
 * default version, JVM sizing) are options;
 * each setting may also come from the runplan process's environment.
 */
export function createPlay1Buildpack(options: Play1Options = {}): Buildpack {
  const config = hostConfiguration(options);
  return {
    id: 'play1',
    name: 'Play Framework 1.x',
    // Above Node.js (10): a Play application may carry a package.json for its assets.
    priority: 30,
    detector: play1Detector,
    planner: { plan: planPlay1(config) },
    inventory: play1InventoryProvider(config),
    defaultHealthCheck: { kind: 'http', paths: ['/'], reason: 'no CC_HEALTH_CHECK_PATH is set: Play 1.x applications are checked on the repository root path / (specification, health-check rule 4)' },
    errors: Play1Errors,
    warnings: Play1Warnings,
  };
}
