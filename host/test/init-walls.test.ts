import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHost } from './helpers/test-host.js';

/**
 * The local engine's walls a new host gets from init (docs/host.md, "Walls"):
 * each release its own network and each application a disk of its own, unless
 * the operator says otherwise; a host initialised again keeps the ones it has.
 */
describe('runplan-host init: the walls of a new host', () => {
  let host: TestHost;
  const settings = async () => JSON.parse(await readFile(join(host.data, 'settings.json'), 'utf8')) as Record<string, unknown>;

  beforeAll(async () => {
    host = await TestHost.create();
  }, 60_000);

  afterAll(async () => {
    await host?.dispose();
  });

  it('gives a new host of the local engine its own network per release and a disk of 4 GiB per application', async () => {
    expect(await settings()).toMatchObject({ engine: 'local', releaseNetwork: 'own', diskMb: 4096 });
  });

  it('takes --release-network and --disk-mb (0: no disk), and keeps a host’s walls when it is initialised again without them', async () => {
    expect((await host.cli(['init', '--release-network', 'shared', '--disk-mb', '0'])).code).toBe(0);
    const shared = await settings();
    expect(shared.releaseNetwork).toBe('shared');
    expect(shared).not.toHaveProperty('diskMb');
    expect((await host.cli(['init', '--disk-mb', '1024'])).code).toBe(0);
    expect(await settings()).toMatchObject({ releaseNetwork: 'shared', diskMb: 1024 });
    // A host made before init wrote walls: initialised again, it stays on the machine's network, without a disk.
    const { releaseNetwork: _n, diskMb: _d, ...older } = await settings();
    await writeFile(join(host.data, 'settings.json'), JSON.stringify(older), { mode: 0o600 });
    expect((await host.cli(['init'])).code).toBe(0);
    const kept = await settings();
    expect(kept).not.toHaveProperty('releaseNetwork');
    expect(kept).not.toHaveProperty('diskMb');
  });

  it('refuses a walls option it cannot use with RUNPLAN_HOST_E_INPUT_USAGE, naming the option, and keeps the settings', async () => {
    const before = await readFile(join(host.data, 'settings.json'), 'utf8');
    const refused = async (args: string[]) => {
      const r = await host.cli(['init', ...args, '--json']);
      expect(r.code).toBe(2);
      const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string } };
      expect(error.code).toBe('RUNPLAN_HOST_E_INPUT_USAGE');
      return error.message;
    };
    expect(await refused(['--release-network', 'host'])).toContain('--release-network takes own or shared, not "host"');
    expect(await refused(['--disk-mb', '8'])).toContain('--disk-mb takes a number of MiB, 16 at least');
    expect(await refused(['--disk-mb', 'lots'])).toContain('--disk-mb takes a number of MiB');
    expect(await refused(['--engine', 'swarm', '--disk-mb', '1024'])).toContain('--release-network and --disk-mb wall in the releases of the local engine');
    expect(await readFile(join(host.data, 'settings.json'), 'utf8')).toBe(before);
  });
});
