import { nodeBuildpack } from '../buildpacks/node/index.js';
import { createRubyBuildpack, type RubyBuildpackOptions } from '../buildpacks/ruby/index.js';
import { BuildpackRegistry } from './buildpack/registry.js';

/** Host-level options of the built-in buildpacks. */
export interface DefaultRegistryOptions {
  readonly ruby?: RubyBuildpackOptions;
}

/** A new registry holding runplan's built-in buildpacks; extend or replace them freely. */
export function defaultRegistry(options: DefaultRegistryOptions = {}): BuildpackRegistry {
  return new BuildpackRegistry([nodeBuildpack, createRubyBuildpack(options.ruby)]);
}
