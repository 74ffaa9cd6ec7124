import { closeSync, openSync } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import { CoreErrors } from '../errors/core-errors.js';
import type { RunplanError } from '../errors/runplan-error.js';
import { LineSplitter, type LineSplitterOptions } from '../log/line-splitter.js';
import { systemEnvironment } from './process-env.js';

/**
 * The one way runplan runs a short-lived program (a probe, a build step, a hook,
 * `docker …`, tar as the application's user, mmdebstrap): every other module
 * asks this one, and only this one imports execa (a test checks it, over src/,
 * buildpacks/ and host/src/). A server that lives long (runplan-host's sshd,
 * Caddy, add-on servers) is started here too (startProgram: no timeout, its
 * output in a log file or in lines, stopped by its pid with RunningProgram.kill).
 * Programs that live as long as a deployment are kept by src/engines/local/supervised-process.ts.
 */

/** What a short-lived program printed and how it ended. */
export interface ProgramResult {
  /** What it printed, up to maxBufferBytes each; empty when the output went to onLine or to a stream. */
  readonly stdout: string;
  readonly stderr: string;
  /** Exit status; null when a signal (or the timeout) ended it, or it never started. */
  readonly exitCode: number | null;
  /** The signal that ended it, if one did. */
  readonly signal?: NodeJS.Signals | null;
  /** Exited 0 within the time allowed. */
  readonly ok: boolean;
  /** Set when it was stopped for running past timeoutMs: RUNPLAN_E_HOST_PROGRAM_TIMEOUT, for the caller to throw or tell. */
  readonly timeout?: RunplanError;
}

/** How a program ended, with what runProgram alone does not tell. */
export interface ProgramOutcome extends ProgramResult {
  readonly signal: NodeJS.Signals | null;
  /** Why it could not be started ('ENOENT': not found, 'EACCES': not executable…); undefined once it ran. */
  readonly startError: string | undefined;
  /** Stopped because options.signal was aborted. */
  readonly interrupted: boolean;
  /** The error of options.input, when the stream of it failed (the program was then killed). */
  readonly inputError: Error | undefined;
  /** Bytes of output past maxBufferBytes, dropped (the program went on). */
  readonly droppedBytes: number;
}

/** Options of runProgram. */
export interface RunProgramOptions {
  /** Its whole environment (never extended). Default: the machine's own variables only (systemEnvironment), never the deployment's. */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Killed after this long (default 30 s; 0: never): a probe that hangs must not hang planning or a build. */
  readonly timeoutMs?: number;
  /** Output kept of each stream (default 64 MiB); the rest is dropped and counted, and the program goes on. */
  readonly maxBufferBytes?: number;
}

/** Options of startProgram: runProgram's, and what a program that lives long or runs as another user needs. */
export interface StartProgramOptions extends RunProgramOptions {
  /** Run with this user's ids (spawnIdentity()); default: runplan's own. */
  readonly uid?: number;
  readonly gid?: number;
  /** Its standard input: a text, bytes or a stream (piped; a stream that fails kills the program). Default: none. */
  readonly input?: string | Uint8Array | Readable;
  /** Stops the program when aborted (killSignal). */
  readonly signal?: AbortSignal;
  /** How a timeout or `signal` stops it (default SIGTERM, then SIGKILL 5 s later). */
  readonly killSignal?: NodeJS.Signals;
  /** Each line of output as it comes, instead of keeping the output. */
  readonly onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Bounds of those lines (longest line, budget shared by both streams). */
  readonly lineOptions?: LineSplitterOptions;
  /** Standard output as a stream (RunningProgram.stdout) instead of keeping it. */
  readonly stdoutStream?: boolean;
  /** Keep the last maxBufferBytes of the output rather than the first (the end of an error). */
  readonly keepLast?: boolean;
  /** Its own process group, led by it (process-tree.ts stops such a tree). */
  readonly detached?: boolean;
  /** Told its pid once it started. */
  readonly onStart?: (pid: number) => void;
  /** Told when it exited, with its exit status or the signal that ended it, before its output pipes close (a daemon it left, or a server's own children, may hold them). */
  readonly onExit?: (exitCode: number | null, signal: NodeJS.Signals | null) => void;
  /**
   * 'inherit': it gets runplan's own standard input, output and error as they are, byte for byte, not
   * piped through runplan (a program that talks to runplan's caller itself: git-receive-pack on an
   * SSH session, runplan-host serve started again in a clean environment). Nothing of its output is
   * then kept (stdout and stderr are empty) and input, onLine, stdoutStream and outputFile do not apply.
   */
  readonly stdio?: 'inherit';
  /**
   * A file its standard output and error are appended to (made 0600 when missing), written by the
   * program itself, not piped through runplan: a server's log, which it keeps writing whatever becomes
   * of runplan's process. Opened by startProgram, which throws as fs.openSync does when it cannot be.
   * Nothing of its output is then kept (stdout and stderr are empty); its standard input is none.
   */
  readonly outputFile?: string;
  /**
   * Left running when runplan's own process exits. By default a program still running then is killed
   * with it; a server the host stops itself (by its pid, RunningProgram.kill) and a program that must
   * finish what it does whatever runplan's process does (git-receive-pack taking a push) set this.
   */
  readonly keepRunningOnExit?: boolean;
}

