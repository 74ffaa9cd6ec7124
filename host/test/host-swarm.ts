import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import aws4 from 'aws4';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DockerCli } from '../../src/engines/docker-cli.js';
import { ensureStackImage, STACKS } from '../../src/engines/stack-images.js';
import { freePort } from '../../test/helpers/ports.js';
import { SWARM_ADDON_STACKS } from '../src/addons/swarm-providers.js';
import { ADDON_OBJECT_LABEL, swarmName } from '../src/addons/swarm-services.js';
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

/** runplan-host on a swarm: run by test/engines/swarm.test.ts with the other Swarm suites. */
export function describeHostOnSwarm(): void {
  describe.skipIf(dockerHost === '' || execProblem !== '')('runplan-host on a swarm', () => {
    beforeAll(async () => {
      server = await startStoreServer('runplan-host-swarm-pg-');
      // On a fresh engine this takes minutes, as for a host's operator, who makes them once (runplan stack).
      const engine = await DockerCli.connect({ host: dockerHost });
      for (const stack of [STACKS.node, STACKS.proxy, ...Object.values(SWARM_ADDON_STACKS)]) await ensureStackImage(engine, stack!, { log: () => {} });
      // The engine keeps its data root between runs: a run that stopped half-way may have left it in a swarm.
      await docker(['swarm', 'leave', '--force']);
      const init = await docker(['swarm', 'init', '--advertise-addr', '127.0.0.1', '--listen-addr', `127.0.0.1:${await freePort()}`]);
      expect(init).not.toMatch(/^error/);
    }, 1_800_000);

    afterAll(async () => {
      await docker(['swarm', 'leave', '--force']);
      // Named volumes outlive the swarm: the add-on servers' data, once their containers are gone.
      for (let tries = 0; tries < 60; tries++) {
        const volumes = (await docker(['volume', 'ls', '--quiet', '--filter', `label=${ADDON_OBJECT_LABEL}=true`])).split('\n').filter(Boolean);
        if (volumes.length === 0 || !(await docker(['volume', 'rm', ...volumes])).startsWith('error')) break;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      await server?.stop();
    });

    it('runs a Redis add-on as a service of the swarm, its password in a swarm secret, and removes it with its data', async () => {
      const host = await TestHost.create({ initArgs: ['--engine', 'swarm', '--docker-host', dockerHost, '--store', await (server as StoreServer).newDatabase('hs')] });
      try {
        await host.serve();
        const { addon } = await host.json<{ addon: { id: string } }>(['addon', 'create', 'redis', 'cache', '--org', 'acme']);
        const name = addon.id.replace('_', '-');
        const variables = Object.fromEntries((await host.json<{ variables: { name: string; value: string }[] }>(['addon', 'env', 'cache', '--show'])).variables.map((v) => [v.name, v.value]));
        expect(variables).toMatchObject({ REDIS_HOST: name, REDIS_PORT: '6379' });
        const password = variables.REDIS_PASSWORD as string;
        // The password is in no service's or task's arguments: only in the secret mounted into its task.
        expect(await docker(['service', 'inspect', name])).not.toContain(password);
        const container = (await docker(['ps', '--quiet', '--filter', `label=com.docker.swarm.service.name=${name}`])).trim();
        expect(await docker(['exec', '--env', `REDISCLI_AUTH=${password}`, container, 'redis-cli', 'ping'])).toBe('PONG\n');
        expect(await docker(['exec', container, 'redis-cli', 'ping'])).toMatch(/NOAUTH/);
        expect((await host.cli(['addon', 'rm', 'cache', '--org', 'acme'])).code).toBe(0);
        expect(await docker(['service', 'ls', '--quiet', '--filter', `name=${name}`])).toBe('');
        expect(await docker(['volume', 'ls', '--quiet', '--filter', `name=${name}`])).toBe('');
        expect(await docker(['secret', 'ls', '--quiet', '--filter', `name=${name}`])).toBe('');
      } finally {
        await host.dispose();
      }
    }, 600_000);

    it('runs the storage add-ons’ Ceph cluster as a service of the swarm: a client on the add-ons network stores and reads with the injected keys, each add-on in its own tenant', async () => {
      const host = await TestHost.create({ initArgs: ['--engine', 'swarm', '--docker-host', dockerHost, '--store', await (server as StoreServer).newDatabase('hst')] });
      try {
        await host.serve();
        const env = async (name: string) =>
          Object.fromEntries((await host.json<{ variables: { name: string; value: string }[] }>(['addon', 'env', name, '--show'])).variables.map((v) => [v.name, v.value]));
        const made: Record<string, string> = {};
        for (const name of ['files', 'others']) made[name] = (await host.json<{ addon: { id: string } }>(['addon', 'create', 'storage', name, '--org', 'acme'])).addon.id;
        const [files, others] = [await env('files'), await env('others')];
        expect(files).toMatchObject({ STORAGE_ADDON_HOST: 'runplan-addon-storage:7480' });
        expect(await docker(['service', 'inspect', 'runplan-addon-storage'])).not.toContain(files.STORAGE_ADDON_KEY_SECRET);
        // An S3 client where a release is: a container on the add-ons network. The test signs (aws4); the container gets the signed headers, never a secret.
        const image = await ensureStackImage(await DockerCli.connect({ host: dockerHost }), SWARM_ADDON_STACKS.storage, { log: () => {} });
        const s3 = async (v: Record<string, string>, method: string, path: string, body?: string) => {
          const signed = aws4.sign(
            { host: v.STORAGE_ADDON_HOST, service: 's3', region: 'us-east-1', method, path, ...(body === undefined ? {} : { body }) },
            { accessKeyId: v.STORAGE_ADDON_KEY_ID ?? '', secretAccessKey: v.STORAGE_ADDON_KEY_SECRET ?? '' },
          ) as { headers: Record<string, string> };
          const headers = Object.entries(signed.headers)
            .filter(([name]) => !/^(host|content-length)$/i.test(name))
            .flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
          const out = await docker([
            'run',
            '--rm',
            '--network',
            'runplan-host-addons',
            image,
            'curl',
            '-s',
            '-X',
            method,
            ...headers,
            ...(body === undefined ? [] : ['--data-binary', body]),
            '-w',
            '\n%{http_code}',
            `http://${v.STORAGE_ADDON_HOST}${path}`,
          ]);
          const lines = out.split('\n');
          return { status: Number(lines.pop()), body: lines.join('\n') };
        };
        expect(await s3(files, 'PUT', '/photos')).toMatchObject({ status: 200 });
        expect(await s3(files, 'PUT', '/photos/cat.txt', 'meow')).toMatchObject({ status: 200 });
        expect(await s3(files, 'GET', '/photos/cat.txt')).toEqual({ status: 200, body: 'meow' });
        // The other add-on's own namespace: its "photos" is not files', and files' named with its tenant is refused.
        expect(await s3(others, 'GET', '/photos/cat.txt')).toMatchObject({ status: 404, body: expect.stringContaining('NoSuchBucket') });
        expect(await s3(others, 'GET', `/${(made.files as string).replaceAll('-', '_')}:photos/cat.txt`)).toMatchObject({ status: 403, body: expect.stringContaining('AccessDenied') });
        expect((await host.cli(['addon', 'rm', 'files', '--org', 'acme'])).code).toBe(0);
        expect(await s3(files, 'GET', '/photos/cat.txt')).toMatchObject({ status: 403, body: expect.stringContaining('InvalidAccessKeyId') });
      } finally {
        await host.dispose();
      }
    }, 900_000);

    it("keeps tenants apart on a swarm: B's task sees nothing of the host or of A, runs without capability, held to its instance, and never gets A's secret", async () => {
      const host = await TestHost.create({ initArgs: ['--engine', 'swarm', '--docker-host', dockerHost, '--store', await (server as StoreServer).newDatabase('ht')] });
      try {
        const marker = 'operator_npm_token_9e3a';
        await host.serve({ env: { npm_config_marker_token: marker } });
        const keyA = await host.key('alice', 'org-a');
        const keyB = await host.key('bob', 'org-b');
        const a = await host.json<{ id: string; gitRemote: string }>(['create', '--type', 'node', 'victim', '--region', 'par', '--org', 'org-a']);
        const b = await host.json<{ id: string; gitRemote: string }>(['create', '--type', 'node', 'probe', '--region', 'par', '--org', 'org-b']);
        const secret = 'sk_live_swarm_tenant_a_31c8';
        expect((await host.cli(['env', 'set', 'API_TOKEN', secret, '--app', a.id])).code).toBe(0);
        const repoA = await host.repository('host/facts');
        await host.git(repoA, ['remote', 'add', 'runplan', a.gitRemote]);
        expect((await host.push(repoA, 'runplan', keyA)).code).toBe(0);
        const targets = [
          { op: 'read', path: `${host.data}/settings.json` },
          { op: 'list', path: host.data },
          { op: 'read', path: '/var/run/docker.sock' },
          { op: 'list', path: '/run/secrets' },
        ];
        for (const [name, value] of [
          ['CC_HEALTH_CHECK_PATH', '/health'],
          ['PROBE_TARGETS', JSON.stringify(targets)],
        ])
          expect((await host.cli(['env', 'set', name as string, value as string, '--app', b.id])).code).toBe(0);
        const repoB = await host.repository('host/tenant-probe');
        await host.git(repoB, ['remote', 'add', 'runplan', b.gitRemote]);
        const pushed = await host.push(repoB, 'runplan', keyB);
        expect(pushed.code, pushed.output).toBe(0);
        const facts = (await host.get(b.id, '/facts')).json<{ uid: number; visiblePids: number; capabilities: string[]; envNames: string[] }>();
        expect(facts.uid).not.toBe(0);
        expect(facts.visiblePids).toBeLessThan(10);
        expect(facts.capabilities).toEqual(expect.arrayContaining(['CapEff:\t0000000000000000', 'CapBnd:\t0000000000000000']));
        expect(facts.envNames.filter((n) => /marker|API_TOKEN/i.test(n))).toEqual([]);
        const tryOne = async (t: Record<string, string>) => (await host.get(b.id, `/try?${new URLSearchParams(t)}`)).json<{ ok: boolean; value?: unknown }>();
        for (const target of targets.slice(0, 3)) expect(await tryOne(target), JSON.stringify(target)).toMatchObject({ ok: false });
        // No network in common: B, linked to no add-on, does not even resolve A's web service (both were on the add-ons' network before).
        const toA = (await host.get(b.id, `/try?${new URLSearchParams({ op: 'connect', host: `${swarmName(a.id)}-web`, port: '8080' })}`)).json<{ ok: boolean; code?: string }>();
        expect(toA).toMatchObject({ ok: false });
        expect(await docker(['service', 'inspect', '--format', '{{json .Spec.TaskTemplate.Networks}}', `${swarmName(b.id)}-web`])).not.toContain(
          (await docker(['network', 'inspect', '--format', '{{.ID}}', 'runplan-host-addons'])).trim() || 'no add-ons network',
        );
        // Its own secrets only: none of A's is mounted in B's task.
        expect(JSON.stringify(await tryOne(targets[3] as Record<string, string>))).not.toContain('API_TOKEN');
        // Held to its instance, as the local engine's cgroups hold it.
        const limits = JSON.parse(await docker(['service', 'inspect', '--format', '{{json .Spec.TaskTemplate.Resources.Limits}}', `${swarmName(b.id)}-web`])) as {
          NanoCPUs: number;
          MemoryBytes: number;
          Pids: number;
        };
        expect(limits).toMatchObject({ NanoCPUs: 1_000_000_000, MemoryBytes: 1024 * 1024 * 1024, Pids: 1024 });
        expect((await host.cli(['logs', '--app', b.id])).stdout).not.toContain(secret);
      } finally {
        await host.dispose();
      }
    }, 900_000);

    it('serves an application that hard-codes 0.0.0.0:8080: every web task listens on 8080 in its container, PORT=8080, the proxy publishes the host port', async () => {
      const host = await TestHost.create({ initArgs: ['--engine', 'swarm', '--docker-host', dockerHost, '--store', await (server as StoreServer).newDatabase('hp')] });
      try {
        await host.serve();
        const key = await host.key('alice', 'acme');
        const app = await host.json<{ id: string; gitRemote: string }>(['create', '--type', 'node', 'hard-coded', '--region', 'par', '--org', 'acme']);
        expect((await host.cli(['env', 'set', 'CC_HEALTH_CHECK_PATH', '/health', '--app', app.id])).code).toBe(0);
        const repo = await host.repository('host/listen-8080');
        await host.git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
        const pushed = await host.push(repo, 'runplan', key);
        expect(pushed.code, pushed.output).toBe(0);
        expect((await host.get(app.id, '/')).json()).toMatchObject({ port: '8080' });
        // The proxy publishes another port on the node, the application's: 8080 is the tasks' own.
        const published = await docker(['service', 'inspect', '--format', '{{json .Endpoint.Ports}}', swarmName(app.id)]);
        expect(published).not.toMatch(/"PublishedPort":8080\b/);
      } finally {
        await host.dispose();
      }
    }, 900_000);

    describeHost({
      name: 'swarm on PostgreSQL',
      initArgs: async () => ['--engine', 'swarm', '--docker-host', dockerHost, '--store', await (server as StoreServer).newDatabase('he')],
      sideBySide: false,
      addonHost: 'runplan-addon-postgresql',
      // The specification's lines, as on this machine: Swarm ran the image's health check, runplan reports its answers.
      failedGate: {
        code: 'RUNPLAN_E_HEALTH_CHECK_FAILED',
        lines: ['remote: Response from GET /health is 500', 'remote: Health check failed:', 'remote: - GET /health returned 500.', 'the previous version serves'],
      },
      leftBehind: async (_host, appId) => {
        const services = await docker(['service', 'ls', '--format', '{{.Name}}', '--filter', `label=io.runplan.deployment=${swarmName(appId)}`]);
        const networks = await docker(['network', 'ls', '--format', '{{.Name}}', '--filter', `label=io.runplan.deployment=${swarmName(appId)}`]);
        const addons = await docker(['service', 'ls', '--format', '{{.Name}}', '--filter', `label=${ADDON_OBJECT_LABEL}=true`]);
        return `${services}${networks}${addons}`.split('\n').filter(Boolean);
      },
    });
  });
}
