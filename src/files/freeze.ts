import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Makes a tree of the shared cache read-only: files 0444 (0555 when any execute
 * bit was set), directories 0555 unless `files only`, owned by root when runplan
 * runs as root. Builds reach runtimes through a symlink and cached layers through
 * hard links, so these are the very files every later build runs: the
 * unprivileged user that build steps and applications run as (docs/security.md)
 * can then neither write nor chmod them.
 */
export async function freezeTree(dir: string, options: { readonly directories?: boolean } = {}): Promise<void> {
  const asRoot = process.getuid?.() === 0;
  const walk = async (path: string): Promise<void> => {
    const info = await lstat(path);
    if (info.isSymbolicLink()) {
      if (asRoot && info.uid !== 0) await lchown(path, 0, 0);
      return;
    }
    if (info.isDirectory()) {
      for (const name of await readdir(path)) await walk(join(path, name));
      if (asRoot && (info.uid !== 0 || info.gid !== 0)) await lchown(path, 0, 0);
      if (options.directories !== false) await chmod(path, 0o555);
      return;
    }
    // Ownership first: a file the application's user owns could be made writable again.
    if (asRoot && (info.uid !== 0 || info.gid !== 0)) await lchown(path, 0, 0);
    const mode = info.mode & 0o111 ? 0o555 : 0o444;
    if ((info.mode & 0o7777) !== mode) await chmod(path, mode);
  };
  await walk(dir);
}

/** Whether `dir` was frozen (its own mode has no write bit). */
export async function isFrozen(dir: string): Promise<boolean> {
  return ((await lstat(dir)).mode & 0o222) === 0;
}

/** Gives directories of a frozen tree their owner's write bit back, so that it can be removed (a non-root owner cannot unlink inside 0555 directories). */
export async function thawDirectories(dir: string): Promise<void> {
  const info = await lstat(dir).catch(() => undefined);
  if (!info?.isDirectory()) return;
  await chmod(dir, 0o755);
  for (const name of await readdir(dir)) await thawDirectories(join(dir, name));
}
