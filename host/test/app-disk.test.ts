import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHost } from './helpers/test-host.js';

const QUOTA_MB = 64;

/**
 * Each application's workspace on a disk of its own (settings' diskMb,
 * docs/security.md "Disk space"): a build that writes past it fails with
 * RUNPLAN_E_BUILD_DISK_LIMIT; a release that writes until the disk is full is
 * stopped there, its log says RUNPLAN_W_RUN_DISK_LIMIT, and another tenant's
 * push and the host's own writes succeed meanwhile.
 */
describe.runIf(process.getuid?.() === 0)("each application's own disk (local engine)", () => {
  let host: TestHost;
  let a: { id: string; gitRemote: string };
  let b: { id: string; gitRemote: string };
  let keyA: string;
  let keyB: string;

  beforeAll(async () => {
    host = await TestHost.create();
    const settingsFile = join(host.data, 'settings.json');
    writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(readFileSync(settingsFile, 'utf8')), diskMb: QUOTA_MB, drainMs: 500 }), { mode: 0o600 });
    await host.serve();
    keyA = await host.key('alice', 'org-a');
    keyB = await host.key('bob', 'org-b');
    a = await host.json(['create', '--type', 'node', 'filler', '--region', 'par', '--org', 'org-a']);
    b = await host.json(['create', '--type', 'node', 'neighbour', '--region', 'par', '--org', 'org-b']);
  }, 300_000);
  afterAll(async () => {
    await host?.dispose();
  });

  it('fails a build that writes past the disk with RUNPLAN_E_BUILD_DISK_LIMIT, and builds again once it writes less', async () => {
    expect((await host.cli(['env', 'set', 'CC_POST_BUILD_HOOK', `head -c ${(QUOTA_MB + 16) * 1024 * 1024} /dev/zero > big.bin`, '--app', a.id])).code).toBe(0);
    const repo = await host.repository('host/disk-filler');
    await host.git(repo, ['remote', 'add', 'runplan', a.gitRemote]);
    const refused = await host.push(repo, 'runplan', keyA);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain('RUNPLAN_E_BUILD_DISK_LIMIT');
    expect(refused.output).toContain(`its ${QUOTA_MB} MiB of disk`);
    expect((await host.cli(['env', 'rm', 'CC_POST_BUILD_HOOK', '--app', a.id])).code).toBe(0);
    const pushed = await host.push(repo, 'runplan', keyA);
    expect(pushed.code, pushed.output).toBe(0);
    expect((await host.get(a.id, '/')).json()).toEqual({ ok: true, size: 0 });
    // Its run directory (sockets, pid files), in the machine's temporary folder, has a size too: a tmpfs of 16 MiB, its user's.
    const uid = await host.appUid(a.id);
    const runDirs = execFileSync('findmnt', ['-rn', '-t', 'tmpfs', '-o', 'TARGET,SIZE'])
      .toString()
      .split('\n')
      .filter((line) => line.startsWith(join(tmpdir(), 'runplan-run-')));
    expect(runDirs.filter((line) => statSync(line.split(' ')[0] as string).uid === uid).map((line) => line.split(' ')[1])).toEqual(['16M']);
  }, 300_000);

  it('stops a release writing until its disk is full at its quota, says so in its log, and leaves the others and the host room', async () => {
    const filled = (await host.get(a.id, `/fill?mb=${QUOTA_MB * 4}`)).json<{ written: number; error: string | null }>();
    expect(filled.error).toBe('ENOSPC');
    expect(filled.written).toBeLessThan(QUOTA_MB * 1024 * 1024);
    expect(filled.written).toBeGreaterThan((QUOTA_MB / 4) * 1024 * 1024);
    // Still serving, from its full disk.
    expect((await host.get(a.id, '/')).status).toBe(200);
    // The image is sparse and no larger than the quota: the host's disk lost at most that.
    const image = join(host.data, 'disks', `${a.id}.ext4`);
    expect(statSync(image).size).toBe(QUOTA_MB * 1024 * 1024);
    expect(statSync(image).blocks * 512).toBeLessThanOrEqual(QUOTA_MB * 1024 * 1024);
    const hostDisk = statfsSync(host.data);
    expect(hostDisk.bavail * hostDisk.bsize).toBeGreaterThan(QUOTA_MB * 1024 * 1024);
    // The coded line in A's log (serve reads the disks every 2 s).
    let log = '';
    for (let i = 0; i < 40 && !log.includes('RUNPLAN_W_RUN_DISK_LIMIT'); i++) {
      log = (await host.cli(['logs', '--app', a.id])).stdout;
      if (!log.includes('RUNPLAN_W_RUN_DISK_LIMIT')) await new Promise((r) => setTimeout(r, 500));
    }
    expect(log).toContain(`RUNPLAN_W_RUN_DISK_LIMIT: the application's disk is full: its builds and files use its ${QUOTA_MB} MiB of disk`);
    // B's push, and the host's own writes (the store), meanwhile.
    const repoB = await host.repository('host/facts');
    await host.git(repoB, ['remote', 'add', 'runplan', b.gitRemote]);
    const pushed = await host.push(repoB, 'runplan', keyB);
    expect(pushed.code, pushed.output).toBe(0);
    expect((await host.cli(['env', 'set', 'NOTE', 'written while A is full', '--app', b.id])).code).toBe(0);
    expect((await host.get(b.id, '/')).status).toBe(200);
    // B's own disk is its own: empty.
    const mounts = execFileSync('findmnt', ['-rn', '-o', 'SOURCE,TARGET,SIZE']).toString();
    expect(mounts.split('\n').filter((line) => line.startsWith('/dev/loop') && line.includes(join(host.data, 'runplan', 'work')))).toHaveLength(2);
    // Room again once A removes its file.
    expect((await host.get(a.id, '/empty')).json()).toEqual({ emptied: true });
    expect((await host.get(a.id, '/fill?mb=4')).json()).toEqual({ written: 4 * 1024 * 1024, error: null });
  }, 300_000);
});
