import type { AppSandbox, BuildpackRegistry, Built, Executor, LastingRun } from 'runplan';
import { ENGINES } from 'runplan/engines';
import { DockerCli } from 'runplan/engines/docker';
import { findSwarmApp, removeSwarmApp } from 'runplan/engines/swarm';
import { SwarmAddonServices, swarmName } from '../addons/swarm-services.js';
import type { HostEngine } from '../settings.js';

/** What one release's executor is made for. */
interface ReleaseExecutorInput {
  readonly appId: string;
  /** The commit checked out: what runplan builds. */
  readonly appDir: string;
  readonly registry: BuildpackRegistry;
  readonly signal: AbortSignal;
  /** The application's walls on this machine (its own user, namespaces and limits). */
  readonly sandbox?: AppSandbox;
  /** Its processes kept by s6 apart from serve, under this run's name (the local engine). */
  readonly lasting?: LastingRun;
  /** The release's own network namespace (the local engine, with a sandbox). */
  readonly network?: { readonly path: string; readonly address: string };
  /** Whether the release is linked to an add-on: on a swarm, only then do its tasks join the add-ons' network. */
  readonly linkedToAddons?: boolean;
  /** On a swarm: the port the application's proxy publishes on the node (its processes listen on 8080 in their containers). */
  readonly publishPort?: number;
}

/**
 * Where the host runs its releases: two engines of runplan's table
 * (runplan/engines), through its one deploy flow either way: the gate, its
 * lines and the rejected push read the same.
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
  /** Where the add-on servers run for this engine's releases: on this machine's loopback (undefined), or as services of the same swarm. */
  readonly addonServices: SwarmAddonServices | undefined;
  executor(input: ReleaseExecutorInput): Promise<Executor<Built>>;
  /**
   * Takes over what an earlier serve left running of an application in the engine itself (a swarm's
   * services), when it is the release with that plan digest: how to stop it, or why it cannot be.
   */
  takeOver?(appId: string, planDigest: string): Promise<{ stop(): Promise<void> } | { problem: string }>;
}

export function localEngine(): ReleaseEngine {
  return {
    name: 'local',
    inPlace: false,
    addonServices: undefined,
    executor: ({ appDir, registry, signal, sandbox, lasting, network }) =>
      ENGINES.local.executor({ appDir, registry, signal, ...(sandbox ? { sandbox } : {}), ...(lasting ? { lasting } : {}), ...(network ? { network } : {}) }),
  };
}

/** Tasks of each application's web service: with one, an update has a moment with a single address behind the proxy. */
const SWARM_REPLICAS = 2;

/** The Docker engine at `dockerHost` (default DOCKER_HOST), a manager of a swarm (runplan says so, RUNPLAN_E_SWARM_NOT_MANAGER, when it is not). */
export function swarmEngine(dockerHost: string | undefined): ReleaseEngine {
  let docker: Promise<DockerCli> | undefined;
  // One client for every release and add-on server; one that failed to connect is tried again next time.
  const connect = () =>
    (docker ??= DockerCli.connect(dockerHost ? { host: dockerHost } : {}).catch((error: unknown) => {
      docker = undefined;
      throw error;
    }));
  const addonServices = new SwarmAddonServices(connect);
  return {
    name: 'swarm',
    inPlace: true,
    addonServices,
    executor: async ({ appId, appDir, registry, signal, publishPort, linkedToAddons = false }) => {
      // Its services and image named after the application, not its checkout folder (every application's is "source").
      const name = swarmName(appId);
      // Only an application linked to an add-on joins the add-ons' network (a link or an unlink changes it at the next
      // release, as it changes the variables): one with none shares no network with another application.
      const networks = linkedToAddons ? [await addonServices.network()] : [];
      return ENGINES.swarm.executor({ appDir, registry, signal, docker: await connect(), name, replicas: SWARM_REPLICAS, networks, ...(publishPort === undefined ? {} : { publishPort }) });
    },
    takeOver: async (appId, planDigest) => {
      const docker = await connect();
      const name = swarmName(appId);
      const found = await findSwarmApp(docker, name);
      if (found === undefined) return { problem: `no service of ${name} runs in the swarm` };
      if (found.planDigest !== planDigest) return { problem: `its services run the plan ${found.planDigest ?? '(unknown)'}, not the release's ${planDigest}` };
      return { stop: () => removeSwarmApp(docker, name).then(() => undefined) };
    },
  };
}
