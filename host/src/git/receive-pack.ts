import { spawn } from 'node:child_process';

/** How git-receive-pack ended: its exit status, or why it could not be started (ENOENT: git is not installed). */
export type ReceivePackOutcome = { readonly status: number } | { readonly startError: string };

/**
 * Runs git-receive-pack on `repository` with the SSH session's own streams, byte
 * for byte, and no time limit. The one program runplan-host starts without
 * runplan/process (test/unit/import-direction.test.ts names it): this runs in
 * the git program, which sshd starts at every push, and that entry point would
 * bring zod and execa into it for a spawn whose only outcome is an exit status.
 * Not detached and not killed when this process ends: a push under way finishes.
 */
export function runReceivePack(repository: string, env: NodeJS.ProcessEnv): Promise<ReceivePackOutcome> {
  return new Promise((resolve) => {
    const child = spawn('git-receive-pack', [repository], { stdio: 'inherit', env });
    child.once('error', (error: NodeJS.ErrnoException) => resolve({ startError: error.code ?? error.message }));
    // A signal is git's 128 and more, as a shell reports it; with no status at all, 1.
    child.once('exit', (code, signal) => resolve({ status: code ?? (signal === null ? 1 : 128) }));
  });
}
