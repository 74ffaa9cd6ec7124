import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, statfs } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { CoreWarnings } from '../errors/core-warnings.js';
import { formatMemory } from './limit-strike.js';
import { runProgram } from '../process/run-program.js';

/** An application's own disk: an ext4 file system in one image file, mounted over its workspace. */
export interface DiskSettings {
  /** The image file (made sparse: it takes on the host's disk only what the application wrote). */
  readonly image: string;
  /** Its size: the hard limit of what the application's builds, files and caches in its workspace hold together. */
  readonly megabytes: number;
}

/** How full an application's disk is, from statfs(2). */
export interface DiskUsage {
  readonly sizeBytes: number;
  readonly freeBytes: number;
}

const MIB = 1024 * 1024;

/**
 * A disk counts as full when less than this is left: ext4 keeps a few blocks
 * for itself, so a writer that got ENOSPC may still see some kilobytes free.
 */
export function diskIsFull(usage: DiskUsage): boolean {
  return usage.freeBytes < Math.max(MIB, usage.sizeBytes / 200);
}

/** The coded line of an application's log when its disk has become full. */
export function diskFullLine(megabytes: number): string {
  return `${CoreWarnings.RUN_DISK_LIMIT.code}: the application's disk is full: its builds and files use its ${formatMemory(megabytes)} of disk, and writes fail with ENOSPC (no space left on device) until it removes files`;
}

/** One mount at a time per mount point in this process: two builds of one application never mount twice. */
const pending = new Map<string, Promise<AppDisk>>();

/**
 * An application's workspace on a file system of its own, with a hard size
 * (docs/security.md, "Disk space"): a loop-mounted ext4 image, from Debian's
 * util-linux (mount, losetup) and e2fsprogs (mkfs.ext4, resize2fs). A full disk
 * is the application's alone: the host's disk keeps its free space.
 */
export class AppDisk {
  constructor(
    readonly settings: DiskSettings,
    readonly mountPoint: string,
  ) {}

  /**
   * Mounts the image at `mountPoint`, made first when missing (a folder
   * already there keeps its files: they are copied onto the new disk), grown
   * when the settings give it more room. Mounted already: nothing is done.
   */
  static mount(settings: DiskSettings, mountPoint: string): Promise<AppDisk> {
    const running = pending.get(mountPoint);
    if (running) return running;
    const work = mountDisk(settings, mountPoint).finally(() => pending.delete(mountPoint));
    pending.set(mountPoint, work);
    return work;
  }

  /** Where the image is mounted on this machine now (the first place), or undefined. */
  static async mountedAt(image: string): Promise<string | undefined> {
    return (await mountsOf(image))[0];
  }

  /** Every image of `dir` mounted now, and where (the first place): one reading of the loop devices and mounts for all. */
  static async mountedIn(dir: string): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const points = await mountPoints((await loopDevices()).filter((d) => dirname(d.backingFile) === dir));
    for (const [image, point] of points) if (!found.has(image)) found.set(image, point);
    return found;
  }

  /** Unmounts the image wherever it is mounted and removes it: the application is gone. */
  static async remove(image: string): Promise<void> {
    for (const point of await mountsOf(image)) await must('umount', [point]);
    await rm(image, { force: true });
  }

  /** Unmounts the image (its files stay in it): serve's stop-apps, before the data folder is moved. */
  static async unmount(image: string): Promise<void> {
    for (const point of await mountsOf(image)) await must('umount', [point]);
  }

  async usage(): Promise<DiskUsage> {
    return diskUsage(this.mountPoint);
  }
}

/** The size and free room of the file system at `path`. */
export async function diskUsage(path: string): Promise<DiskUsage> {
  const s = await statfs(path);
  return { sizeBytes: s.blocks * s.bsize, freeBytes: s.bavail * s.bsize };
}

/** The smallest disk: ext4 with a journal still holds the build of a small application. */
export const MIN_DISK_MB = 16;

