import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireBuildLock, BUILD_LOCK_FILE } from '../../src/building/build-lock.js';
import { processStartTime } from '../../src/process/process-identity.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { InstantClock } from '../../src/time/clock.js';
import { tempDir } from '../helpers/temp.js';

/** An InstantClock that runs `onSleep` (with the count of sleeps so far) at each sleep. */
class HookedClock extends InstantClock {
  constructor(private readonly onSleep: (count: number) => Promise<void> | void) {
    super(1_000_000);
  }
  override async sleep(ms: number): Promise<void> {
    await super.sleep(ms);
    await this.onSleep(this.sleeps.length);
  }
}

/** A lock file as another runplan process writes it. */
async function writeLockOf(root: string, owner: { pid: number; startTime: string | null; host?: string }): Promise<void> {
  const lock = { host: hostname(), since: '2025-01-01T00:00:00.000Z', token: 'someone-else', ...owner };
  await writeFile(join(root, BUILD_LOCK_FILE), JSON.stringify(lock));
}

/** A real process, killed with SIGKILL: its pid is free (and not reused this soon). */
async function deadProcess(): Promise<{ pid: number; startTime: string }> {
  const child = spawn('sleep', ['300'], { stdio: 'ignore' });
  await new Promise((r) => child.once('spawn', r));
  const pid = child.pid as number;
  const startTime = processStartTime(pid) as string;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  return { pid, startTime };
}

describe('build lock', () => {
  it('lets one build hold it; another fails at once with RUNPLAN_E_BUILD_LOCKED when it may not wait', async () => {
    const root = await tempDir();
    const first = await acquireBuildLock(root, { waitMs: 0 });
    const owner = JSON.parse(await readFile(first.file, 'utf8'));
    expect(owner).toMatchObject({ pid: process.pid, startTime: processStartTime(process.pid), host: hostname() });
    await expect(acquireBuildLock(root, { waitMs: 0 })).rejects.toMatchObject({
      code: CoreErrors.BUILD_LOCKED.code,
      file: join(root, BUILD_LOCK_FILE),
      message: expect.stringContaining(`another build of this application (process ${process.pid}, since `),
      details: { pid: process.pid },
    });
    await first.release();
    const again = await acquireBuildLock(root, { waitMs: 0 });
    await again.release();
    expect(await readdir(root)).toEqual([]);
  });

  it('waits for the other build, polling on the injected clock, says so once, and takes the lock when it is released', async () => {
    const root = await tempDir();
    const first = await acquireBuildLock(root, { waitMs: 0 });
    const lines: string[] = [];
    const clock = new HookedClock((count) => (count === 3 ? first.release() : undefined));
    const second = await acquireBuildLock(root, { waitMs: 600_000, clock, log: (l) => lines.push(l) });
    expect(clock.sleeps).toEqual([500, 500, 500]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^another build of this application is running \\(process ${process.pid}, since .*\\); waiting up to 600 s for it to finish \\(.*build\\.lock\\)$`));
    await second.release();
  });

  it('gives up after the configured wait with the coded error', async () => {
    const root = await tempDir();
    const first = await acquireBuildLock(root, { waitMs: 0 });
    const clock = new InstantClock();
    await expect(acquireBuildLock(root, { waitMs: 2_200, clock })).rejects.toMatchObject({ code: CoreErrors.BUILD_LOCKED.code, message: expect.stringContaining('waited 2.2 s') });
    expect(clock.sleeps).toEqual([500, 500, 500, 500, 200]);
    await first.release();
  });

  it('stops waiting when the build is interrupted', async () => {
    const root = await tempDir();
    const first = await acquireBuildLock(root, { waitMs: 0 });
    const abort = new AbortController();
    const clock = new HookedClock((count) => (count === 2 ? abort.abort() : undefined));
    await expect(acquireBuildLock(root, { waitMs: 600_000, clock, signal: abort.signal })).rejects.toMatchObject({ code: CoreErrors.BUILD_INTERRUPTED.code });
    await first.release();
  });

  it('takes over the lock of a process killed with SIGKILL, and says so', async () => {
    const root = await tempDir();
    await writeLockOf(root, await deadProcess());
    const lines: string[] = [];
    const lock = await acquireBuildLock(root, { waitMs: 0, log: (l) => lines.push(l) });
    expect(lines[0]).toMatch(/^the lock of process \d+ \(build since 2025-01-01T00:00:00.000Z\) is stale: that process no longer runs; taking it over/);
    expect(JSON.parse(await readFile(lock.file, 'utf8')).pid).toBe(process.pid);
    await lock.release();
  });

  it('takes over a lock whose pid now belongs to another process (started at another time)', async () => {
    const root = await tempDir();
    // This very process is alive, but did not start at that time: the pid was recycled.
    await writeLockOf(root, { pid: process.pid, startTime: '1' });
    const lock = await acquireBuildLock(root, { waitMs: 0 });
    await lock.release();
  });

  it('never takes over a live lock, nor one written on another host', async () => {
    const root = await tempDir();
    await writeLockOf(root, { pid: process.ppid, startTime: processStartTime(process.ppid) ?? null });
    await expect(acquireBuildLock(root, { waitMs: 0 })).rejects.toMatchObject({ code: CoreErrors.BUILD_LOCKED.code });
    const dead = await deadProcess();
    await writeLockOf(root, { ...dead, host: 'another-host' });
    await expect(acquireBuildLock(root, { waitMs: 0 })).rejects.toMatchObject({ code: CoreErrors.BUILD_LOCKED.code, message: expect.stringContaining(`process ${dead.pid} on another-host`) });
  });

  it('gives a stale lock to exactly one of several builds taking it over at once', async () => {
    const root = await tempDir();
    const dead = await deadProcess();
    // Repeated: a race between takeovers shows only in some interleavings.
    for (let round = 0; round < 25; round++) {
      await writeLockOf(root, dead);
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => acquireBuildLock(root, { waitMs: 0 })));
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won, `round ${round}`).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: CoreErrors.BUILD_LOCKED.code });
      await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof acquireBuildLock>>>).value.release();
      expect(await readdir(root)).toEqual([]);
    }
  });
});
