import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { hardlinkTree } from './hardlink-copy.js';

/**
 * Cached layers, one directory per (application, layer, key). A layer is saved
 * under a temporary name and renamed into place, so a crash never leaves a
 * half-saved layer that a later build would trust.
 *
 *   <cacheDir>/layers/<app>/<layer>/<key>/
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
  async restore(layer: string, key: string, target: string): Promise<void> {
    await hardlinkTree(this.entry(layer, key), target);
  }

  /** Saves `source` as the layer's copy for `key`, replacing copies made for other keys. */
  async save(layer: string, key: string, source: string): Promise<void> {
    const layerDir = join(this.root, safe(layer));
    await mkdir(layerDir, { recursive: true });
    const tmp = join(layerDir, `.tmp-${randomBytes(4).toString('hex')}`);
    try {
      await hardlinkTree(source, tmp);
      await rm(this.entry(layer, key), { recursive: true, force: true });
      await rename(tmp, this.entry(layer, key));
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    for (const name of await readdir(layerDir)) {
      if (name !== safe(key) && !name.startsWith('.tmp-')) await rm(join(layerDir, name), { recursive: true, force: true });
    }
  }
}

function safe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}