/** A started program: its output as a stream when asked for, and how it ended. */
export interface RunningProgram {
  /** Its standard output, when started with stdoutStream (otherwise an ended stream). */
  readonly stdout: Readable;
  readonly done: Promise<ProgramOutcome>;
  /**
   * Sends it `signal` (to its pid alone, not its process group) while it runs: one asked for before it
   * started is sent once it has; none is sent once it exited (its pid may be another process's by then)
   * or when it could not start. Nothing follows it: a caller that wants SIGKILL after a grace sends it.
   */
  kill(signal: NodeJS.Signals): void;
  /**
   * Lets runplan's own process exit while the program runs: neither the program nor its pipes keep
   * the event loop alive any longer (Node.js's unref). For a server started with keepRunningOnExit
   * that a later run of the host finds again by its identity; `done` settles only if this process is
   * still there when the program ends.
   */
  unref(): void;
}

/** What kill() needs of the program: its process once started, and whether it has exited. */
interface Signalled {
  child: { readonly pid?: number | undefined } | undefined;
  exited: boolean;
  pending: NodeJS.Signals | undefined;
  /** unref() was asked for, maybe before the program started. */
  unref: (() => void) | undefined;
  unrefAsked: boolean;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_BUFFER = 64 * 1024 * 1024;

/**
 * Runs a program of the host to read what it prints (a version banner, `npm pack`,
 * `ssh-keygen -y`). Resolves with undefined when the program is missing or not
 * executable, so a probe can tell "absent" from "failed".
 */
export async function runProgram(file: string, args: readonly string[], options: RunProgramOptions = {}): Promise<ProgramResult | undefined> {
  const outcome = await startProgram(file, args, options).done;
  if (outcome.startError === 'ENOENT' || outcome.startError === 'EACCES') return undefined;
  const { stdout, stderr, exitCode, signal, ok, timeout } = outcome;
  return { stdout, stderr, exitCode, signal, ok, ...(timeout ? { timeout } : {}) };
}

/** Starts a program; `done` resolves however it ends (never rejects): the caller decides from the outcome. */
export function startProgram(file: string, args: readonly string[], options: StartProgramOptions = {}): RunningProgram {
  const stdout = new PassThrough();
  if (!options.stdoutStream) stdout.end();
  // Opened now, so that a log file that cannot be opened is the caller's error at once, as it was before runplan ran anything.
  const outputFd = options.stdio !== 'inherit' && options.outputFile !== undefined ? openSync(options.outputFile, 'a', 0o600) : undefined;
  const signalled: Signalled = { child: undefined, exited: false, pending: undefined, unref: undefined, unrefAsked: false };
  return {
    stdout,
    done: run(file, args, options, stdout, outputFd, signalled),
    kill: (signal) => {
      if (signalled.exited) return;
      if (signalled.child === undefined) signalled.pending = signal;
      else sendSignal(signalled.child.pid, signal);
    },
    unref: () => {
      signalled.unrefAsked = true;
      signalled.unref?.();
    },
  };
}

function sendSignal(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, signal);
  } catch {
    // Exited in the meantime, not reaped yet.
  }
}

/** The streams execa gives the program: piped to runplan (the default), runplan's own, or a log file. */
function stdioOptions(options: StartProgramOptions, outputFd: number | undefined) {
  if (options.stdio === 'inherit') return { stdin: 'inherit', stdout: 'inherit', stderr: 'inherit' } as const;
  // execa's types name only the descriptors 3 to 9, but it gives any descriptor that is an option's only value to the program as it is.
  if (outputFd !== undefined) return { stdin: 'ignore', stdout: outputFd as 3, stderr: outputFd as 3 } as const;
  return { stdin: options.input === undefined ? 'ignore' : 'pipe' } as const;
}

