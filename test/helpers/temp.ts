import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, inject } from 'vitest';

/** A temporary directory removed after the test file. */
export async function tempDir(prefix = 'runplan-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  afterAll(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Directories for one deployment under test: its own work directory (so the
 * test can check that no process is left in it) and the run's shared cache.
 */
export async function deploymentDirs(): Promise<{ workDir: string; cacheDir: string; env: Record<string, string> }> {
  const workDir = await tempDir('runplan-work-');
  const cacheDir = inject('sharedCacheDir');
  return { workDir, cacheDir, env: { RUNPLAN_WORK_DIR: workDir, RUNPLAN_CACHE_DIR: cacheDir } };
}
