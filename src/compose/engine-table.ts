import { LocalExecutor, type LocalExecutorOptions } from '../engines/local/local-executor.js';
import type { Built, Executor } from '../executor/contract.js';
import type { SwarmDeployOptions } from '../engines/swarm.js';

/**
 * What every engine of the table is made from: where the application is, its
 * planning options (its lines go where the deploy flow's logger writes them), and what one engine reads only (the local
 * executor's walls, an image's base, a swarm's replicas and networks).
 */
export type EngineOptions = LocalExecutorOptions & Omit<SwarmDeployOptions, 'sink'>;

/** One engine: its name, and the executor it makes for an application. Each is loaded when chosen (Docker's and podman's modules only then). */
export interface EngineEntry {
  readonly name: EngineName;
  executor(options: EngineOptions): Promise<Executor<Built>>;
}

/** The engines of the table: this machine, Docker, podman (Kubernetes), a Docker swarm. */
export type EngineName = 'local' | 'docker' | 'podman' | 'swarm';

/**
 * The engines, in one table: the CLI chooses from it (`run --runner`,
 * `deploy --engine`), and every one is carried out by the one deploy flow
 * (src/executor/deploy-flow.ts) with one result type, `Deployed`.
 */
export const ENGINES: Readonly<Record<EngineName, EngineEntry>> = {
  local: {
    name: 'local',
    executor: async (options) => new LocalExecutor(options),
  },
  docker: {
    name: 'docker',
    executor: async (options) => new (await import('../engines/docker-deploy.js')).DockerExecutor(options),
  },
  podman: {
    name: 'podman',
    executor: async (options) => new (await import('../engines/podman-kube.js')).PodmanKubeExecutor(options),
  },
  swarm: {
    name: 'swarm',
    executor: async (options) => new (await import('../engines/swarm.js')).SwarmExecutor(options),
  },
};
