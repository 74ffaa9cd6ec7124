import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { thawDirectories } from '../../src/files/freeze.js';

// Each test file has its own module instance (isolated forks), so this holds that file's temporaries.
const recorded = new Set<string>();

/** Removes `path` once every test and hook of the current test file has run (test/setup/remove-temporaries.ts). */
export function removeAfterFile(path: string): void {
  recorded.add(path);
}

/** Removes what removeAfterFile recorded; called once per test file, after its own hooks. */
export async function removeRecorded(): Promise<void> {
  const paths = [...recorded];
  recorded.clear();
  await Promise.all(
    paths.map((p) =>
      rm(p, { recursive: true, force: true, maxRetries: 3 }).catch(async () => {
        // A shared-cache entry made read-only (0555 directories) that a user other than root must unlock first.
        await thawDirectories(p);
        await rm(p, { recursive: true, force: true, maxRetries: 3 });
      }),
    ),
  );
}

/**
 * A temporary directory, removed after the test file. Usable anywhere (in a
 * test, in beforeAll): vitest ignores afterAll() called from inside a test, so
 * removal does not rely on it.
 */
export async function tempDir(prefix = 'runplan-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  removeAfterFile(dir);
  // Searchable by others (not listable): as root, runplan builds and runs as its unprivileged
  // user, which must reach the build directories made in here (docs/security.md).
  await chmod(dir, 0o711);
  return dir;
}

/**
 * A temporary directory the application's processes may write into (sticky and
 * world-writable, like /tmp): as root they run as runplan's unprivileged user,
 * and a test reads back what they wrote there.
 */
export async function writableTempDir(prefix = 'runplan-test-'): Promise<string> {
  const dir = await tempDir(prefix);
  await chmod(dir, 0o1777);
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
