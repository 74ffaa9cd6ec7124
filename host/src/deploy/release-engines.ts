import { type BuildpackRegistry, type Built, type Executor, LocalExecutor, type LogSink } from 'runplan';
import { DockerCli } from 'runplan/engines/docker';
import { SwarmExecutor } from 'runplan/engines/swarm';
import type { HostEngine } from '../settings.js';

/** What one release's executor is made for. */
interface ReleaseExecutorInput {
  readonly appId: string;
  /** The commit checked out: what runplan builds. */
  readonly appDir: string;
  readonly registry: BuildpackRegistry;
  readonly sink: LogSink;
  readonly signal: AbortSignal;
  /** The digest of the plan the release carries out (its image's tag). */
  readonly planDigest: string;
}

/**
 * Where the host runs its releases, through runplan's one deploy flow either
 * way: the gate, its lines and the rejected push read the same.
 * - `local`: each release is a new build started beside the serving one on a
 *   fresh loopback port; the edge switches to it, and the old one drains, then stops.
 * - `swarm`: each release is an image, and the application's Swarm services are
 *   updated in place (start-first, rolled back by Swarm when the gate fails), so
 *   the port its proxy publishes stays the application's and nothing drains.
 */
export interface ReleaseEngine {
  readonly name: HostEngine;
  /** Whether a release replaces the serving one where it runs (on the same port) rather than beside it. */
  readonly inPlace: boolean;
  /** Whether its processes reach this machine's loopback, where the add-on servers listen. */
  readonly reachesLoopback: boolean;
  executor(input: ReleaseExecutorInput): Promise<Executor<Built>>;
}

export function localEngine(): ReleaseEngine {
  return {
    name: 'local',
    inPlace: false,
    reachesLoopback: true,
    executor: async ({ appDir, registry, sink, signal }) => new LocalExecutor({ appDir, registry, sink, signal }),
  };
}

/** Tasks of each application's web service: with one, an update has a moment with a single address behind the proxy. */
const SWARM_REPLICAS = 2;

/** The Docker engine at `dockerHost` (default DOCKER_HOST), a manager of a swarm (runplan says so, RUNPLAN_E_SWARM_NOT_MANAGER, when it is not). */
export function swarmEngine(dockerHost: string | undefined): ReleaseEngine {
  let docker: Promise<DockerCli> | undefined;
  return {
    name: 'swarm',
    inPlace: true,
    reachesLoopback: false,
    executor: async ({ appId, appDir, registry, sink, signal, planDigest }) => {
      // One client for every release; one that failed to connect is tried again at the next release.
      docker ??= DockerCli.connect(dockerHost ? { host: dockerHost } : {}).catch((error: unknown) => {
        docker = undefined;
        throw error;
      });
      const name = swarmName(appId);
      // Named after the application, not its checkout folder (every application's is "source").
      const tag = `runplan/${name}:${planDigest.replace(/^sha256:/, '').slice(0, 12)}`;
      return new SwarmExecutor({ appDir, registry, sink, signal, docker: await docker, name, tag, replicas: SWARM_REPLICAS });
    },
  };
}

/** An application's name in the swarm: its id as a DNS label (app_<uuid> → app-<uuid>, 40 characters), unique where directory names are not. */
export function swarmName(appId: string): string {
  return appId.toLowerCase().replace(/[^a-z0-9-]/g, '-');
}
