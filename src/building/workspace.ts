import { createHash, randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readdir, readlink, realpath, rename, rm, stat, symlink } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { isInside } from '../files/app-path.js';
import type { AppUser } from '../process/app-user.js';
import { ownPath } from '../process/ownership.js';
import { buildInUse } from '../process/builds-in-use.js';
import { packOwnTree, removeUserDirectory, UserFiles } from '../process/user-files.js';

/**
 * Builds never touch the application's own directory: the source is copied into a
 * fresh build directory under the cache, built there, and only a successful build
 * becomes `current` (an atomic symlink swap). A failed build is removed and the
 * previous one keeps serving, so nothing is lost and nothing is half-built.
 *
 *   <workDir>/<name>-<hash>/builds/<id>/   one directory per build
 *   <workDir>/<name>-<hash>/current        symlink to the last good build
 *
 * Builds of one application are serialised by the build lock (build-lock.ts),
 * which the caller holds from createBuildDirectory until commit or discard. So
 * promoting a build keeps it, the one it replaces, and every build whose
 * processes still run (a release draining while the next deploy runs:
 * builds-in-use.ts), and removes every other build: what remains was left by a
 * killed build or by a release that has stopped.
 */
export interface AppWorkspace {
  readonly root: string;
  readonly currentLink: string;
}

// Not part of a deployment: version control data, dependencies the build recreates, runplan's own state.
const NEVER_COPIED = new Set(['.git', 'node_modules', '.runplan']);

export function appWorkspace(workDir: string, appRoot: string): AppWorkspace {
  const abs = resolve(appRoot);
  const hash = createHash('sha256').update(abs).digest('hex').slice(0, 12);
  const root = join(workDir, `${basename(abs).replace(/[^A-Za-z0-9._-]/g, '_')}-${hash}`);
  return { root, currentLink: join(root, 'current') };
}

/**
 * Makes the application's workspace root (if missing) root's, group the
 * application's user's, mode 0710: its user reaches its builds and temporary
 * directories, and no other user — another application's included — can even
 * look inside (docs/security.md, "Tenancy"). Nothing to do when runplan is not root.
 */
export async function closeWorkspace(workspace: AppWorkspace, user: AppUser): Promise<void> {
  await mkdir(workspace.root, { recursive: true, mode: 0o700 });
  if (!user.dropped) return;
  await chown(workspace.root, 0, user.gid);
  await chmod(workspace.root, 0o710);
}

/** A key for per-application caches (layers), stable across builds of the same source directory. */
export function appCacheKey(workspace: AppWorkspace): string {
  return basename(workspace.root);
}

export interface BuildDirectory {
  /** The build: a copy of the repository. */
  readonly dir: string;
  /** Where the application is in it: `dir`, or its folder APP_FOLDER. */
  readonly appDir: string;
  /** Makes this build the current one and removes every build but it, the previous one and those in use. */
  commit(): Promise<void>;
  /**
   * Makes this build the current one, and returns the removal of every build but
   * it, the previous one and those in use, for the caller to run when it suits it (a deployment
   * reports "healthy" first).
   */
  makeCurrent(): Promise<() => Promise<void>>;
  /** Removes this build (after a failure). */
  discard(): Promise<void>;
}

/** Copies the application's source into `dest`, without what is never part of a deployment (an image's build context: runplan's own directory). */
export async function copySource(appRoot: string, dest: string): Promise<void> {
  await mkdir(dest, { recursive: true });
  // Loaded on first use, like execa: planning alone never copies.
  const { default: fse } = await import('fs-extra');
  await fse.copy(resolve(appRoot), dest, {
    filter: (src) => !NEVER_COPIED.has(basename(src)),
    preserveTimestamps: true,
  });
}

/**
 * A fresh build of the repository at `appRoot`, whose application is its folder
 * `folder` ('' for the root). The build directory is made by root in its own
 * `builds/` and given to `user` empty; the source reaches it as a tar stream
 * that the user unpacks, so the tree is the user's from its first file and root
 * never walks it (docs/security.md, "Privilege model").
 */
