import { nodeBuildpack } from '../buildpacks/node/index.js';
import { createPlay1Buildpack, type Play1Options } from '../buildpacks/play1/index.js';
import { BuildpackRegistry } from './buildpack/registry.js';

/** Host-level settings of the built-in buildpacks. */
export interface DefaultRegistryOptions {
  /** Mirror, checksums, default version, JVM sizing… of the Play 1.x buildpack. */
  readonly play1?: Play1Options;
}

/** A new registry holding runplan's built-in buildpacks; extend or replace them freely. */
export function defaultRegistry(options: DefaultRegistryOptions = {}): BuildpackRegistry {
  return new BuildpackRegistry([nodeBuildpack, createPlay1Buildpack(options.play1)]);
}
