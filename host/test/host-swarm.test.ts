import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DockerCli } from '../../src/engines/docker-cli.js';
import { ensureStackImage, STACKS } from '../../src/engines/stack-images.js';
import { freePort } from '../../test/helpers/ports.js';
import { holdSwarm } from '../../test/helpers/swarm-lock.js';
import { swarmName } from '../src/deploy/release-engines.js';
import { describeHost } from './helpers/host-e2e-suite.js';
import { type StoreServer, startStoreServer } from './helpers/store-server.js';
import { TestHost } from './helpers/test-host.js';

/**
 * runplan-host with its releases on a Docker swarm and its state in PostgreSQL
 * (issue 28): the same end-to-end cases as on this machine (host-e2e.test.ts),
 * on the tests' own Docker engine made a single-node swarm for this file, and a
 * PostgreSQL cluster of Debian's made for it.
 */
const dockerHost = inject('dockerHost');
// Swarm counts a task as running once its HEALTHCHECK passes, which the engine runs with exec.
const execProblem = inject('containerExecProblem');
const exec = promisify(execFile);
const docker = async (args: readonly string[]) =>
  exec('/usr/bin/docker', [...args], { env: { ...process.env, DOCKER_HOST: dockerHost } }).then(
    ({ stdout }) => stdout,
    (error: { stderr?: string; message: string }) => `error: ${error.stderr || error.message}`,
  );

let server: StoreServer | undefined;
let releaseSwarm: (() => Promise<void>) | undefined;

describe.skipIf(dockerHost === '' || execProblem !== '')('runplan-host on a swarm', () => {
  beforeAll(async () => {
    server = await startStoreServer('runplan-host-swarm-pg-');
    // Made before the swarm is held (on a fresh engine this takes minutes), as a host's operator makes them once (runplan stack).
    const engine = await DockerCli.connect({ host: dockerHost });
    for (const stack of [STACKS.node, STACKS.proxy]) await ensureStackImage(engine, stack!, { log: () => {} });
    // The engine's other Swarm tests join and leave it too: one file at a time.
    releaseSwarm = await holdSwarm();
    // The engine keeps its data root between runs: a run that stopped half-way may have left it in a swarm.
    await docker(['swarm', 'leave', '--force']);
    const init = await docker(['swarm', 'init', '--advertise-addr', '127.0.0.1', '--listen-addr', `127.0.0.1:${await freePort()}`]);
    expect(init).not.toMatch(/^error/);
  }, 1_800_000);

  afterAll(async () => {
    await docker(['swarm', 'leave', '--force']);
    await releaseSwarm?.();
    await server?.stop();
  });

  it('refuses a release of an application linked to an add-on the swarm cannot reach, and deploys nothing', async () => {
    const host = await TestHost.create({ initArgs: ['--engine', 'swarm', '--docker-host', dockerHost, '--store', await (server as StoreServer).newDatabase('hs')] });
    try {
      await host.serve();
      const app = await host.json<{ id: string }>(['create', '--type', 'node', 'linked', '--region', 'par', '--org', 'acme']);
      await host.json(['addon', 'create', 'redis', 'cache', '--org', 'acme']);
      const linked = await host.cli(['link-addon', 'cache', '--app', app.id]);
      expect(linked.stdout + linked.stderr).toContain('RUNPLAN_HOST_E_ENGINE_ADDON_UNREACHABLE');
      expect(await docker(['service', 'ls', '--quiet', '--filter', `label=io.runplan.deployment=${swarmName(app.id)}`])).toBe('');
    } finally {
      await host.dispose();
    }
  }, 300_000);

  describeHost({
    name: 'swarm on PostgreSQL',
    initArgs: async () => ['--engine', 'swarm', '--docker-host', dockerHost, '--store', await (server as StoreServer).newDatabase('he')],
    sideBySide: false,
    // Not yet the specification's lines: Swarm's start-first update runs the image's health check itself, and
    // the task it finds unhealthy is rolled back before runplan's gate probes it (docs/host.md, "Engines").
    failedGate: {
      code: 'RUNPLAN_E_SWARM_NOT_CONVERGED',
      lines: ['healthcheck: GET /health answered 500, not 200', 'the update failed and swarm rolled it back, the previous version serves'],
    },
    leftBehind: async (_host, appId) => {
      const services = await docker(['service', 'ls', '--format', '{{.Name}}', '--filter', `label=io.runplan.deployment=${swarmName(appId)}`]);
      const networks = await docker(['network', 'ls', '--format', '{{.Name}}', '--filter', `label=io.runplan.deployment=${swarmName(appId)}`]);
      return `${services}${networks}`.split('\n').filter(Boolean);
    },
  });
});
