import { lstat, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppUser } from '../process/app-user.js';
import { copyTree, hardlinkTree } from './hardlink-copy.js';
import { ownTree } from '../process/ownership.js';
import { freezeTree } from '../files/freeze.js';
import { ensureCached, isCacheWorkDirectory } from '../files/cache-entry.js';

const KEYS_KEPT = 3;

/**
 * Cached layers, one directory per (application, layer, key). A layer is saved
 * by ensureCached (src/files/cache-entry.ts), so a crash never leaves a
 * half-saved layer that a later build would trust. The few most recent keys of a
 * layer are kept, so builds that alternate between settings (or run at the same
 * time with different settings) each find their own copy.
 *
 *   <cacheDir>/layers/<app>/<layer>/<key>/
 *
 * Layers are restored by hard links, so a saved layer's files are frozen
 * (read-only, and root's when runplan is root): a build or a running application
 * that writes into a restored node_modules file gets EACCES instead of changing
 * the layer for every later build. It may still replace or add files, in its own
 * directories. The files of the build the layer was saved from are the same
 * inodes: they become read-only there too.
 */
export class LayerCache {
  constructor(private readonly root: string) {}

  static forApp(cacheDir: string, appKey: string): LayerCache {
    return new LayerCache(join(cacheDir, 'layers', appKey));
  }

  private entry(layer: string, key: string): string {
    return join(this.root, safe(layer), safe(key));
  }

  async has(layer: string, key: string): Promise<boolean> {
    try {
      return (await stat(this.entry(layer, key))).isDirectory();
    } catch {
      return false;
    }
  }

  /** Links the cached layer into `target` (which must not exist yet). */
  async restore(layer: string, key: string, target: string, user?: AppUser): Promise<void> {
    await hardlinkTree(this.entry(layer, key), target, user);
  }

  /**
   * Copies the cached layer into `target` for a warm start: the build's steps
   * write into it, so it shares no inode with the cache. What the build already
   * has there (committed files) is kept; the cache adds what is missing.
   */
  async restoreCopy(layer: string, key: string, target: string, user?: AppUser): Promise<void> {
    await mergeTree(this.entry(layer, key), target);
    await ownTree(target, user);
  }

  /**
   * Saves `source` as the layer's copy for `key`; copies for older keys beyond the few kept are removed.
   * By hard links, frozen (the build's files become read-only too), or, for a warm-start layer the
   * application keeps writing, as a copy.
   */
  async save(layer: string, key: string, source: string, { copy = false }: { copy?: boolean } = {}): Promise<void> {
    const layerDir = join(this.root, safe(layer));
    await ensureCached(
      this.entry(layer, key),
      async (work) => {
        const copyDir = join(work, 'layer');
        if (copy) {
          await copyTree(source, copyDir);
        } else {
          await hardlinkTree(source, copyDir);
          await freezeTree(copyDir, { directories: false });
        }
        return copyDir;
      },
      { replace: true },
    );
    const entries = await Promise.all((await readdir(layerDir)).filter((n) => !isCacheWorkDirectory(n)).map(async (name) => ({ name, mtime: (await stat(join(layerDir, name))).mtimeMs })));
    entries.sort((a, b) => b.mtime - a.mtime);
    for (const { name } of entries.slice(KEYS_KEPT)) await rm(join(layerDir, name), { recursive: true, force: true });
  }
}

/** copyTree that leaves what `to` already holds as it is. */
async function mergeTree(from: string, to: string): Promise<void> {
  const existing = await lstat(to).catch(() => undefined);
  if (existing === undefined) return copyTree(from, to);
  if (!existing.isDirectory() || !(await lstat(from)).isDirectory()) return;
  for (const name of await readdir(from)) await mergeTree(join(from, name), join(to, name));
}

function safe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}
