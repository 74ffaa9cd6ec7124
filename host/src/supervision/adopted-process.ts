import { isRunning, type ProcessIdentity, watchUntilGone } from 'runplan/process';

/** How the host's log says an adopted process ended: not its child, so no exit status reaches serve. */
export const ADOPTED_END = 'stopped (adopted from an earlier serve: its exit status is not known)';

/**
 * Sends `signal` to the process the identity names, only while that very process runs: a PID another
 * process holds since is never signalled. Whether it was sent.
 */
export function signalByIdentity(identity: ProcessIdentity, signal: NodeJS.Signals): boolean {
  if (!isRunning(identity)) return false;
  try {
    process.kill(identity.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Waits up to `ms` for the process to be gone; whether it is. */
async function goneWithin(identity: ProcessIdentity, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!isRunning(identity)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** SIGTERM, and SIGKILL after `graceMs`, to the process the identity names (by identity each time); resolves once it is gone. */
export async function stopByIdentity(identity: ProcessIdentity, graceMs: number): Promise<void> {
  if (!signalByIdentity(identity, 'SIGTERM')) return;
  if (await goneWithin(identity, graceMs)) return;
  signalByIdentity(identity, 'SIGKILL');
  await goneWithin(identity, 10_000);
}

/** An adopted process's end, polled (it is not serve's child), and a way to stop watching it. */
export interface AdoptedWatch {
  /** Settles with ADOPTED_END once it is gone; with `let go` once letGo() ended the watch first. */
  readonly ended: Promise<string>;
  letGo(): void;
}

export function watchAdopted(identity: ProcessIdentity): AdoptedWatch {
  const watch = new AbortController();
  const ended = watchUntilGone(identity, { intervalMs: 250, signal: watch.signal }).then((gone) => (gone ? ADOPTED_END : 'let go'));
  return { ended, letGo: () => watch.abort() };
}
