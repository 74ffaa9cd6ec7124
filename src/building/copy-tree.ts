import { constants, copyFile, lstat, mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A real copy of a tree of runplan's own (reflinked where the file system can),
 * e.g. a runtime from the cache into an image's build context. Files keep their mode,
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
