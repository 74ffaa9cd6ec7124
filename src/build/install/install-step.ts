import { chmod, mkdir, rm, stat, symlink } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { CoreErrors } from '../../errors/core-errors.js';
import { writablePathInside } from '../../files/app-path.js';
import type { Install } from '../../plan/schema.js';
import { hardlinkTree } from '../hardlink-copy.js';
import { describeSource, ensureTree, type TreeOptions } from './tree-cache.js';

/** `path` resolved inside `root`, or the error that it is not (links followed: the application may have committed `.runplan` → elsewhere). */
function inside(root: string, path: string, what: string): Promise<string> {
  return writablePathInside(root, path, what);
}

/**
 * Carries out an install step: the tree from the shared cache (fetched and
 * verified on first use) is hard-linked at the step's target in the
 * application, its executables are made executable, and its links created.
 */
export async function carryOutInstall(step: Install, appDir: string, cacheDir: string, options: TreeOptions = {}): Promise<void> {
  const { dir, cached } = await ensureTree(cacheDir, step.source, options);
  const target = await inside(appDir, step.target, 'install target');
  await rm(target, { recursive: true, force: true });
  await mkdir(dirname(target), { recursive: true });
  await hardlinkTree(dir, target);
  for (const file of step.executables) {
    const path = await inside(target, file, 'executable');
    if (!(await stat(path).catch(() => undefined))?.isFile()) {
      throw CoreErrors.BUILD_ARCHIVE_INVALID.create({ message: `${describeSource(step.source)} has no file ${file}, which this step needs.` });
    }
    await chmod(path, 0o755);
  }
  for (const link of step.links) {
    const path = await inside(appDir, link.path, 'link');
    const to = await inside(target, link.target, 'link target');
    await mkdir(dirname(path), { recursive: true });
    await rm(path, { force: true });
    await symlink(relative(dirname(path), to), path);
  }
  options.log?.(`${describeSource(step.source)} in ${step.target}${cached ? ' (from the shared cache)' : ''}`);
}