export async function createBuildDirectory(workspace: AppWorkspace, appRoot: string, folder: string, user: AppUser): Promise<BuildDirectory> {
  const id = `${new Date().toISOString().replace(/[-:.TZ]/g, '')}-${randomBytes(3).toString('hex')}`;
  const dir = join(workspace.root, 'builds', id);
  const files = new UserFiles(user);
  const remove = () => removeUserDirectory(dir, files);
  try {
    await mkdir(join(workspace.root, 'builds'), { recursive: true });
    await mkdir(dir, { mode: 0o755 });
    await ownPath(dir, user);
    // The source is root's (or the host's: no application code has run on it).
    const source = packOwnTree(resolve(appRoot), [...NEVER_COPIED]);
    await Promise.all([files.unpack(dir, source.stream), source.done]);
  } catch (error) {
    await remove().catch(() => undefined);
    throw CoreErrors.BUILD_WORKSPACE.create({ message: `cannot copy ${appRoot} into ${dir}: ${(error as Error).message}`, cause: error });
  }
  const appDir = folder === '' ? dir : join(dir, folder);
  try {
    await assertFolderInside(dir, folder);
  } catch (error) {
    await remove().catch(() => undefined);
    throw error;
  }
  return {
    dir,
    appDir,
    async commit() {
      await (await makeCurrent())();
    },
    makeCurrent,
    discard: remove,
  };

  async function makeCurrent(): Promise<() => Promise<void>> {
    const previous = await currentBuild(workspace);
    const tmpLink = `${workspace.currentLink}.${randomBytes(4).toString('hex')}`;
    await symlink(dir, tmpLink);
    await rename(tmpLink, workspace.currentLink);
    // Keep this build and the one it replaces (its processes may still serve).
    // Comparing ids by age would remove a build that started earlier and is
    // still running; under the build lock no other build runs.
    const kept = new Set([dir, previous].filter((d): d is string => d !== undefined).map((d) => basename(d)));
    return async () => {
      const buildsDir = join(workspace.root, 'builds');
      for (const name of await readdir(buildsDir)) {
        // Checked at removal, not at the switch: a release may stop (or start) in between.
        if (!kept.has(name) && !buildInUse(join(buildsDir, name))) await removeUserDirectory(join(buildsDir, name), files);
      }
    };
  }
}

/**
 * The application's folder in the build must be a folder of the build. Planning
 * checked it in the repository; a saved plan, or a repository changed since,
 * may name a folder that is now a link out of it.
 */
async function assertFolderInside(dir: string, folder: string): Promise<void> {
  if (folder === '') return;
  const real = await realpath(join(dir, folder)).catch(() => undefined);
  const info = real === undefined ? undefined : await stat(real);
  if (real === undefined || !info?.isDirectory()) {
    throw CoreErrors.APP_FOLDER_NOT_FOUND.create({ message: `APP_FOLDER=${JSON.stringify(folder.slice(0, 200))} is not a folder of the repository being built.`, variable: 'APP_FOLDER' });
  }
  if (!isInside(await realpath(dir), real)) {
    throw CoreErrors.APP_FOLDER_OUTSIDE.create({
      message: `APP_FOLDER=${JSON.stringify(folder.slice(0, 200))} leads outside the repository being built (through a symbolic link).`,
      variable: 'APP_FOLDER',
    });
  }
}

/** Host keys the application's builds trusted on first use (CC_SSH_PRIVATE_KEY without known hosts), `<root>/ssh_known_hosts`. */
export const SSH_TRUSTED_HOSTS_FILE = 'ssh_known_hosts';

/**
 * Removes the temporary directories of builds that were killed before they
 * could remove their own — their TMPDIR (`build-*`) and the directory of their
 * SSH key (`ssh-*`). Called with the build lock held: no build runs.
 */
export async function removeAbandonedBuildTemp(workspace: AppWorkspace, user: AppUser): Promise<void> {
  const tmp = join(workspace.root, 'tmp');
  const files = new UserFiles(user);
  for (const name of await readdir(tmp).catch(() => [] as string[])) {
    if (name.startsWith('build-') || name.startsWith('ssh-')) await removeUserDirectory(join(tmp, name), files);
  }
}

/** The directory of the last successful build, if any. */
async function currentBuild(workspace: AppWorkspace): Promise<string | undefined> {
  try {
    return await realpath(resolve(workspace.root, await readlink(workspace.currentLink)));
  } catch {
    return undefined;
  }
}

export interface WorkspaceTempDir {
  readonly dir: string;
  remove(): Promise<void>;
}

/**
 * A private temporary directory of the workspace (`<root>/tmp/<name>`), given to a
 * build's steps or a run's processes as TMPDIR and removed when they are done.
 * With `user`, it is that user's (0700), and removed as removeUserDirectory does;
 * without, it is runplan's own (an image's secrets).
 */
export async function workspaceTempDir(workspace: AppWorkspace, name: string, user?: AppUser): Promise<WorkspaceTempDir> {
  const dir = join(workspace.root, 'tmp', name);
  await mkdir(join(workspace.root, 'tmp'), { recursive: true });
  if (user === undefined) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
  }
  const files = new UserFiles(user);
  // A directory left by a killed run is the user's: emptied by the user before it is used again.
  await removeUserDirectory(dir, files);
  await mkdir(dir, { mode: 0o700 });
  await ownPath(dir, user);
  return { dir, remove: () => removeUserDirectory(dir, files) };
}
