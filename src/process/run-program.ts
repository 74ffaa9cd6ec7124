import { execFile } from 'node:child_process';
import { systemEnvironment } from './process-env.js';

/** What a short-lived program printed and how it ended. */
export interface ProgramResult {
  readonly stdout: string;
  readonly stderr: string;
  /** Exit status; null when a signal (or the timeout) ended it. */
  readonly exitCode: number | null;
  /** Exited 0 within the time allowed. */
  readonly ok: boolean;
}

export interface RunProgramOptions {
  /** Default: the machine's own variables only (systemEnvironment), never the deployment's. */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Killed after this long (default 30 s): a probe that hangs must not hang planning or a build. */
  readonly timeoutMs?: number;
  readonly maxBufferBytes?: number;
}

/**
 * Runs a program of the host to read what it prints (a version banner, `npm pack`,
 * `ssh-keygen -y`): one way to do it everywhere outside build steps (which stream
 * through command-step.ts) and supervised processes. Resolves with undefined when
 * the program is missing or not executable, so a probe can tell "absent" from "failed".
 */
export function runProgram(file: string, args: readonly string[], options: RunProgramOptions = {}): Promise<ProgramResult | undefined> {
  return new Promise((resolve) => {
    execFile(
      file,
      [...args],
      {
        env: options.env ?? systemEnvironment(),
        timeout: options.timeoutMs ?? 30_000,
        maxBuffer: options.maxBufferBytes ?? 64 * 1024 * 1024,
        encoding: 'utf8',
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      },
      (error, stdout, stderr) => {
        const code = (error as NodeJS.ErrnoException | null)?.code;
        if (code === 'ENOENT' || code === 'EACCES') {
          resolve(undefined);
          return;
        }
        const exitCode = error === null ? 0 : typeof code === 'number' ? code : null;
        resolve({ stdout, stderr, exitCode, ok: error === null });
      },
    );
  });
}
