import { lchown, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { dirname, join, parse } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import type { AppUser } from './app-user.js';

/**
 * Gives the user a tree that runplan made (a directory a host prepared for
 * StepBuilder, an npm cache made before builds dropped privileges). Safe
 * because it only ever descends into directories that are still root's: no
 * entry of those can be swapped by the user, and each directory is handed over
 * only after everything below it (post-order). A directory that is the user's
 * already is left as it is, with all it holds: the user could change it while
 * root walked it. Nothing to do when the user is runplan's own.
 */
export async function handOver(path: string, user: AppUser | undefined): Promise<void> {
  if (!user?.dropped) return;
  const info = await lstat(path);
  if (info.uid === user.uid) return;
  if (info.isDirectory() && info.uid === process.getuid?.()) for (const name of await readdir(path)) await handOver(join(path, name), user);
  await lchown(path, user.uid, user.gid);
}

/** `path` and only `path` (a file runplan wrote, a symlink it made), owned by the user. */
export async function ownPath(path: string, user: AppUser | undefined): Promise<void> {
  if (user?.dropped) await lchown(path, user.uid, user.gid);
}

/** mkdir -p whose new directories belong to the user. */
export async function mkdirOwned(path: string, user: AppUser | undefined, mode?: number): Promise<void> {
  const first = await mkdir(path, { recursive: true, ...(mode === undefined ? {} : { mode }) });
  if (first === undefined || !user?.dropped) return;
  for (let dir = path; ; dir = dirname(dir)) {
    await lchown(dir, user.uid, user.gid);
    if (dir === first || dir === dirname(dir)) break;
  }
}

/**
 * Checks that the unprivileged user can reach `dir` (search permission on every
 * directory above it): a build directory under root's 0700 home, or a 0700
 * temporary directory, would otherwise fail later with a bare EACCES.
 */
export async function assertReachable(dir: string, user: AppUser | undefined, what: string): Promise<void> {
  if (!user?.dropped) return;
  const { root } = parse(dir);
  for (let current = dirname(dir); ; current = dirname(current)) {
    const info = await stat(current).catch(() => undefined);
    if (info) {
      const bits = info.uid === user.uid ? 0o100 : info.gid === user.gid ? 0o010 : 0o001;
      if ((info.mode & bits) === 0) {
        throw CoreErrors.HOST_APP_USER.create({
          message: `the ${what} ${dir} is not reachable by ${user.name} (uid ${user.uid}), the user builds and applications run as: ${current} is mode ${(info.mode & 0o777).toString(8)}, owned by uid ${info.uid}. Give others search permission on it (chmod o+x) or use a directory under /var/lib or /var/cache.`,
        });
      }
    }
    if (current === root) break;
  }
}
