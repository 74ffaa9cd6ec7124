import { execFileSync } from 'node:child_process';
import { type EngineRecords, swarmRecords } from './engine-records.js';

/**
 * The executors a saved plan is carried out with in the tests, as the CLI
 * drives them: each builds the plan (`build` or `image`), then deploys it
 * through the one deploy flow. A foreground engine serves until runplan is
 * interrupted (`run`); another returns once the deployment is healthy and
 * leaves it serving until `remove` (`deploy --engine swarm`).
 */
export interface EngineUnderTest {
  /** As the conformance suite names it: local, docker, swarm, podman. */
  readonly name: string;
  /** Environment of runplan's own process for this engine (DOCKER_HOST…). */
  readonly env: Readonly<Record<string, string>>;
  /** The command that builds the saved plan. */
  readonly build: 'build' | 'image';
  /** The command (and its options) that deploys it; the application's directory and options follow. */
  readonly run: readonly string[];
  /** Whether `run` keeps serving until runplan is interrupted (else it returns once healthy). */
  readonly foreground: boolean;
  /** The command that removes a deployment that outlives runplan's process. */
  readonly remove?: readonly string[];
  /** Whether the application runs in an image (its user is the image's uid 1000, its processes are not this machine's). */
  readonly inImage: boolean;
  /** What the deployment whose output this is left in the engine once it ended (containers, services): must be nothing. */
  readonly leftBehind?: (output: string) => string[];
  /** What the engine keeps of the processes of a deployment that outlives runplan's process: their lines and runs, which runplan does not print. */
  readonly records?: EngineRecords;
}

export const LOCAL_ENGINE: EngineUnderTest = { name: 'local', env: {}, build: 'build', run: ['run'], foreground: true, inImage: false };

export function dockerEngine(dockerHost: string): EngineUnderTest {
  return {
    name: 'docker',
    env: { DOCKER_HOST: dockerHost },
    build: 'image',
    run: ['run', '--runner', 'docker'],
    foreground: true,
    inImage: true,
    leftBehind: (output) => {
      // Other test files use the engine at the same time: only this deployment's containers count.
      const id = /\(container (rp-[0-9a-f]+)-/.exec(output)?.[1];
      return id === undefined ? [] : docker(dockerHost, 'ps', '-aq', '--filter', `label=io.runplan.deployment=${id}`);
    },
  };
}

/** One replica: the conformance cases check what a process did, and two would both do it. */
export function swarmEngine(dockerHost: string): EngineUnderTest {
  return {
    name: 'swarm',
    env: { DOCKER_HOST: dockerHost },
    build: 'image',
    run: ['deploy', '--engine', 'swarm', '--replicas', '1'],
    foreground: false,
    remove: ['deploy', '--engine', 'swarm', '--remove'],
    inImage: true,
    // Removed by `remove`, which runs before this is asked.
    leftBehind: () => docker(dockerHost, 'service', 'ls', '-q', '--filter', 'label=io.runplan.managed'),
    records: swarmRecords(dockerHost),
  };
}

function docker(host: string, ...args: string[]): string[] {
  const out = execFileSync('/usr/bin/docker', args, { env: { ...process.env, DOCKER_HOST: host }, encoding: 'utf8' });
  return out.split('\n').filter((line) => line.trim() !== '');
}

/** Kubernetes, the plan's manifests played by podman (its storage under TMPDIR, removed when runplan stops). */
export function podmanEngine(dockerHost: string): EngineUnderTest {
  return { name: 'podman', env: { DOCKER_HOST: dockerHost }, build: 'image', run: ['deploy', '--engine', 'podman'], foreground: true, inImage: true };
}
