import { randomBytes } from 'node:crypto';
import { chmod, chown, lstat, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { AppUser } from '../process/app-user.js';
import { runProgram } from '../process/run-program.js';
import { removeUserDirectory, type UserFiles } from '../process/user-files.js';
import type { LayerCache } from './layer-cache.js';

/** Where a copy waits, root's and closed to every application: `<workspace>/layers-ready/`. */
const READY = 'layers-ready';
/** Where a copy crosses to the user: root's, the user's group may only enter and rename out of it (no listing). */
const HANDOFF = 'layers-handoff';
const WORK_PREFIX = '.work-';

/**
 * A build's `node_modules` must be its own writable copy of the sealed layer
 * (docs/security.md, "Build cache"), and on a file system without reflinks
 * (ext4) writing that copy's hundreds of files is most of a warm rebuild. So the
 * copy the next build will restore is made ahead of time, once a build is
 * accepted (off a deployment's way to "healthy"): by root, from the sealed
 * entry, into a directory no application can reach, cloned where the file
 * system can (cp --reflink=auto) and given to the user. Restoring is then two
 * renames: root moves the copy into the hand-off directory under a random name,
 * and the user moves it into its build, so that every change in the build is
 * still the user's own (UserFiles).
 *
 * What the build gets is what the tar restore would have given it (the entry's
 * files, modes and times, the user's), made from the sealed entry and never
 * reachable by the application before the build takes it. A copy is named after
 * its entry's inode: an entry saved again under the same key is never matched
 * by the copy of the one it replaced (inode and change time).
 */
export class ReadyLayers {
  private readonly readyDir: string;
  private readonly handoffDir: string;

  constructor(
    workspaceRoot: string,
    private readonly user: AppUser,
  ) {
    this.readyDir = join(workspaceRoot, READY);
    this.handoffDir = join(workspaceRoot, HANDOFF);
  }

  /** Moves the ready copy of (layer, key) to `target`, replacing what is there; false when there is none (the caller restores as usual). */
  async take(cache: LayerCache, layer: string, key: string, target: string, files: UserFiles, signal?: AbortSignal): Promise<boolean> {
    const ready = await this.readyPath(cache, layer, key);
    if (ready === undefined || !(await exists(ready))) return false;
    await this.openHandoff();
    const passing = join(this.handoffDir, randomBytes(16).toString('hex'));
    await rename(ready, passing);
    try {
      await files.moveIn(passing, target, signal ? { signal } : {});
      return true;
    } catch (error) {
      // The user may have changed it by now: it goes as any tree of the user's does.
      await removeUserDirectory(passing, files).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Makes the copy the next build of (layer, key) will take, unless it is there;
   * copies of other keys of the layer, and what a killed build left half made or
   * half handed over, are removed. Called under the application's build lock.
   */
  async prepare(cache: LayerCache, layer: string, key: string, files: UserFiles): Promise<void> {
    const ready = await this.readyPath(cache, layer, key);
    if (ready === undefined || (await exists(ready))) return;
    await this.sweepHandoff(files);
    const layerDir = join(ready, '..');
    await mkdir(this.readyDir, { recursive: true, mode: 0o700 });
    await chmod(this.readyDir, 0o700);
    await mkdir(layerDir, { recursive: true, mode: 0o700 });
    // Only root has ever reached these (the directory above is 0700): root may remove them.
    for (const name of await readdir(layerDir)) await rm(join(layerDir, name), { recursive: true, force: true });
    const work = join(layerDir, `${WORK_PREFIX}${randomBytes(6).toString('hex')}`);
    try {
      // cp and chown rather than fs.cp: the hundreds of entries are walked outside this process (a runner
      // that supervises the application meanwhile keeps a small heap). --reflink=auto: a clone that shares
      // the blocks until either side writes where the file system has them (XFS, Btrfs), elsewhere a copy.
      // Modes, times and links (verbatim) are the entry's; then the user's (-h -P: links themselves, never followed).
      await system('cp', ['-a', '--reflink=auto', '--', cache.entryPath(layer, key), work]);
      if (this.user.dropped) await system('chown', ['-R', '-h', '-P', `${this.user.uid}:${this.user.gid}`, '--', work]);
      await rename(work, ready);
    } catch (error) {
      await rm(work, { recursive: true, force: true });
      throw error;
    }
  }

  /** Where the copy of the entry now saved for (layer, key) waits, or undefined when nothing is saved. */
  private async readyPath(cache: LayerCache, layer: string, key: string): Promise<string | undefined> {
    const path = cache.entryPath(layer, key);
    const entry = await stat(path, { bigint: true }).catch(() => undefined);
    if (!entry?.isDirectory()) return undefined;
    // The entry's own names are safe already (LayerCache's). Its inode number alone may be reused by a later entry;
    // with the time it was renamed into place (nothing changes a sealed entry after), it names this one.
    return join(this.readyDir, basename(dirname(path)), `${basename(path)}-${entry.ino}-${entry.ctimeNs}`);
  }

  private async openHandoff(): Promise<void> {
    await mkdir(this.handoffDir, { recursive: true, mode: 0o700 });
    if (!this.user.dropped) return;
    await chown(this.handoffDir, 0, this.user.gid);
    await chmod(this.handoffDir, 0o730);
  }

  private async sweepHandoff(files: UserFiles): Promise<void> {
    for (const name of await readdir(this.handoffDir).catch(() => [] as string[])) await removeUserDirectory(join(this.handoffDir, name), files);
  }
}

/** One of the system's programs, as root, on a tree of root's own. */
async function system(program: string, args: readonly string[]): Promise<void> {
  const ran = await runProgram(program, args, { cwd: '/', env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' }, timeoutMs: 0, maxBufferBytes: 2_000 });
  if (!ran?.ok) throw new Error(`${program} failed: ${ran?.stderr.trim().split('\n').pop() || (ran ? `exit status ${ran.exitCode}` : 'not found')}`);
}

function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}
