import { createNodeBuildpack, type NodeBuildpackOptions } from '../../buildpacks/node/index.js';
import { createPlay1Buildpack, type Play1Options } from '../../buildpacks/play1/index.js';
import { createRubyBuildpack, type RubyBuildpackOptions } from '../../buildpacks/ruby/index.js';
import { markOwnPlanner } from '../buildpack/own-planners.js';
import { BuildpackRegistry } from '../buildpack/registry.js';

/** Host-level settings of the built-in buildpacks. */
export interface DefaultRegistryOptions {
  /** Where Node.js versions and npm releases come from, the LTS table… of the Node.js buildpack. */
  readonly node?: NodeBuildpackOptions;
  /** Installed rubies, default Ruby series, gem source… of the Ruby buildpack. */
  readonly ruby?: RubyBuildpackOptions;
  /** Mirror, checksums, default version, JVM sizing… of the Play 1.x buildpack. */
  readonly play1?: Play1Options;
}

/** A new registry holding runplan's built-in buildpacks; extend or replace them freely. */
export function defaultRegistry(options: DefaultRegistryOptions = {}): BuildpackRegistry {
  const buildpacks = [createNodeBuildpack(options.node), createRubyBuildpack(options.ruby), createPlay1Buildpack(options.play1)];
  for (const buildpack of buildpacks) markOwnPlanner(buildpack.planner);
  return new BuildpackRegistry(buildpacks);
}
