import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppSandbox, type SandboxScope } from '../../src/sandbox/sandbox.js';
import { RELEASE_PORT, type ReleaseNamespace, ReleaseNetworks } from '../../src/sandbox/release-network.js';
import { makeTestUser, type TestUser } from '../helpers/app-users.js';
import { get } from '../helpers/http.js';
import { tempDir } from '../helpers/temp.js';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** Connects to host:port from inside a scope; prints what happened (`connected`, or the error's code). */
const CONNECT = `const s = require('net').connect(Number(process.argv[2]), process.argv[1]);
s.setTimeout(3000, () => { console.log('ETIMEDOUT'); process.exit(); });
s.on('connect', () => { console.log('connected'); process.exit(); });
s.on('error', (e) => { console.log(e.code); process.exit(); });`;

/** An HTTP GET of the URL given, from inside a scope: its status, or the error's cause. */
const FETCH = `fetch(process.argv[1], { signal: AbortSignal.timeout(20000) }).then((r) => console.log(r.status), (e) => console.log('failed', e.cause?.code ?? e.message));`;

/**
 * A release's own network (src/sandbox/release-network.ts): a server that
 * hard-codes 0.0.0.0:8080 is reached by the host at its namespace's address,
 * not by another release's namespace, reaches the outside world, and reaches
 * the host's side only where a link opens it.
 */
describe.runIf(asRoot)("a release's network namespace", () => {
  // A bridge and a network of this test's own: two test runs on one machine never share one.
  const tag = process.pid % 250;
  let networks: ReleaseNetworks;
  const cgroupRoot = `runplan-test-net-${process.pid}`;
  let user: TestUser;
  let sandbox: AppSandbox;
  let dir: string;
  const scopes: SandboxScope[] = [];
  const namespaces: ReleaseNamespace[] = [];
  const children: ChildProcess[] = [];
  let hostService: Server;
  let hostPort: number;
  let wideService: Server;
  let widePort: number;
  let edgeService: Server;
  let edgePort: number;

  beforeAll(async () => {
    user = await makeTestUser();
    dir = await tempDir('runplan-net-');
    sandbox = new AppSandbox({ user, cgroup: [cgroupRoot, 'app'] });
    // A service of the host's on its loopback (as an add-on's server): only a link opens it to a release, at the gateway's address.
    hostService = createServer((_req, res) => res.end('host\n'));
    await new Promise<void>((resolve) => hostService.listen(0, '127.0.0.1', resolve));
    hostPort = (hostService.address() as { port: number }).port;
    // One listening on every address of the machine (as sshd may): never opened to a release.
    wideService = createServer((_req, res) => res.end('wide\n'));
    await new Promise<void>((resolve) => wideService.listen(0, '0.0.0.0', resolve));
    widePort = (wideService.address() as { port: number }).port;
    // The edge's public port, on the loopback as a host tried on one machine has it: open to every release, at the gateway.
    edgeService = createServer((_req, res) => res.end('edge\n'));
    await new Promise<void>((resolve) => edgeService.listen(0, '127.0.0.1', resolve));
    edgePort = (edgeService.address() as { port: number }).port;
    networks = new ReleaseNetworks({ bridge: `rt${process.pid % 100000}`, gateway: `10.86.${tag}.1`, prefix: 24, table: `runplan_test_net_${process.pid}`, publicPorts: [edgePort] });
    await networks.start();
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const scope of scopes) await scope.close().catch(() => undefined);
    for (const namespace of namespaces) await namespace.remove().catch(() => undefined);
    await networks?.stop();
    hostService?.close();
    edgeService?.close();
    wideService?.close();
    await AppSandbox.removeCgroups([cgroupRoot]);
    await user?.remove();
  });

  async function release(name: string): Promise<{ namespace: ReleaseNamespace; scope: SandboxScope }> {
    const namespace = await networks.create();
    namespaces.push(namespace);
    const scope = await sandbox.open({ name, limits: { cpus: 1, memoryMb: 256, processes: 256 }, writable: [dir], network: namespace });
    scopes.push(scope);
    return { namespace, scope };
  }

  async function inside(scope: SandboxScope, script: string, ...args: string[]): Promise<string> {
    const [file, ...rest] = scope.command(['/usr/bin/node', '-e', script, ...args], dir);
    const { stdout } = await run(file as string, rest, { cwd: '/', timeout: 30_000 });
    return stdout.trim();
  }

  it('serves on its own 8080, reached by the host only; reaches the outside world, and the host where a link opens it', async () => {
    const a = await release('a');
    const b = await release('b');
    expect(a.namespace.address).not.toBe(b.namespace.address);
    // Both hard-code 8080: each namespace has its own.
    for (const { scope, namespace } of [a, b]) {
      const [file, ...rest] = scope.command(['/usr/bin/node', '-e', `require('http').createServer((q, r) => r.end('${namespace.address}\\n')).listen(8080, '0.0.0.0')`], dir);
      children.push(spawn(file as string, rest, { cwd: '/', stdio: 'ignore' }));
    }
    for (const { namespace } of [a, b]) {
      await expect.poll(async () => (await get(`http://${namespace.address}:${RELEASE_PORT}/`).catch(() => ({ body: '' }))).body, { timeout: 15_000 }).toBe(`${namespace.address}\n`);
    }

    // Another release's namespace never reaches it, nor the host's services on the bridge's address or on loopback.
    expect(await inside(b.scope, CONNECT, a.namespace.address, String(RELEASE_PORT))).not.toBe('connected');
    expect(await inside(b.scope, CONNECT, networks.settings.gateway, String(hostPort))).not.toBe('connected');
    expect(await inside(b.scope, CONNECT, '127.0.0.1', String(hostPort))).not.toBe('connected');
    expect(await inside(b.scope, CONNECT, networks.settings.gateway, String(widePort))).not.toBe('connected');
    // The edge's public port: reached by every release, at the gateway, as from the internet.
    expect(await inside(b.scope, CONNECT, networks.settings.gateway, String(edgePort))).toBe('connected');
    expect(await inside(a.scope, FETCH, `http://${networks.settings.gateway}:${edgePort}/`)).toBe('200');

    // A link opens that port of the host's loopback, at the bridge's address, to that release only.
    const close = await b.namespace.allow({ port: hostPort });
    expect(await inside(b.scope, CONNECT, networks.settings.gateway, String(hostPort))).toBe('connected');
    expect(await inside(a.scope, CONNECT, networks.settings.gateway, String(hostPort))).not.toBe('connected');
    await close();
    expect(await inside(b.scope, CONNECT, networks.settings.gateway, String(hostPort))).not.toBe('connected');

    // The outside world: the package registry npm is configured with (any HTTP answer).
    const registry = (await run('npm', ['config', 'get', 'registry'])).stdout.trim();
    expect(await inside(a.scope, FETCH, registry)).toMatch(/^[1-5]\d\d$/);

    // A later runplan finds each namespace again by its address.
    expect((await networks.attach(a.namespace.address))?.name).toBe(a.namespace.name);
  }, 120_000);
});
