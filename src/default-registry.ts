import { nodeBuildpack } from '../buildpacks/node/index.js';
import { BuildpackRegistry } from './buildpack/registry.js';

/** A new registry holding runplan's built-in buildpacks; extend or replace them freely. */
export function defaultRegistry(): BuildpackRegistry {
  return new BuildpackRegistry([nodeBuildpack]);
}
