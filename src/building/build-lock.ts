import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { formatSeconds } from '../health/probes.js';
import { processStartTime } from '../process/process-identity.js';
import { BUILD_TAG_VARIABLE, terminateTagged } from '../process/process-tree.js';
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
 * half-written. Taking over is serialised by a marker per stale lock (see takeOver).
 */
export interface BuildLock {
  readonly file: string;
  /** This build's token: its steps carry it (BUILD_TAG_VARIABLE) so that a build taking a stale lock over finds what they left. */
  readonly token: string;
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
const BUILD_LOCK_POLL_MS = 500;
const LEFTOVER_GRACE_MS = 2_000;

export async function acquireBuildLock(workspaceRoot: string, options: BuildLockOptions): Promise<BuildLock> {
  const clock = options.clock ?? systemClock;
  const file = join(workspaceRoot, BUILD_LOCK_FILE);
  await mkdir(workspaceRoot, { recursive: true }).catch((error: unknown) => {
    // A --work-dir that is a file, or a directory this user cannot write: the user's to fix, not a crash.
    throw CoreErrors.BUILD_WORKSPACE.create({ message: `cannot create the work directory ${workspaceRoot}: ${(error as Error).message}`, file: workspaceRoot, cause: error });
  });
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
    if (await tryCreate(file, mine)) return { file, token: mine.token, release: () => release(file, mine.token) };
    const read = await readGeneration(file);
    if (read === 'absent') continue;
    const { owner } = read;
    const verdict = owner === 'unreadable' ? 'unreadable' : ownerState(owner);
    if (verdict === 'gone' || verdict === 'unreadable') {
      const who = owner === 'unreadable' ? 'an unreadable lock' : `the lock of process ${owner.pid} (build since ${owner.since})`;
      if (await takeOver(file, read.id, mine)) {
        options.log?.(`${who} is stale: that process no longer runs; taking it over (${file})`);
        if (owner !== 'unreadable') {
          // Killed mid-build (SIGKILL, OOM), it could stop nothing: its steps may still run, writing into a build being removed.
          const left = await terminateTagged(BUILD_TAG_VARIABLE, owner.token, LEFTOVER_GRACE_MS);
          if (left > 0) options.log?.(`stopped ${left} process${left === 1 ? '' : 'es'} the killed build's steps left running`);
        }
        return { file, token: mine.token, release: () => release(file, mine.token) };
      }
      // Another build is taking it over: let it finish, then look again.
      await new Promise((resolve) => setImmediate(resolve));
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
  const read = await readGeneration(file);
  return read === 'absent' ? 'absent' : read.owner;
}

/**
 * The lock's owner and an id of this generation of the file (the owner's token,
 * or a digest of content that is not runplan's), from one read.
 */
async function readGeneration(file: string): Promise<{ owner: LockOwner | 'unreadable'; id: string } | 'absent'> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw CoreErrors.BUILD_WORKSPACE.create({ message: `cannot read the build lock ${file}: ${(error as Error).message}`, file, cause: error });
  }
  try {
    const owner = JSON.parse(text) as LockOwner;
    if (Number.isInteger(owner.pid) && owner.pid > 0 && typeof owner.token === 'string' && typeof owner.host === 'string') {
      // The id names the takeover marker: a token that is not a plain word is digested.
      return { owner, id: /^[0-9A-Za-z_-]{1,64}$/.test(owner.token) ? owner.token : digest(owner.token) };
    }
  } catch {
    // Not runplan's: handled as unreadable below.
  }
  return { owner: 'unreadable', id: digest(text) };
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
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

/**
 * Replaces the stale generation `staleId` of the lock with this build's own, and
 * says whether it did. Of several builds taking over one stale lock at once, one
 * wins the marker `<lock>.takeover-<staleId>` (created like the lock itself); the
 * winner checks that the lock is still that generation and renames its own lock
 * over it, atomically. Nothing else replaces an existing lock file, so between the
 * check and the rename the lock cannot change. A marker left by a build that died
 * in these few steps is removed by the next build that finds it.
 */
async function takeOver(file: string, staleId: string, mine: LockOwner): Promise<boolean> {
  const marker = `${file}.takeover-${staleId}`;
  if (!(await tryCreate(marker, mine))) {
    const holder = await readOwner(marker);
    if (typeof holder === 'object' && ownerState(holder) === 'gone') await unlink(marker).catch(() => undefined);
    return false;
  }
  try {
    const current = await readGeneration(file);
    if (current === 'absent' || current.id !== staleId) return false;
    const temp = `${file}.${mine.token}.new`;
    await writeFile(temp, `${JSON.stringify(mine)}\n`, { mode: 0o644 });
    try {
      await rename(temp, file);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw CoreErrors.BUILD_WORKSPACE.create({ message: `cannot take over the build lock ${file}: ${(error as Error).message}`, file, cause: error });
    }
    return true;
  } finally {
    await unlink(marker).catch(() => undefined);
  }
}

async function release(file: string, token: string): Promise<void> {
  const owner = await readOwner(file).catch(() => 'absent' as const);
  if (typeof owner === 'object' && owner.token === token) await unlink(file).catch(() => undefined);
}
