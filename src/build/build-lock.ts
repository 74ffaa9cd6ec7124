import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { formatSeconds } from '../health/probes.js';
import { systemClock, type Clock } from '../time/clock.js';

/**
 * Builds of one application are serialised by a lock file in its workspace,
 * `<workspace>/build.lock`, holding who owns it: process id, the process's
 * start time (from /proc/<pid>/stat, so that a recycled pid is not mistaken
 * for the owner), host name, since when, and a random token.
 *
 * The lock survives a crash of its owner as a file, and is recognised as stale
 * when the owner is gone: its pid no longer runs on this host, or runs a
 * process started at another time. A stale lock is taken over at once (and
 * logged). A live one is waited for, polling on the injected clock, up to the
 * host's `buildLockWaitMs`; then the build fails with RUNPLAN_E_BUILD_LOCKED.
 * A lock written on another host (a shared work directory) cannot be checked
 * and is never taken over.
 *
 * The file is written complete under a temporary name and hard-linked into
 * place (link(2) fails when the name exists), so a lock file is never seen
 * half-written. Taking over renames the stale file to a private name first:
 * of two builds taking over at once, only one rename succeeds.
 */
export interface BuildLock {
  readonly file: string;
  /** Removes the lock if this build still owns it. Idempotent. */
  release(): Promise<void>;
}

export interface BuildLockOptions {
  /** How long to wait for another build to finish; 0 fails at once. */
  readonly waitMs: number;
  readonly clock?: Clock;
  /** Receives the lines that say what the build waits for or took over. */
  readonly log?: (line: string) => void;
  readonly signal?: AbortSignal;
}

interface LockOwner {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot), null where there is no /proc. */
  readonly startTime: string | null;
  readonly host: string;
  readonly since: string;
  readonly token: string;
}

export const BUILD_LOCK_FILE = 'build.lock';
export const BUILD_LOCK_POLL_MS = 500;

export async function acquireBuildLock(workspaceRoot: string, options: BuildLockOptions): Promise<BuildLock> {
  const clock = options.clock ?? systemClock;
  const file = join(workspaceRoot, BUILD_LOCK_FILE);
  await mkdir(workspaceRoot, { recursive: true });
  const mine: LockOwner = {
    pid: process.pid,
    startTime: processStartTime(process.pid) ?? null,
    host: hostname(),
    since: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
  };
  const deadline = clock.now() + options.waitMs;
  let waitingFor: string | undefined;
  for (;;) {
    if (options.signal?.aborted) {
      throw CoreErrors.BUILD_INTERRUPTED.create({ message: 'the build was interrupted while waiting for another build of the same application.' });
    }
    if (await tryCreate(file, mine)) return { file, release: () => release(file, mine.token) };
    const owner = await readOwner(file);
    if (owner === 'absent') continue;
    const verdict = owner === 'unreadable' ? 'unreadable' : ownerState(owner);
    if (verdict === 'gone' || verdict === 'unreadable') {
      const who = owner === 'unreadable' ? 'an unreadable lock' : `the lock of process ${owner.pid} (build since ${owner.since})`;
      if (await takeOver(file, owner)) options.log?.(`${who} is stale: that process no longer runs; taking it over (${file})`);
      continue;
    }
    const current = owner as LockOwner;
    const where = current.host === mine.host ? `process ${current.pid}` : `process ${current.pid} on ${current.host}`;
    if (clock.now() >= deadline) {
      throw CoreErrors.BUILD_LOCKED.create({
        message: `another build of this application (${where}, since ${current.since}) holds ${file}${options.waitMs > 0 ? `; waited ${formatSeconds(options.waitMs)}` : ''}.`,
        file,
        details: { pid: current.pid, host: current.host, since: current.since, waitedMs: options.waitMs },
      });
    }
    if (waitingFor !== current.token) {
      waitingFor = current.token;
      options.log?.(`another build of this application is running (${where}, since ${current.since}); waiting up to ${formatSeconds(Math.max(0, deadline - clock.now()))} for it to finish (${file})`);
    }
    await clock.sleep(Math.min(BUILD_LOCK_POLL_MS, Math.max(1, deadline - clock.now())), options.signal);
  }
}

/** Creates the lock file holding `owner`; false when it exists already. */
async function tryCreate(file: string, owner: LockOwner): Promise<boolean> {
  const temp = `${file}.${owner.token}.new`;
  await writeFile(temp, `${JSON.stringify(owner)}\n`, { mode: 0o644 });
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw CoreErrors.BUILD_WORKSPACE.create({ message: `cannot create the build lock ${file}: ${(error as Error).message}`, file, cause: error });
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

async function readOwner(file: string): Promise<LockOwner | 'absent' | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw CoreErrors.BUILD_WORKSPACE.create({ message: `cannot read the build lock ${file}: ${(error as Error).message}`, file, cause: error });
  }
  try {
    const owner = JSON.parse(text) as LockOwner;
    if (Number.isInteger(owner.pid) && owner.pid > 0 && typeof owner.token === 'string' && typeof owner.host === 'string') return owner;
  } catch {
    // Not runplan's: handled as unreadable below.
  }
  return 'unreadable';
}

/** Whether the owner of a lock still runs: 'unknown' for another host's. */
function ownerState(owner: LockOwner): 'alive' | 'gone' | 'unknown' {
  if (owner.host !== hostname()) return 'unknown';
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return 'gone';
  }
  const started = processStartTime(owner.pid);
  // The pid was given to another process since.
  if (owner.startTime !== null && started !== undefined && started !== owner.startTime) return 'gone';
  return 'alive';
}

/** Removes a stale lock, unless another build replaced it meanwhile. Returns whether this call removed it. */
async function takeOver(file: string, stale: LockOwner | 'unreadable'): Promise<boolean> {
  const aside = `${file}.${randomBytes(6).toString('hex')}.stale`;
  try {
    await rename(file, aside);
  } catch {
    // Another build took it over, or its owner released it, first.
    return false;
  }
  const moved = await readOwner(aside);
  const same = stale === 'unreadable' ? moved === 'unreadable' : typeof moved === 'object' && moved.token === stale.token;
  if (!same) {
    // A live lock, created between the check and the rename: put it back.
    await link(aside, file).catch(() => undefined);
  }
  await unlink(aside).catch(() => undefined);
  return same;
}

async function release(file: string, token: string): Promise<void> {
  const owner = await readOwner(file).catch(() => 'absent' as const);
  if (typeof owner === 'object' && owner.token === token) await unlink(file).catch(() => undefined);
}

/** When a process started (field 22 of /proc/<pid>/stat), or undefined without /proc. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
