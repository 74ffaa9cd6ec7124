import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AddonServers } from '../src/addons/addon-servers.js';
import { SwarmAddonServices } from '../src/addons/swarm-services.js';
import type { AddonRecord } from '../src/store/store.js';

/**
 * An add-on's server runs where the host's releases run: on this machine's
 * loopback for the local engine, as a swarm service for the swarm engine. One
 * made under the other engine is refused by name, before anything is linked or
 * deployed (the servers themselves: host-addons.test.ts, host-swarm.ts).
 */
describe('add-on servers and the engine', () => {
  const dir = mkdtempSync(join(tmpdir(), 'runplan-addon-engines-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // Never called: checking reachability reads the stored configs only.
  const unreachableDocker = () => Promise.reject(new Error('no engine in this test'));
  const record = (name: string, config: Record<string, string>): AddonRecord => ({
    id: `addon_00000000-0000-4000-8000-00000000000${name.length}`,
    name,
    org: 'acme',
    provider: 'postgresql',
    zone: 'par',
    createdAt: '2026-11-28T00:00:00Z',
    config,
  });
  const onLoopback = record('db-local', { host: '127.0.0.1', port: '5433' });
  const onSwarm = record('db-swarm', { engine: 'swarm', host: 'runplan-addon-postgresql', port: '5432' });

  it('refuses, with RUNPLAN_HOST_E_ENGINE_ADDON_UNREACHABLE, a loopback add-on for swarm releases and a swarm add-on for local ones', () => {
    const local = new AddonServers(join(dir, 'local'), {});
    const swarm = new AddonServers(join(dir, 'swarm'), {}, new SwarmAddonServices(unreachableDocker));
    expect(() => local.assertReachable({ name: 'shop' }, [onLoopback])).not.toThrow();
    expect(() => swarm.assertReachable({ name: 'shop' }, [onSwarm])).not.toThrow();
    for (const [servers, addon, engine] of [
      [swarm, onLoopback, 'swarm'],
      [local, onSwarm, 'local'],
    ] as const) {
      let thrown: unknown;
      try {
        servers.assertReachable({ name: 'shop' }, [addon]);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'RUNPLAN_HOST_E_ENGINE_ADDON_UNREACHABLE', details: { app: 'shop', addons: [addon.name], engine } });
      expect((thrown as Error).message).toContain(`shop is linked to ${addon.name}`);
    }
  });

  it('gives a link the variables of where the server is: a service name on the add-ons network on a swarm', () => {
    const swarm = new AddonServers(join(dir, 'swarm'), {}, new SwarmAddonServices(unreachableDocker));
    const variables = swarm.variables({ ...onSwarm, config: { ...onSwarm.config, database: 'd', user: 'u', password: 'p' } });
    expect(variables).toMatchObject({ POSTGRESQL_ADDON_HOST: 'runplan-addon-postgresql', POSTGRESQL_ADDON_URI: 'postgresql://u:p@runplan-addon-postgresql:5432/d' });
  });
});
