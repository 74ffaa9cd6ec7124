import { readFile, rm } from 'node:fs/promises';
import { formatIdentity, identifyProcess, isRunning, type ProcessIdentity, parseIdentity, processArguments, writeFileAtomic } from 'runplan/process';

/**
 * The identity of a server the host started (PID, start time, boot), kept in a file beside its pid file:
 * the next serve finds that very process again, never whichever process holds the PID by then.
 */
export async function writeIdentityFile(file: string, pid: number): Promise<ProcessIdentity | undefined> {
  const identity = identifyProcess(pid);
  // Gone already: its end is told by its exit, and there is nothing to find again.
  if (identity !== undefined) await writeFileAtomic(file, formatIdentity(identity), 0o600);
  return identity;
}

/** A process found again: its identity and the arguments it was started with. */
export interface FoundProcess {
  readonly identity: ProcessIdentity;
  readonly args: readonly string[];
}

/** The process the identity file names, if that very process still runs; undefined for a stale, missing or unreadable file. */
export async function liveProcessOf(file: string): Promise<FoundProcess | undefined> {
  const identity = parseIdentity(await readFile(file, 'utf8').catch(() => ''));
  return identity === undefined ? undefined : foundIfRunning(identity);
}

/** The process a pid file of the program's own names (from before identity files), if it runs now: `accept` decides from its arguments whether it is the one. */
export async function liveProcessOfPidFile(file: string, accept: (args: readonly string[]) => boolean): Promise<FoundProcess | undefined> {
  const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
  const identity = identifyProcess(pid);
  const found = identity === undefined ? undefined : foundIfRunning(identity);
  return found !== undefined && accept(found.args) ? found : undefined;
}

function foundIfRunning(identity: ProcessIdentity): FoundProcess | undefined {
  if (!isRunning(identity)) return undefined;
  const args = processArguments(identity.pid);
  // Read after the check: it is still that process only if its start time has not changed meanwhile.
  return args !== undefined && isRunning(identity) ? { identity, args } : undefined;
}

export async function removeIdentityFile(file: string): Promise<void> {
  await rm(file, { force: true });
}
