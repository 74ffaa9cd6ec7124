import { CoreErrors } from '../errors/core-errors.js';
import { startProgram } from '../process/run-program.js';

export interface EngineResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface EngineCommandOptions {
  readonly input?: string;
  readonly env?: Record<string, string>;
}

/**
 * A container engine's command-line client (docker, podman): runplan drives
 * engines through their own CLIs. `prefix` goes before every command's
 * arguments (podman's own --root and --runroot).
 */
export class EngineCli {
  protected constructor(
    /** How messages name the client: "docker", "podman". */
    readonly name: string,
    readonly binary: string,
    /** The environment every command gets. */
    readonly env: NodeJS.ProcessEnv,
    private readonly prefix: readonly string[] = [],
  ) {}

  /** Runs `<engine> <args>`; resolves with its output whatever the exit status. */
  run(args: readonly string[], options: EngineCommandOptions = {}): Promise<EngineResult> {
    return runCommand(this.binary, [...this.prefix, ...args], { ...this.env, ...options.env }, options.input);
  }

  /** Runs `<engine> <args>` and returns its standard output, or throws RUNPLAN_E_ENGINE_COMMAND_FAILED. */
  async ok(args: readonly string[], options: EngineCommandOptions = {}): Promise<string> {
    const result = await this.run(args, options);
    if (result.code !== 0) {
      throw CoreErrors.ENGINE_COMMAND_FAILED.create({
        message: `${this.name} ${args.slice(0, 3).join(' ')} failed (exit status ${result.code}): ${lastLine(result.stderr) || lastLine(result.stdout)}`,
        details: { args: args.slice(0, 3), code: result.code },
      });
    }
    return result.stdout;
  }

  /** Runs `<engine> <args>`, passing each output line to `line` as it comes; resolves with the exit status. */
  stream(args: readonly string[], line: (text: string, stream: 'stdout' | 'stderr') => void, options: EngineCommandOptions & { signal?: AbortSignal } = {}): Promise<number> {
    return startProgram(this.binary, [...this.prefix, ...args], {
      env: { ...this.env, ...options.env },
      // A build or a push takes as long as it takes: the caller's signal stops it.
      timeoutMs: 0,
      onLine: line,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.input === undefined ? {} : { input: options.input }),
    }).done.then(exitStatus);
  }
}

/** `<binary> <args>`, its output kept whatever the exit status (the one program runner, src/process/run-program.ts). */
export async function runCommand(binary: string, args: readonly string[], env: NodeJS.ProcessEnv, input?: string): Promise<EngineResult> {
  const ran = await startProgram(binary, args, { env, timeoutMs: 0, maxBufferBytes: 256 * 1024 * 1024, ...(input === undefined ? {} : { input }) }).done;
  return { code: exitStatus(ran), stdout: ran.stdout, stderr: ran.stderr };
}

/** As a shell tells it: 127 for a client not found, 126 for one that cannot be started, 1 for one ended by a signal. */
function exitStatus(ran: { startError: string | undefined; exitCode: number | null }): number {
  if (ran.startError !== undefined) return ran.startError === 'ENOENT' ? 127 : 126;
  return ran.exitCode ?? 1;
}

export function lastLine(text: string): string {
  // The CLI's usage errors end with a pointer to --help; the line before says what was wrong.
  return (
    text
      .trim()
      .split('\n')
      .filter((l) => l && !/^See '.*--help'\.$/.test(l))
      .slice(-1)[0] ?? ''
  );
}
