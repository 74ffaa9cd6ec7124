import { constants, copyFile, link, lstat, mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppUser } from '../process/app-user.js';
import { mkdirOwned, ownPath } from '../process/ownership.js';

/**
 * Copies a tree by hard-linking its files (directories and symlinks are recreated).
 * Cached layers are large and frozen (read-only, root's when runplan is root:
 * src/files/freeze.ts), so linking them costs almost nothing and no build can
 * write through a link. Falls back to a real copy across file systems. The new
 * directories (writable by their owner, whatever the source's mode) and
 * symlinks belong to `user`; the files keep their owner.
 */
export async function hardlinkTree(from: string, to: string, user?: AppUser): Promise<void> {
  const info = await lstat(from);
  if (info.isSymbolicLink()) {
    await symlink(await readlink(from), to);
    await ownPath(to, user);
  } else if (info.isDirectory()) {
    // Parents it makes (a layer under .runplan/) are the user's too.
    await mkdirOwned(to, user, (info.mode & 0o7777) | 0o700);
    for (const name of await readdir(from)) await hardlinkTree(join(from, name), join(to, name), user);
  } else {
    try {
      await link(from, to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      await copyFile(from, to);
    }
  }
}

/**
 * A real copy of a tree (reflinked where the file system can): for directories
 * that must not share a single inode with the cache. Files keep their mode,
 * directories get their owner's write bit so that the copy can be removed.
 */
export async function copyTree(from: string, to: string): Promise<void> {
  const info = await lstat(from);
  if (info.isSymbolicLink()) {
    await symlink(await readlink(from), to);
  } else if (info.isDirectory()) {
    await mkdir(to, { recursive: true, mode: (info.mode & 0o7777) | 0o700 });
    for (const name of await readdir(from)) await copyTree(join(from, name), join(to, name));
  } else {
    await copyFile(from, to, constants.COPYFILE_FICLONE);
  }
}
