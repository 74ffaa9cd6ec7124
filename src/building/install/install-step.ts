import { chmod, lstat, readdir, readlink, realpath, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { CoreErrors } from '../../errors/core-errors.js';
import type { AppUser } from '../../process/app-user.js';
import type { Install } from '../../plan/schema.js';
import { copyTree } from '../copy-tree.js';
import { assertReachable } from '../../process/ownership.js';
import { runplanItself } from '../../process/app-user.js';
import { type UserFileChange, UserFiles } from '../../process/user-files.js';
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
  // The build is the user's: what is made in it, it makes (docs/security.md, "Privilege model"), in one program.
  const files = new UserFiles(options.user ?? runplanItself());
  const changes = new PlannedChanges(trees, appDir);
  await changes.realDirectory(relative(appDir, dirname(target)));
  if (options.mode === 'copy') {
    // An image's build context: runplan's own directory, which no application can reach.
    await files.apply(changes.take());
    await rm(target, { recursive: true, force: true });
    await copyTree(dir, target);
  } else {
    changes.link(target, dir);
  }
  for (const link of step.links) {
    const path = inside(appDir, link.path, 'link');
    const to = inside(target, link.target, 'link target');
    await changes.realDirectory(relative(appDir, dirname(path)));
    changes.link(path, relative(dirname(path), to));
  }
  await files.apply(changes.take());
  options.log?.(`${describeSource(step.source)} in ${step.target}${cached ? ' (from the shared cache)' : ''}`);
}

/**
 * The changes an install step makes in the build, planned by runplan from what
 * it reads (metadata only) and carried out by the user in one program. Paths the
 * plan has changed already are answered from the plan, not the disk: below a
 * directory it splits, the disk still shows the cache.
 */
class PlannedChanges {
  private changes: UserFileChange[] = [];
  private readonly dirs = new Set<string>();
  private readonly links = new Map<string, string>();

  constructor(
    private readonly trees: string,
    private readonly appDir: string,
  ) {}

  /** The planned changes so far, which the caller carries out; the plan starts empty again. */
  take(): UserFileChange[] {
    const taken = this.changes;
    this.changes = [];
    return taken;
  }

  link(path: string, target: string): void {
    this.changes.push({ kind: 'remove', path }, { kind: 'symlink', target, path });
    this.dirs.delete(path);
    this.links.set(path, resolve(dirname(path), target));
  }

  /**
   * Makes `rel` (relative to the application) a real directory of the build, so
   * that what is created in it lands in the build and never in the cache: a path
   * crossing the symlink of an earlier install (npm inside Node.js's tree) turns
   * that symlink into a directory of symlinks, one per entry, and goes on below
   * it. A symlink that does not lead into the tree cache is not runplan's: refused.
   */
  async realDirectory(rel: string): Promise<void> {
    let current = this.appDir;
    for (const name of rel === '' ? [] : rel.split(sep)) {
      const parent = current;
      current = join(current, name);
      if (this.dirs.has(current)) continue;
      let into = this.links.get(current);
      if (into === undefined) {
        // Below a directory this plan makes, only the plan knows what there is.
        const info = this.dirs.has(parent) ? undefined : await lstat(current).catch(() => undefined);
        if (!info) {
          this.changes.push({ kind: 'mkdir', path: current });
          this.dirs.add(current);
          continue;
        }
        if (info.isDirectory()) continue;
        if (info.isSymbolicLink()) into = resolve(dirname(current), await readlink(current));
      }
      if (into === undefined || !(into === this.trees || into.startsWith(this.trees + sep))) {
        throw CoreErrors.BUILD_FILE_ESCAPES_APP.create({
          message: `${relative(this.appDir, current)} is in the way of an install step: it is not a directory runplan made.`,
          file: relative(this.appDir, current),
        });
      }
      const entries = await readdir(into);
      this.changes.push({ kind: 'remove', path: current }, { kind: 'mkdir', path: current });
      this.links.delete(current);
      this.dirs.add(current);
      for (const entry of entries) {
        this.changes.push({ kind: 'symlink', target: join(into, entry), path: join(current, entry) });
        this.links.set(join(current, entry), join(into, entry));
      }
    }
  }
}
