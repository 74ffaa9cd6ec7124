import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';

const LOCK = () => join(inject('sharedCacheDir'), 'swarm-in-use');

/**
 * The test engine is in a swarm for one test file at a time: the Swarm tests
 * join and leave it, and two files doing so at once would pull it from under
 * each other. Held from before `swarm init` until after `swarm leave`; a lock
 * whose holder died (an interrupted run) is taken over.
 */
export async function holdSwarm(): Promise<() => Promise<void>> {
  for (;;) {
    try {
      await mkdir(LOCK());
      await writeFile(join(LOCK(), 'pid'), String(process.pid));
      return () => rm(LOCK(), { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (!(await holderAlive())) await rm(LOCK(), { recursive: true, force: true });
      else await sleep(1_000);
    }
  }
}

async function holderAlive(): Promise<boolean> {
  const pid = Number(await readFile(join(LOCK(), 'pid'), 'utf8').catch(() => ''));
  // Just made, its pid not written yet: alive.
  if (!pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
