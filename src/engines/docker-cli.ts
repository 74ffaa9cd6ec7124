import { execFile, spawn } from 'node:child_process';
import { CoreErrors } from '../errors/core-errors.js';
import { systemEnvironment } from '../process/process-env.js';
import { LineSplitter } from '../log/logger.js';

export interface DockerResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface DockerOptions {
  /** The docker client; default: the first of $RUNPLAN_DOCKER, `docker` on PATH and /usr/bin/docker that can build with BuildKit. */
  readonly binary?: string;
  /** The engine's address, as the docker CLI takes it; default $DOCKER_HOST. */
  readonly host?: string;
}

/** Clients tried in order; a newer client without buildx cannot build with BuildKit (NOTES.md, "Container engines"). */
const CANDIDATES = ['docker', '/usr/bin/docker'];

/**
 * The docker command-line client, talking to the engine at DOCKER_HOST like the
 * docker CLI itself. runplan drives engines through their own CLIs: whatever a
 * host's docker can reach (a local dockerd, a remote one, a swarm manager), it can.
 */
export class DockerCli {
  private constructor(
    readonly binary: string,
    /** The environment every docker command gets: the machine's variables, DOCKER_HOST, BuildKit on. */
    readonly env: NodeJS.ProcessEnv,
  ) {}

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

  /** Runs `docker <args>`; resolves with its output whatever the exit status. */
  run(args: readonly string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<DockerResult> {
    return run(this.binary, args, { ...this.env, ...options.env }, options.input);
  }

  /** Runs `docker <args>` and returns its standard output, or throws RUNPLAN_E_ENGINE_COMMAND_FAILED. */
  async ok(args: readonly string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<string> {
    const result = await this.run(args, options);
    if (result.code !== 0) {
      throw CoreErrors.ENGINE_COMMAND_FAILED.create({
        message: `docker ${args.slice(0, 3).join(' ')} failed (exit status ${result.code}): ${lastLine(result.stderr) || lastLine(result.stdout)}`,
        details: { args: args.slice(0, 3), code: result.code },
      });
    }
    return result.stdout;
  }

  /** Runs `docker <args>`, passing each output line to `line` as it comes; resolves with the exit status. */
  stream(args: readonly string[], line: (text: string, stream: 'stdout' | 'stderr') => void, options: { env?: Record<string, string>; signal?: AbortSignal; input?: string } = {}): Promise<number> {
    return new Promise((resolve) => {
      const child = spawn(this.binary, [...args], { env: { ...this.env, ...options.env }, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
      if (options.input !== undefined) child.stdin?.end(options.input);
      const out = new LineSplitter((t) => line(t, 'stdout'));
      const err = new LineSplitter((t) => line(t, 'stderr'));
      child.stdout?.on('data', (c: Buffer) => out.push(c));
      child.stderr?.on('data', (c: Buffer) => err.push(c));
      const abort = () => child.kill('SIGTERM');
      options.signal?.addEventListener('abort', abort, { once: true });
      child.on('error', () => resolve(127));
      child.on('close', (code) => {
        options.signal?.removeEventListener('abort', abort);
        out.flush();
        err.flush();
        resolve(code ?? 1);
      });
    });
  }
}

function run(binary: string, args: readonly string[], env: NodeJS.ProcessEnv, input?: string): Promise<DockerResult> {
  return new Promise((resolve) => {
    const child = execFile(binary, [...args], { env, maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? ((error as NodeJS.ErrnoException).code === 'ENOENT' ? 127 : typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

function lastLine(text: string): string {
  // The CLI's usage errors end with a pointer to --help; the line before says what was wrong.
  return (
    text
      .trim()
      .split('\n')
      .filter((l) => l && !/^See '.*--help'\.$/.test(l))
      .slice(-1)[0] ?? ''
  );
}
