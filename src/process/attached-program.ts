import { spawn } from 'node:child_process';

/** How a program run by runAttached ended: its exit status, or why it could not be started. */
export type AttachedOutcome = { readonly status: number } | { readonly startError: string };

/**
 * Runs `file` with this process's own standard input, output and error, byte for
 * byte, with exactly `env` and no time limit, and tells how it ended. Not detached and
 * not killed when this process ends: what it was doing (a `git-receive-pack` of a push)
 * finishes. A signal is reported as a shell does (128 and more); no status at all, as 1.
 *
 * It lives in its own entry point (`runplan/process/attached`), which imports only
 * Node.js: a program that starts at every request (runplan-host's git program, twice
 * per push) bundles this and nothing else of runplan. `runplan/process`'s
 * `startProgram(…, { stdio: 'inherit' })` does the same with its timeout, environment
 * rule and output handling, and brings execa with it.
 */
export function runAttached(file: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<AttachedOutcome> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: 'inherit', env });
    child.once('error', (error: NodeJS.ErrnoException) => resolve({ startError: error.code ?? error.message }));
    child.once('exit', (code, signal) => resolve({ status: code ?? (signal === null ? 1 : 128) }));
  });
}
