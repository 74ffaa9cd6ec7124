import { CoreErrors } from '../errors/core-errors.js';
import { systemEnvironment } from '../process/process-env.js';
import { EngineCli, type EngineResult, lastLine, runCommand as run } from './engine-cli.js';

/** What a docker command gave. */
export type DockerResult = EngineResult;

export interface DockerOptions {
  /** The docker client; default: the first of $RUNPLAN_DOCKER, `docker` on PATH and /usr/bin/docker that can build with BuildKit. */
  readonly binary?: string;
  /** The engine's address, as the docker CLI takes it; default $DOCKER_HOST. */
  readonly host?: string;
}

/** `docker … --label k=v` arguments for each label (`flag`: `--label-add`, `--container-label`… where a command names it so). */
export function labelArgs(labels: Readonly<Record<string, string>>, flag = '--label'): string[] {
  return Object.entries(labels).flatMap(([k, v]) => [flag, `${k}=${v}`]);
}

/** Clients tried in order; a newer client without buildx cannot build with BuildKit (NOTES.md, "Container engines"). */
const CANDIDATES = ['docker', '/usr/bin/docker'];

/**
 * The docker command-line client, talking to the engine at DOCKER_HOST like the
 * docker CLI itself. runplan drives engines through their own CLIs: whatever a
 * host's docker can reach (a local dockerd, a remote one, a swarm manager), it can.
 */
export class DockerCli extends EngineCli {
  private constructor(binary: string, env: NodeJS.ProcessEnv) {
    // The environment every docker command gets: the machine's variables, DOCKER_HOST, BuildKit on.
    super('docker', binary, env);
  }

  /**
   * Finds a client that can build with BuildKit: one with buildx, or one older
   * than 23.0, whose BuildKit is built in. RUNPLAN_E_ENGINE_UNAVAILABLE names
   * what was tried when none can, or when the engine does not answer.
   */
  static async connect(options: DockerOptions = {}): Promise<DockerCli> {
    const host = options.host ?? process.env.DOCKER_HOST;
    const env = { ...systemEnvironment(), ...(host ? { DOCKER_HOST: host } : {}), DOCKER_BUILDKIT: '1', DOCKER_CLI_HINTS: 'false' };
    const tried: string[] = [];
    const binaries = options.binary ? [options.binary] : [process.env.RUNPLAN_DOCKER, ...CANDIDATES].filter((b): b is string => Boolean(b));
    for (const binary of [...new Set(binaries)]) {
      const version = await run(binary, ['version', '--format', '{{.Client.Version}}|{{.Server.Version}}'], env);
      if (version.code === 127) {
        tried.push(`${binary}: not found`);
        continue;
      }
      const [client = '', server = ''] = version.stdout.trim().split('|');
      if (server === '' || version.code !== 0) {
        throw CoreErrors.ENGINE_UNAVAILABLE.create({
          message: `the Docker engine ${host ? `at ${host} ` : ''}does not answer ${binary}: ${lastLine(version.stderr) || 'no server version'}.`,
          variable: 'DOCKER_HOST',
        });
      }
      const major = Number(client.split('.')[0]);
      if (major >= 23 && (await run(binary, ['buildx', 'version'], env)).code !== 0) {
        tried.push(`${binary}: client ${client} without buildx`);
        continue;
      }
      return new DockerCli(binary, env);
    }
    throw CoreErrors.ENGINE_UNAVAILABLE.create({
      message: `no docker client that can build with BuildKit was found (${tried.join('; ')}).`,
      fix: "Install Debian's docker.io (its /usr/bin/docker builds with BuildKit) or the buildx plugin, or point RUNPLAN_DOCKER at such a client.",
    });
  }
}
