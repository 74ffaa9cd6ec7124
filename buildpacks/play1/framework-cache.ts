import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { distributionRoot, unpackArchive } from './archive.js';
import { downloadVerified, type DownloadOptions } from './download.js';

/** One release to install: where it comes from and what its archive must hash to. */
export interface FrameworkRelease {
  readonly version: string;
  readonly url: string;
  readonly sha256: string;
}

/**
 * Unpacked Play distributions shared by every build on the host, one directory
 * per release and archive checksum:
 *
 *   <cacheDir>/play1/<version>-<sha256 prefix>/   play, framework/, modules/ …
 *
 * An entry appears only by renaming a complete, verified unpack into place, so
 * a reader never sees a half-written entry and a bad download never becomes
 * one. Concurrent builds may both download; the first rename wins and the other
 * copy is dropped.
 */
export function frameworkCacheEntry(cacheDir: string, release: Pick<FrameworkRelease, 'version' | 'sha256'>): string {
  return join(cacheDir, 'play1', `${release.version.replace(/[^A-Za-z0-9._-]/g, '_')}-${release.sha256.slice(0, 16)}`);
}

export interface EnsuredFramework {
  readonly dir: string;
  /** False when this call downloaded and unpacked it. */
  readonly cached: boolean;
}

export async function ensureFramework(cacheDir: string, release: FrameworkRelease, options: DownloadOptions = {}): Promise<EnsuredFramework> {
  const entry = frameworkCacheEntry(cacheDir, release);
  if (await isDirectory(entry)) return { dir: entry, cached: true };

  await removeAbandoned(join(cacheDir, 'play1'));
  const work = join(cacheDir, 'play1', `.tmp-${randomBytes(6).toString('hex')}`);
  await mkdir(join(work, 'unpacked'), { recursive: true });
  try {
    const archive = join(work, 'archive');
    await downloadVerified(release.url, release.sha256, archive, options);
    const format = await unpackArchive(archive, join(work, 'unpacked'), release.url);
    const root = await distributionRoot(join(work, 'unpacked'), release.url);
    // Some distributions lost the launcher's execute bit on the way; it is run directly.
    await chmod(join(root, 'play'), 0o755);
    try {
      await rename(root, entry);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another build finished the same release first: its copy is as good as ours.
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !(await isDirectory(entry))) throw error;
    }
    options.log?.(`unpacked Play ${release.version} (${format}) into the shared cache`);
    return { dir: entry, cached: false };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

/** Temporary directories a killed build left behind (a day old: no running build still uses them). */
async function removeAbandoned(dir: string): Promise<void> {
  const dayAgo = Date.now() - 86_400_000;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith('.tmp-')) continue;
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info && info.mtimeMs < dayAgo) await rm(join(dir, name), { recursive: true, force: true });
  }
}
