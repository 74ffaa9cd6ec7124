import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHost } from './helpers/test-host.js';

/**
 * The local engine with `releaseNetwork: own` (docs/design/network-per-release.md):
 * each release in its own network namespace, listening on 0.0.0.0:8080 with
 * PORT=8080, reached by the edge at its namespace's address. B's release tries
 * A's release, sshd and the host's services from inside: none answers; the
 * edge's public ports and the outside world (npm's registry) do.
 */
describe('each release in its own network (local engine)', () => {
  let host: TestHost;
  let a: { id: string; gitRemote: string };
  let b: { id: string; gitRemote: string };
  let keyA: string;

  /** The address the edge dials for an application: the name of the one file of its upstream folder. */
  const upstreamOf = (appId: string) => readdirSync(join(host.data, 'run', 'apps', appId));

  beforeAll(async () => {
    host = await TestHost.create();
    const settingsFile = join(host.data, 'settings.json');
    writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(readFileSync(settingsFile, 'utf8')), releaseNetwork: 'own', drainMs: 500 }), { mode: 0o600 });
    // Kept running when serve stops, as an operator's: the next serve takes each release over in its namespace.
    await host.serve({ keepApps: true });
    keyA = await host.key('alice', 'org-a');
    const keyB = await host.key('bob', 'org-b');
    a = await host.json(['create', '--type', 'node', 'hard-coded', '--region', 'par', '--org', 'org-a']);
    b = await host.json(['create', '--type', 'node', 'neighbour', '--region', 'par', '--org', 'org-b']);
    // A's own PostgreSQL add-on, linked to A only.
    await host.json(['addon', 'create', 'postgresql', 'db-a', '--org', 'org-a']);
    expect((await host.cli(['link-addon', 'db-a', '--app', a.id])).code).toBe(0);
    for (const [app, key] of [
      [a, keyA],
      [b, keyB],
    ] as const) {
      expect((await host.cli(['env', 'set', 'CC_HEALTH_CHECK_PATH', '/health', '--app', app.id])).code).toBe(0);
      const repo = await host.repository('host/listen-8080');
      await host.git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
      const pushed = await host.push(repo, 'runplan', key);
      expect(pushed.code, pushed.output).toBe(0);
    }
  }, 600_000);
  afterAll(async () => {
    await host?.dispose();
  });

  /** The ports of `address` that accept a connection from inside the application's release, all 65,535 tried (in parts: each is one request). */
  const scanFrom = async (appId: string, address: string) => {
    const open: number[] = [];
    for (let from = 1; from <= 65535; from += 8192) {
      const part = await host.get(appId, `/scan?host=${address}&from=${from}&to=${Math.min(from + 8191, 65535)}`);
      open.push(...part.json<{ open: number[] }>().open);
    }
    return open;
  };
  const fromB = async (target: string, port: number) => (await host.get(b.id, `/connect?host=${target}&port=${port}`)).json<{ result: string }>().result;

  it('serves an application that hard-codes 0.0.0.0:8080 through the edge, from its namespace address', async () => {
    const answer = await host.get(a.id, '/');
    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ port: '8080' });
    const [addressA] = upstreamOf(a.id);
    const [addressB] = upstreamOf(b.id);
    expect(addressA).toMatch(/^10\.88\.\d+\.\d+:8080$/);
    expect(addressB).toMatch(/^10\.88\.\d+\.\d+:8080$/);
    expect(addressA).not.toBe(addressB);
  });

  it('gives A its linked add-on at an address it reaches from its namespace, where PostgreSQL lets it in', async () => {
    const seen = (await host.get(a.id, '/postgresql')).json<{ host: string; port: string; answer: string }>();
    expect(seen.host).toMatch(/^10\.88\.\d+\.1$/);
    // 'R': the server asks for the role's password (pg_hba.conf lets the releases' network in).
    expect(seen.answer).toBe('R');
    // B, not linked, reaches it neither at the gateway nor on its own loopback.
    expect(await fromB(seen.host, Number(seen.port))).not.toBe('connected');
    expect(await fromB('127.0.0.1', Number(seen.port))).not.toBe('connected');
  });

  it("keeps B's release from A's release, sshd and the host's services, and lets it reach the outside world", async () => {
    const [addressA] = upstreamOf(a.id);
    const [hostA, portA] = (addressA as string).split(':');
    expect(await fromB(hostA as string, Number(portA))).not.toBe('connected');
    // The bridge's own address (the releases' gateway), the machine's loopback as B sees it, and the machine's address on its way out.
    const gateway = (hostA as string).replace(/\.\d+$/, '.1');
    const [route] = JSON.parse(execFileSync('ip', ['-j', '-4', 'route', 'show', 'default'], { encoding: 'utf8' })) as { dev: string }[];
    const [link] = JSON.parse(execFileSync('ip', ['-j', '-4', 'address', 'show', 'dev', route?.dev as string], { encoding: 'utf8' })) as { addr_info: { local: string }[] }[];
    const machine = (link?.addr_info ?? []).map((a) => a.local);
    expect(machine.length).toBeGreaterThan(0);
    for (const address of [gateway, '127.0.0.1', ...machine]) expect(await fromB(address, host.ports.ssh), `sshd at ${address}`).not.toBe('connected');
    // The edge is public: at the gateway (it listens on the machine's loopback here), as from the internet; not on B's own loopback.
    expect(await fromB(gateway, host.ports.https)).toBe('connected');
    expect(await fromB('127.0.0.1', host.ports.https)).not.toBe('connected');
    const edgePorts = [host.ports.https, host.ports.http].sort((x, y) => x - y);
    // Every port of every address B can see of the machine: none open but the edge's, and its own 8080 on its own loopback.
    const scanFromB = (address: string) => scanFrom(b.id, address);
    expect(await scanFromB(gateway)).toEqual(edgePorts);
    // Its own loopback holds its own sockets only: its 8080, and none of the host's (sshd, the edge, A's add-on).
    const own = await scanFromB('127.0.0.1');
    expect(own).toContain(8080);
    const { port: addonPort } = (await host.get(a.id, '/postgresql')).json<{ port: string }>();
    for (const port of [host.ports.ssh, host.ports.https, host.ports.http, Number(addonPort)]) expect(own).not.toContain(port);
    for (const address of machine) expect(await scanFromB(address), address).toEqual([]);
    // A sees, of the gateway, its linked add-on's port and the edge's: reach is what the links say.
    expect(await scanFrom(a.id, gateway)).toEqual([Number(addonPort), ...edgePorts].sort((x, y) => x - y));
    // The package registry npm is configured with stands in for the outside world.
    const registry = new URL(execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim());
    expect(await fromB(registry.hostname, Number(registry.port || (registry.protocol === 'https:' ? 443 : 80)))).toBe('connected');
  });

  it('starts the next release in a namespace of its own while the previous one still serves on its 8080', async () => {
    const before = upstreamOf(a.id);
    expect((await host.cli(['env', 'set', 'RELEASE_MARK', 'second', '--app', a.id])).code).toBe(0);
    const restarted = await host.cli(['restart', '--app', a.id]);
    expect(restarted.code, `${restarted.stdout}${restarted.stderr}`).toBe(0);
    await expect.poll(async () => (await host.get(a.id, '/')).json<{ mark: string | null }>().mark, { timeout: 120_000 }).toBe('second');
    expect(upstreamOf(a.id)).not.toEqual(before);
    expect(upstreamOf(a.id)[0]).toMatch(/:8080$/);
  }, 180_000);

  it('takes each release over in its namespace when serve starts again, its links opened again', async () => {
    const before = upstreamOf(a.id);
    await host.stop();
    // Meanwhile the edge still reaches the release: neither its namespace nor the bridge went with serve.
    expect((await host.get(a.id, '/')).status).toBe(200);
    await host.serve({ keepApps: true });
    expect(host.serveOutput).toContain('taken over');
    expect(upstreamOf(a.id)).toEqual(before);
    expect((await host.get(a.id, '/postgresql')).json<{ answer: string }>().answer).toBe('R');
  }, 180_000);

  /** A push of fixtures/host/listen-8080 as a new application of org-b, pushed by `user`, with `variables`. */
  const pushListener = async (user: string, name: string, variables: Record<string, string>) => {
    const key = await host.key(user, 'org-b');
    const app: { id: string; gitRemote: string } = await host.json(['create', '--type', 'node', name, '--region', 'par', '--org', 'org-b']);
    for (const [variable, value] of Object.entries(variables)) expect((await host.cli(['env', 'set', variable, value, '--app', app.id])).code).toBe(0);
    const repo = await host.repository('host/listen-8080');
    await host.git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
    return host.push(repo, 'runplan', key);
  };

  it('refuses an application that hard-codes another port, naming it', async () => {
    const pushed = await pushListener('carol', 'elsewhere', { CC_HEALTH_CHECK_PATH: '/health', FIXTURE_HARD_PORT: '3000' });
    expect(pushed.code).not.toBe(0);
    // Read in the release's own namespace: the port it listens on instead, and the one PORT gives.
    expect(pushed.output).toContain("the application's processes listen on 0.0.0.0:3000");
    expect(pushed.output).toContain('PORT (8080 here)');
  }, 180_000);

  it('refuses an application that listens on 127.0.0.1:8080 in its namespace with RUNPLAN_E_HEALTH_LOOPBACK_ONLY', async () => {
    const pushed = await pushListener('dave', 'loopback', { FIXTURE_HARD_HOST: '127.0.0.1' });
    expect(pushed.code).not.toBe(0);
    expect(pushed.output).toContain('RUNPLAN_E_HEALTH_LOOPBACK_ONLY');
    expect(pushed.output).toContain("the application's processes listen on 127.0.0.1:8080");
  }, 180_000);
});
