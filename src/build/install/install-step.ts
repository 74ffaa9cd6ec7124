import { chmod, lstat, mkdir, readdir, readlink, realpath, rm, stat, symlink } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { CoreErrors } from '../../errors/core-errors.js';
import type { AppUser } from '../../process/app-user.js';
import type { Install } from '../../plan/schema.js';
import { copyTree } from '../hardlink-copy.js';
import { assertReachable, mkdirOwned, ownPath } from '../../process/ownership.js';
import { describeSource, ensureTree, type TreeOptions } from './tree-cache.js';

/** `path` resolved inside `root`, or the error that it is not. */
function inside(root: string, path: string, what: string): string {
  const target = resolve(root, path);
  if (target !== root && !target.startsWith(root + sep)) {
    throw CoreErrors.BUILD_FILE_ESCAPES_APP.create({ message: `${what} ${path} resolves outside the application.`, file: path });
  }
  return target;
}

export interface InstallOptions extends TreeOptions {
  /**
   * How the tree reaches the target: `share` (the default) makes the target a
   * symlink to the read-only cache entry; `copy` writes a real copy, for a
   * directory that leaves this host (an image's build context).
   */
  readonly mode?: 'share' | 'copy';
  /** Owner of the directories and links made in the application (docs/security.md). */
  readonly user?: AppUser;
}

/**
 * Carries out an install step: the tree from the shared cache (fetched, verified
 * and made read-only on first use) becomes the step's target in the application —
 * one symlink to the cache entry, so a warm build links nothing file by file and
 * no file of the cache can be written through the build — its executables get
 * their execute bits (in the cache), and its links are created.
 */
export async function carryOutInstall(step: Install, appDir: string, cacheDir: string, options: InstallOptions = {}): Promise<void> {
  const ensured = await ensureTree(cacheDir, step.source, options);
  const dir = await realpath(ensured.dir);
  const { cached } = ensured;
  const target = inside(appDir, step.target, 'install target');
  for (const file of step.executables) {
    // Followed to the real file, which must be part of the tree: chmod follows symlinks.
    const path = await realpath(inside(dir, file, 'executable')).catch(() => '');
    const info = path.startsWith(dir + sep) ? await stat(path).catch(() => undefined) : undefined;
    if (!info?.isFile()) {
      throw CoreErrors.BUILD_ARCHIVE_INVALID.create({ message: `${describeSource(step.source)} has no file ${file}, which this step needs.` });
    }
    // The same bits for every build that names it: set in the cache entry itself.
    if ((info.mode & 0o555) !== 0o555) await chmod(path, (info.mode & 0o7777) | 0o555);
  }
  const trees = await realpath(join(cacheDir, 'trees'));
  if (options.mode !== 'copy') await assertReachable(dir, options.user, 'shared cache entry');
  await realDirectory(appDir, relative(appDir, dirname(target)), trees, options.user);
  await rm(target, { recursive: true, force: true });
  if (options.mode === 'copy') {
    await copyTree(dir, target);
  } else {
    await symlink(dir, target);
    await ownPath(target, options.user);
  }
  for (const link of step.links) {
    const path = inside(appDir, link.path, 'link');
    const to = inside(target, link.target, 'link target');
    await realDirectory(appDir, relative(appDir, dirname(path)), trees, options.user);
    await rm(path, { force: true });
    await symlink(relative(dirname(path), to), path);
    await ownPath(path, options.user);
  }
  options.log?.(`${describeSource(step.source)} in ${step.target}${cached ? ' (from the shared cache)' : ''}`);
}

/**
 * Makes `rel` (relative to `appDir`) a real directory of the build, so that what
 * is created in it lands in the build and never in the cache: a path crossing
 * the symlink of an earlier install (npm inside Node.js's tree) turns that
 * symlink into a directory of symlinks, one per entry, and goes on below it. A
 * symlink that does not lead into the tree cache is not runplan's: refused.
 */
async function realDirectory(appDir: string, rel: string, trees: string, user: AppUser | undefined): Promise<void> {
  let current = appDir;
  for (const name of rel === '' ? [] : rel.split(sep)) {
    current = join(current, name);
    const info = await lstat(current).catch(() => undefined);
    if (!info) {
      await mkdirOwned(current, user);
      continue;
    }
    if (info.isDirectory()) continue;
    const into = info.isSymbolicLink() ? await readlink(current) : undefined;
    if (into === undefined || !(into === trees || into.startsWith(trees + sep))) {
      throw CoreErrors.BUILD_FILE_ESCAPES_APP.create({
        message: `${relative(appDir, current)} is in the way of an install step: it is not a directory runplan made.`,
        file: relative(appDir, current),
      });
    }
    const entries = await readdir(into);
    await rm(current);
    await mkdirOwned(current, user);
    for (const entry of entries) {
      await symlink(join(into, entry), join(current, entry));
      await ownPath(join(current, entry), user);
    }
  }
  await mkdir(current, { recursive: true });
}
