import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppDisk, diskFullLine, diskIsFull } from '../../src/sandbox/app-disk.js';
import { limitStrike } from '../../src/sandbox/limit-strike.js';
import { tempDir } from '../helpers/temp.js';

const images: string[] = [];
const loopSources = (point: string) =>
  execFileSync('findmnt', ['-rn', '-o', 'SOURCE,TARGET'])
    .toString()
    .split('\n')
    .filter((line) => line.endsWith(` ${point}`));

/**
 * An application's own disk (src/sandbox/app-disk.ts): an ext4 image, sparse,
 * mounted over its workspace, mounted once however often asked, grown when the
 * setting grows, its folder's earlier files carried onto it, full when full.
 */
describe.runIf(process.getuid?.() === 0)("an application's own disk", () => {
  afterAll(async () => {
    for (const image of images) await AppDisk.remove(image);
  });

  it('mounts a sparse image of the size over the workspace, once, with the files the folder had', async () => {
    const dir = await tempDir();
    const workspace = join(dir, 'work', 'app');
    mkdirSync(join(workspace, 'builds'), { recursive: true });
    writeFileSync(join(workspace, 'builds', 'kept.txt'), 'from before the disk');
    const image = join(dir, 'disks', 'app.ext4');
    images.push(image);
    const disk = await AppDisk.mount({ image, megabytes: 32 }, workspace);
    expect(readFileSync(join(workspace, 'builds', 'kept.txt'), 'utf8')).toBe('from before the disk');
    expect(await AppDisk.mountedAt(image)).toBe(workspace);
    // Asked again (another build, another serve): the same mount, not a second.
    await Promise.all([AppDisk.mount({ image, megabytes: 32 }, workspace), AppDisk.mount({ image, megabytes: 32 }, workspace)]);
    expect(loopSources(workspace)).toHaveLength(1);
    const usage = await disk.usage();
    expect(usage.sizeBytes).toBeGreaterThan(24 * 1024 * 1024);
    expect(usage.sizeBytes).toBeLessThanOrEqual(32 * 1024 * 1024);
    expect(diskIsFull(usage)).toBe(false);
    const mountOptions = execFileSync('findmnt', ['-rn', '-o', 'OPTIONS', workspace]).toString();
    expect(mountOptions).toMatch(/nosuid/);
    expect(mountOptions).toMatch(/nodev/);
  });

  it('is full when written full, and says so as a run line and a build error', async () => {
    const dir = await tempDir();
    const workspace = join(dir, 'work', 'app');
    const image = join(dir, 'disks', 'app.ext4');
    images.push(image);
    const disk = await AppDisk.mount({ image, megabytes: 16 }, workspace);
    expect(() => writeFileSync(join(workspace, 'fill.bin'), Buffer.alloc(20 * 1024 * 1024))).toThrow(/ENOSPC/);
    expect(diskIsFull(await disk.usage())).toBe(true);
    // The host's disk is not the one that filled.
    const host = statfsSync(dir);
    expect(host.bavail * host.bsize).toBeGreaterThan(16 * 1024 * 1024);
    const strike = limitStrike({ cpus: 1, memoryMb: 512, processes: 512, diskMb: 16 }, { oomKills: 0, processLimitHits: 0 }, { oomKills: 0, processLimitHits: 0, diskFull: true });
    expect(strike?.resource).toBe('disk');
    expect(strike?.warning('web')).toMatch(/^RUNPLAN_W_RUN_DISK_LIMIT: web ended while the application's disk was full: it has used its 16 MiB of disk/);
    expect(strike?.buildError('hook', 'npm run build')).toMatchObject({ code: 'RUNPLAN_E_BUILD_DISK_LIMIT', details: { diskMb: 16 } });
    expect(diskFullLine(16)).toMatch(/^RUNPLAN_W_RUN_DISK_LIMIT: the application's disk is full/);
  });

  it('grows with the setting while mounted, keeps its files when unmounted, and is gone when removed', async () => {
    const dir = await tempDir();
    const workspace = join(dir, 'work', 'app');
    const image = join(dir, 'disks', 'app.ext4');
    images.push(image);
    await AppDisk.mount({ image, megabytes: 16 }, workspace);
    writeFileSync(join(workspace, 'note.txt'), 'kept');
    // Mounted: the larger setting waits for the next mount.
    expect((await (await AppDisk.mount({ image, megabytes: 48 }, workspace)).usage()).sizeBytes).toBeLessThan(16 * 1024 * 1024);
    await AppDisk.unmount(image);
    expect(await AppDisk.mountedAt(image)).toBeUndefined();
    expect(existsSync(join(workspace, 'note.txt'))).toBe(false);
    const grown = await AppDisk.mount({ image, megabytes: 48 }, workspace);
    expect((await grown.usage()).sizeBytes).toBeGreaterThan(40 * 1024 * 1024);
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('kept');
    await AppDisk.remove(image);
    expect(existsSync(image)).toBe(false);
    expect(await AppDisk.mountedAt(image)).toBeUndefined();
  });

  it('refuses a disk smaller than 16 MiB with the setting named', async () => {
    const dir = await tempDir();
    await expect(AppDisk.mount({ image: join(dir, 'x.ext4'), megabytes: 4 }, join(dir, 'w'))).rejects.toMatchObject({ code: 'RUNPLAN_E_HOST_INVALID_SETTING' });
  });
});
