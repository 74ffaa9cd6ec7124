import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { thawDirectories } from './freeze.js';

/** Options of ensureCached. */
export interface EnsureCachedOptions {
  /** Put a new copy in place of an existing entry (a layer saved again) rather than use it. */
  readonly replace?: boolean;
}

/** A complete entry of the shared cache (ensureCached): its directory, and whether it was there already. */
export interface CachedEntry {
  readonly dir: string;
  /** True when the entry was there already and `fill` did not run. */
  readonly cached: boolean;
}

/** Work directories older than this belong to a build that was killed: no running build still uses them. */
const ABANDONED_AFTER_MS = 86_400_000;
const WORK_PREFIX = '.tmp-';

/**
 * The one way anything enters a cache (installed trees, saved layers, a host
 * buildpack's downloads): `fill` builds the entry in a private work directory
 * beside it, and the entry appears only by a rename of the finished work, so a
 * reader never sees a half-written entry and a failed download never becomes
 * one. `fill` returns the directory inside the work directory that becomes the
 * entry (default: the work directory itself). Two processes filling the same
 * entry at once both work; the first rename wins, and the other's copy is
 * dropped. Work directories a killed process left behind are removed by a later
 * call once they are a day old.
 */
export async function ensureCached(entry: string, fill: (work: string) => Promise<string | undefined>, options: EnsureCachedOptions = {}): Promise<CachedEntry> {
  if (!options.replace && (await isDirectory(entry))) return { dir: entry, cached: true };
  const parent = dirname(entry);
  await mkdir(parent, { recursive: true });
  await removeAbandoned(parent);
  const work = join(parent, `${WORK_PREFIX}${randomBytes(6).toString('hex')}`);
  await mkdir(work);
  try {
    const ready = (await fill(work)) || work;
    if (options.replace) await removeTree(entry);
    try {
      await rename(ready, entry);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another process finished the same entry first: its copy is as good as ours.
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !(await isDirectory(entry))) throw error;
    }
    return { dir: entry, cached: false };
  } finally {
    await removeTree(work);
  }
}

/** True for a name `ensureCached` uses for its work directories: listings of a cache skip them. */
export function isCacheWorkDirectory(name: string): boolean {
  return name.startsWith(WORK_PREFIX);
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

/** A frozen copy (read-only directories) needs its write bits back before an unprivileged owner can remove it. */
async function removeTree(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true }).catch(async () => {
    await thawDirectories(dir);
    await rm(dir, { recursive: true, force: true });
  });
}

async function removeAbandoned(dir: string): Promise<void> {
  const dayAgo = Date.now() - ABANDONED_AFTER_MS;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!isCacheWorkDirectory(name)) continue;
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info && info.mtimeMs < dayAgo) await removeTree(join(dir, name)).catch(() => undefined);
  }
}
