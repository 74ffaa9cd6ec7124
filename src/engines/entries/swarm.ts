/**
 * `runplan/engines/swarm`: a plan deployed as services of a Docker swarm (the
 * engine at DOCKER_HOST must be a manager), and an application removed from one.
 * `SwarmExecutor` is the executor the root's `deploy()` drives, as it drives the
 * local one. The engine's client, `DockerCli`, comes from `runplan/engines/docker`.
 *
 * @packageDocumentation
 */
export {
  deployToSwarm,
  removeSwarmApp,
  SwarmExecutor,
  /** Options of deployToSwarm and SwarmExecutor: those of buildImage (or an image already built), the web service's replicas, the application's name in the swarm, the deploy flow's clock and health checker. */
  type SwarmDeployOptions,
  /** A converged deployment in a swarm: its services, those it changed, and its health report. */
  type SwarmDeployment,
} from '../swarm.js';
/** What of an application runs in a swarm (its services, and the plan of its web service's image), for a program that takes it over. */
export { findSwarmApp, type SwarmAppFound } from '../swarm/objects.js';
/** An application's name in every engine (its directory's, or its folder's with APP_FOLDER, as a DNS label): the name removeSwarmApp takes. */
export { appName } from '../app-name.js';
