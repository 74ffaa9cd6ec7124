import { link, lstat, mkdir, readdir, readlink, symlink, copyFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Copies a tree by hard-linking its files (directories and symlinks are recreated).
 * Cached layers and runtimes are large and never modified in place, so linking
 * them costs almost nothing. Falls back to a real copy across file systems.
 */
export async function hardlinkTree(from: string, to: string): Promise<void> {
  const info = await lstat(from);
  if (info.isSymbolicLink()) {
    await symlink(await readlink(from), to);
  } else if (info.isDirectory()) {
    await mkdir(to, { recursive: true, mode: info.mode & 0o7777 });
    for (const name of await readdir(from)) await hardlinkTree(join(from, name), join(to, name));
  } else {
    try {
      await link(from, to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      await copyFile(from, to);
    }
  }
}