async function mountDisk(settings: DiskSettings, mountPoint: string): Promise<AppDisk> {
  if (!Number.isInteger(settings.megabytes) || settings.megabytes < MIN_DISK_MB) {
    throw CoreErrors.HOST_INVALID_SETTING.create({ message: `an application's disk must hold ${MIN_DISK_MB} MiB at least, and ${settings.megabytes} MiB was given.` });
  }
  const disk = new AppDisk(settings, mountPoint);
  const mounted = await mountsOf(settings.image);
  await mkdir(mountPoint, { recursive: true, mode: 0o700 });
  // Mounted already: a larger setting applies at the next mount (after stop-apps), as resizing a mounted ext4 may be refused.
  if (mounted.includes(mountPoint)) return disk;
  await mkdir(dirname(settings.image), { recursive: true, mode: 0o700 });
  if (!(await exists(settings.image))) await makeImage(settings);
  await grow(settings);
  const before = await readdir(mountPoint);
  if (before.length > 0) {
    // A workspace from before the disk: its files are copied onto the disk, which is mounted over them. They stay
    // under it (a release still running from them keeps its files) and take room on the host's disk until removed.
    const staging = join(dirname(settings.image), `.${basename(settings.image)}.${randomBytes(4).toString('hex')}`);
    await mkdir(staging, { mode: 0o700 });
    await mountImage(settings.image, staging);
    try {
      await must('cp', ['-a', '--', ...before.map((name) => join(mountPoint, name)), `${staging}/`]);
    } finally {
      await must('umount', [staging]);
      await rm(staging, { recursive: true, force: true });
    }
  }
  await mountImage(settings.image, mountPoint);
  return disk;
}

/** A sparse image with an empty ext4, written beside and renamed: never a half-made disk under the image's name. */
async function makeImage(settings: DiskSettings): Promise<void> {
  const making = `${settings.image}.making`;
  await rm(making, { force: true });
  await must('truncate', ['--size', `${settings.megabytes}M`, making]);
  // -m 0: no blocks kept for root (nothing of root's writes there); no lazy init: the disk is ready when mounted.
  await must('mkfs.ext4', ['-q', '-F', '-m', '0', '-E', 'lazy_itable_init=0,lazy_journal_init=0', making]);
  await rename(making, settings.image);
}

/** Gives the unmounted file system the settings' size when it has less (a larger setting); a smaller setting keeps it (files would be lost). */
async function grow(settings: DiskSettings): Promise<void> {
  if ((await stat(settings.image)).size >= settings.megabytes * MIB) return;
  await must('truncate', ['--size', `${settings.megabytes}M`, settings.image]);
  await must('e2fsck', ['-f', '-p', settings.image]);
  await must('resize2fs', [settings.image]);
}

async function mountImage(image: string, point: string): Promise<void> {
  // nosuid, nodev: nothing written there gains a privilege; noatime: reads write nothing.
  await must('mount', ['-t', 'ext4', '-o', 'loop,nosuid,nodev,noatime', image, point]);
}

/** The mount points of the loop devices backed by `image`, from /proc/self/mountinfo and /sys/block/loop*. */
async function mountsOf(image: string): Promise<string[]> {
  return (await mountPoints((await loopDevices()).filter((d) => d.backingFile === image))).map(([, point]) => point);
}

/** The mount points of `devices`, from /proc/self/mountinfo, each with its device's image. */
async function mountPoints(devices: readonly { device: string; backingFile: string }[]): Promise<[string, string][]> {
  if (devices.length === 0) return [];
  const imageOf = new Map(devices.map((d) => [d.device, d.backingFile]));
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  const points: [string, string][] = [];
  for (const line of info.split('\n')) {
    const [left, right] = line.split(' - ');
    const image = imageOf.get(right?.split(' ')[1] ?? '');
    const point = left?.split(' ')[4];
    if (image && point) points.push([image, point.replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)))]);
  }
  return points;
}

async function loopDevices(): Promise<{ device: string; backingFile: string }[]> {
  const names = (await readdir('/sys/block').catch(() => [])).filter((n) => n.startsWith('loop'));
  const found = await Promise.all(
    names.map(async (name) => {
      const backingFile = (await readFile(`/sys/block/${name}/loop/backing_file`, 'utf8').catch(() => '')).trim();
      return backingFile ? { device: `/dev/${name}`, backingFile } : undefined;
    }),
  );
  return found.filter((d): d is { device: string; backingFile: string } => d !== undefined);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function must(program: string, args: string[]): Promise<void> {
  const ran = await runProgram(program, args);
  if (!ran?.ok) {
    throw CoreErrors.HOST_SANDBOX_UNAVAILABLE.create({
      message: `an application's disk could not be made or mounted: ${program} ${args.join(' ')} ${ran ? `failed: ${(ran.stderr || ran.stdout).trim().split('\n').pop()}` : 'is not installed'}.`,
      fix: "Run runplan as root on a machine with loop devices, util-linux's mount and losetup and e2fsprogs' mkfs.ext4 and resize2fs (apt-get install e2fsprogs), or turn the application disks off.",
    });
  }
}