async function run(file: string, args: readonly string[], options: StartProgramOptions, stdoutStream: PassThrough, outputFd: number | undefined, signalled: Signalled): Promise<ProgramOutcome> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let child: ReturnType<typeof import('execa').execa>;
  try {
    // Loaded on first use: planning never runs a program, and execa is a third of the CLI's start-up time.
    const { execa } = await import('execa');
    child = execa(file, [...args], {
      env: options.env ?? systemEnvironment(),
      extendEnv: false,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
      ...stdioOptions(options, outputFd),
      buffer: false,
      reject: false,
      timeout: timeoutMs,
      killSignal: options.killSignal ?? 'SIGTERM',
      ...(options.signal ? { cancelSignal: options.signal } : {}),
      ...(options.detached ? { detached: true } : {}),
      ...(options.keepRunningOnExit ? { cleanup: false } : {}),
    });
  } finally {
    // The program has its own copy of the log file's descriptor.
    if (outputFd !== undefined) closeSync(outputFd);
  }
  signalled.child = child;
  child.once('exit', () => {
    signalled.exited = true;
  });
  if (signalled.pending !== undefined) sendSignal(child.pid, signalled.pending);
  signalled.unref = () => {
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as { unref?: () => void } | null)?.unref?.();
  };
  if (signalled.unrefAsked) signalled.unref();
  child.once('spawn', () => {
    if (child.pid !== undefined) options.onStart?.(child.pid);
  });
  const { onExit } = options;
  if (onExit) child.once('exit', (code: number | null, signal: NodeJS.Signals | null) => onExit(code, signal));

  let inputError: Error | undefined;
  feed(child.stdin, options.input, (error) => {
    inputError = error;
    child.kill('SIGKILL');
  });
  const max = options.maxBufferBytes ?? DEFAULT_MAX_BUFFER;
  const out = collect(child.stdout, 'stdout', options, max);
  const err = collect(child.stderr, 'stderr', options, max);
  if (options.stdoutStream) {
    if (child.stdout) child.stdout.pipe(stdoutStream);
    else stdoutStream.end();
  }

  const result = await child;
  stdoutStream.end();
  if (isStream(options.input)) {
    // Whatever it did not read is drained: the program writing it (a tar, mmdebstrap) finishes instead of blocking for ever.
    if (child.stdin) options.input.unpipe(child.stdin);
    options.input.resume();
  }
  const exitCode = result.exitCode ?? null;
  const startError = result.exitCode === undefined && result.signal === undefined && typeof result.code === 'string' && child.pid === undefined ? result.code : undefined;
  return {
    stdout: out.text(),
    stderr: err.text(),
    exitCode,
    signal: (result.signal as NodeJS.Signals | undefined) ?? null,
    ok: exitCode === 0 && !result.timedOut && inputError === undefined,
    ...(result.timedOut ? { timeout: timeoutError(file, timeoutMs) } : {}),
    startError,
    interrupted: result.isCanceled === true,
    inputError,
    droppedBytes: out.dropped() + err.dropped(),
  };
}

function timeoutError(file: string, timeoutMs: number): RunplanError {
  return CoreErrors.HOST_PROGRAM_TIMEOUT.create({
    message: `${file} did not finish within ${timeoutMs / 1000} s and was stopped.`,
    details: { program: file, timeoutMs },
  });
}

/** Gives the program its input; a broken pipe (it stopped reading) is told by its exit status, not here. */
function feed(stdin: NodeJS.WritableStream | null, input: StartProgramOptions['input'], failed: (error: Error) => void): void {
  if (stdin === null || input === undefined) return;
  stdin.on('error', () => undefined);
  if (!isStream(input)) {
    stdin.end(input);
    return;
  }
  input.once('error', failed);
  input.pipe(stdin);
}

function isStream(input: StartProgramOptions['input']): input is Readable {
  return input !== undefined && typeof input !== 'string' && !(input instanceof Uint8Array);
}

interface Collected {
  text(): string;
  dropped(): number;
}

/** One output stream: split into lines for onLine, or kept (within the cap), or left to the caller's stream. */
function collect(stream: Readable | null, name: 'stdout' | 'stderr', options: StartProgramOptions, max: number): Collected {
  const none: Collected = { text: () => '', dropped: () => 0 };
  if (stream === null || (name === 'stdout' && options.stdoutStream)) return none;
  const { onLine } = options;
  if (onLine) {
    const lines = new LineSplitter((line) => onLine(line, name), options.lineOptions);
    stream.on('data', (chunk: Buffer) => lines.push(chunk));
    // A last line without a newline is still a line (flushing twice emits nothing more).
    const flushed = () => {
      lines.flush();
      return '';
    };
    return { text: flushed, dropped: () => 0 };
  }
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  stream.on('data', (chunk: Buffer) => {
    if (options.keepLast) {
      chunks.push(chunk);
      kept += chunk.length;
      while (kept - (chunks[0]?.length ?? 0) >= max && chunks.length > 1) {
        const first = chunks.shift() as Buffer;
        kept -= first.length;
        dropped += first.length;
      }
      return;
    }
    const room = max - kept;
    if (room <= 0) {
      dropped += chunk.length;
      return;
    }
    chunks.push(room >= chunk.length ? chunk : chunk.subarray(0, room));
    kept += Math.min(room, chunk.length);
    dropped += Math.max(0, chunk.length - room);
  });
  return {
    text: () => {
      const all = Buffer.concat(chunks);
      return (options.keepLast && all.length > max ? all.subarray(all.length - max) : all).toString('utf8');
    },
    dropped: () => dropped,
  };
}
