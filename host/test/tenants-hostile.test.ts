import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, TestHost } from './helpers/test-host.js';

interface Attempt {
  readonly ok: boolean;
  readonly code?: string;
  readonly value?: unknown;
}

/** The pids of the processes running as `uid` (read by root in this test's /proc). */
function processesOf(uid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] === String(uid);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The p99 of `n` GETs one after another, in milliseconds. */
async function p99(ask: () => Promise<Answer>, n: number): Promise<{ p99: number; failed: number }> {
  const times: number[] = [];
  let failed = 0;
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const answer = await ask().catch(() => undefined);
    times.push(performance.now() - started);
    if (answer?.status !== 200) failed += 1;
  }
  times.sort((a, b) => a - b);
  return { p99: times[Math.floor(times.length * 0.99)] ?? Number.NaN, failed };
}

/**
 * Two organizations on one runplan-host, each pushing its own code: B's code
 * (fixtures/host/tenant-probe) tries, at build time and while it runs, every way
 * into A's application that one user on a shared machine would have — A's
 * environment, files, checkout, build, /proc, signals, the host's data folder,
 * the operator's environment — and then uses more than its instance has.
 * Nothing may succeed, and A keeps answering. Twice: with the releases on the
 * machine's network (`releaseNetwork: shared`), and each in its own network
 * namespace on a disk of its own (`own`, `diskMb`), where B also finds no way
 * to A's address, the host's services or sshd.
 */
describe.each([{ network: 'shared' as const }, { network: 'own' as const }])('tenants apart on one runplan-host (local engine, $network network)', ({ network }) => {
  let host: TestHost;
  let a: { id: string; gitRemote: string };
  let b: { id: string; gitRemote: string };
  let keyA: string;
  let keyB: string;
  let repoB: string;
  const secret = 'sk_live_tenant_a_7c1f0e9b';
  const marker = 'operator_npm_token_4b2d';
  let aPid: number;
  let aBuildFile: string;

  beforeAll(async () => {
    // own: what init gives a new host, with a smaller disk; shared: a host made before, on the machine's network without a disk.
    host = await TestHost.create({ initArgs: network === 'own' ? ['--disk-mb', '512'] : ['--release-network', 'shared', '--disk-mb', '0'] });
    // The operator's shell: npm's configuration and a token-like variable that no tenant may see.
    await host.serve({ env: { npm_config_marker_token: marker, RUNPLAN_OPERATOR_TOKEN: marker } });
    keyA = await host.key('alice', 'org-a');
    keyB = await host.key('bob', 'org-b');
    a = await host.json(['create', '--type', 'node', 'victim', '--region', 'par', '--org', 'org-a']);
    b = await host.json(['create', '--type', 'node', 'probe', '--region', 'par', '--org', 'org-b']);
    const repoA = await host.repository('host/facts');
    await host.git(repoA, ['remote', 'add', 'runplan', a.gitRemote]);
    for (const [name, value] of [
      ['CC_HEALTH_CHECK_PATH', '/health'],
      ['API_TOKEN', secret],
    ])
      expect((await host.cli(['env', 'set', name as string, value as string, '--app', a.id])).code).toBe(0);
    expect((await host.push(repoA, 'runplan', keyA)).code).toBe(0);
    const aUid = await host.appUid(a.id);
    aPid = processesOf(aUid).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('server.js')) as number;
    expect(aPid).toBeGreaterThan(0);
    // A's running build, as root finds it: the file its web process serves.
    aBuildFile = join(execFileSync('readlink', ['-f', `/proc/${aPid}/cwd`], { encoding: 'utf8' }).trim(), 'server.js');
    expect(statSync(aBuildFile).uid).toBe(aUid);

    repoB = await host.repository('host/tenant-probe');
    await host.git(repoB, ['remote', 'add', 'runplan', b.gitRemote]);
    const targets = [
      { op: 'environ', pid: String(aPid) },
      { op: 'cwd', pid: String(aPid) },
      { op: 'signal', pid: String(aPid) },
      { op: 'read', path: aBuildFile },
      { op: 'write', path: aBuildFile },
      { op: 'write', path: join(aBuildFile, '..', 'planted.js') },
      { op: 'list', path: join(host.data, 'apps', a.id, 'source') },
      { op: 'read', path: join(host.data, 'apps', a.id, 'source', 'server.js') },
      { op: 'read', path: join(host.data, 'settings.json') },
      { op: 'read', path: join(host.data, 'api-token') },
      { op: 'list', path: join(host.data, 'runplan', 'work') },
      { op: 'read', path: join(host.data, 'store.sqlite') },
      // A's release where the edge dials it: its namespace's 8080, or its loopback port (closed to other applications' users).
      ...readdirSync(join(host.data, 'run', 'apps', a.id)).map((upstream) => ({ op: 'connect', host: upstream.split(':')[0], port: upstream.split(':')[1] })),
      // From its namespace, a build has no way to the host's loopback (sshd); on the machine's network it reaches it, as anyone does.
      ...(network === 'own' ? [{ op: 'connect', host: '127.0.0.1', port: String(host.ports.ssh) }] : []),
    ];
    for (const [name, value] of [
      ['CC_HEALTH_CHECK_PATH', '/health'],
      ['CC_POST_BUILD_HOOK', 'node probe.js'],
      ['PROBE_TARGETS', JSON.stringify(targets)],
    ])
      expect((await host.cli(['env', 'set', name as string, value as string, '--app', b.id])).code).toBe(0);
    const pushed = await host.push(repoB, 'runplan', keyB);
    expect(pushed.code, pushed.output).toBe(0);
  }, 600_000);

  afterAll(async () => {
    await host?.dispose();
  });

  const attempt = async (query: string): Promise<Attempt> => (await host.get(b.id, `/try?${query}`)).json<Attempt>();

  it("runs each application as its own user, neither root nor the other's, nor the SSH account", async () => {
    const facts = (await host.get(b.id, '/facts')).json<{ uid: number; groups: number[]; visiblePids: number }>();
    expect(facts.uid).toBe(await host.appUid(b.id));
    expect(facts.uid).not.toBe(await host.appUid(a.id));
    expect(facts.uid).not.toBe(0);
    expect(facts.groups).toEqual([facts.uid]);
    expect(facts.visiblePids).toBeLessThan(10);
  });

  it("gives B's build no way into A: environ, cwd, signals, A's build, A's checkout, the data folder, A's release (and in its own network the host's sshd)", async () => {
    const build = (await host.get(b.id, '/build-probe')).json<{ results: { op: string; path?: string; host?: string; port?: string; result: Attempt }[] }>();
    expect(build.results.length).toBe(network === 'own' ? 14 : 13);
    expect(build.results.filter((r) => r.result.ok).map((r) => `${r.op} ${r.path ?? `${r.host}:${r.port}`}`)).toEqual([]);
  });

  it("gives B's running process no way into A either, and never A's secret", async () => {
    for (const query of [
      `op=environ&pid=${aPid}`,
      `op=cwd&pid=${aPid}`,
      `op=signal&pid=${aPid}`,
      `op=read&path=${encodeURIComponent(aBuildFile)}`,
      `op=write&path=${encodeURIComponent(aBuildFile)}`,
    ]) {
      expect(await attempt(query), query).toMatchObject({ ok: false });
    }
    // Every file of A's build is A's user's alone to write, and its running file unchanged.
    expect(readFileSync(aBuildFile, 'utf8')).toContain('host-facts');
    const logs = await host.cli(['logs', '--app', b.id]);
    expect(logs.stdout).not.toContain(secret);
    expect((await host.get(a.id, '/')).json<{ apiTokenSha256: string | null }>().apiTokenSha256).not.toBeNull();
  });

  it("keeps the operator's environment (npm's configuration, tokens) from every tenant", async () => {
    const facts = (await host.get(b.id, '/facts')).json<{ envNames: string[] }>();
    expect(facts.envNames.filter((n) => /marker|OPERATOR/i.test(n))).toEqual([]);
    const buildLog = await host.cli(['logs', '--app', b.id]);
    expect(buildLog.stdout).not.toContain(marker);
  });

  it('holds a noisy tenant to its instance while the other keeps answering within 3x of its quiet p99', async () => {
    const askA = () => host.get(a.id, '/health');
    const quiet = await p99(askA, 100);
    // B: two spinning CPUs, a fork loop, a /tmp filler, then its web process past its memory.
    for (const hog of ['cpu', 'cpu', 'fork', 'disk']) expect((await host.get(b.id, `/hog?kind=${hog}&amount=512`)).status).toBe(200);
    if (network === 'shared') {
      // A connection flood at A's own loopback port, which B can find: the network is the machine's (docs/security.md, "Tenancy").
      const { apps } = await host.json<{ apps: { id: string; serving: { port: number } | null }[] }>(['apps']);
      const aPort = apps.find((x) => x.id === a.id)?.serving?.port as number;
      expect(aPort).toBeGreaterThan(0);
      // Its port is closed to B's user: reset before it reaches A (B may still reach A as anyone does, through the edge).
      expect(await attempt(`op=connect&port=${aPort}`)).toMatchObject({ ok: false, code: 'ECONNREFUSED' });
      expect(await attempt(`op=connect&port=${apps.find((x) => x.id === b.id)?.serving?.port}`)).toMatchObject({ ok: true });
      expect((await host.get(b.id, `/hog?kind=flood&amount=${aPort}`)).status).toBe(200);
    } else {
      // A's address, as the edge dials it: refused from B's namespace, as are the host's services and sshd at B's gateway.
      const [aAddress] = readdirSync(join(host.data, 'run', 'apps', a.id));
      const [aHost, aPort] = (aAddress as string).split(':');
      expect(aPort).toBe('8080');
      expect(await attempt(`op=connect&host=${aHost}&port=8080`)).toMatchObject({ ok: false });
      const [bAddress] = readdirSync(join(host.data, 'run', 'apps', b.id));
      const gateway = (bAddress as string).replace(/\.\d+:8080$/, '.1');
      expect(await attempt(`op=connect&host=${gateway}&port=${host.ports.ssh}`)).toMatchObject({ ok: false });
      for (const port of [host.ports.ssh, host.ports.https, host.ports.http]) expect(await attempt(`op=connect&port=${port}`)).toMatchObject({ ok: false });
      // The edge is public: B reaches it at its gateway, as anyone reaches it from the internet (and A through it, by A's name only).
      expect(await attempt(`op=connect&host=${gateway}&port=${host.ports.https}`)).toMatchObject({ ok: true });
      // B floods its own 8080, in its own namespace.
      expect(await attempt('op=connect&port=8080')).toMatchObject({ ok: true });
      expect((await host.get(b.id, '/hog?kind=flood&amount=8080')).status).toBe(200);
    }
    await host.get(b.id, '/hog-self');
    const noisy = await p99(askA, 100);
    console.log(`A's p99 through the edge: quiet ${quiet.p99.toFixed(1)} ms, B noisy ${noisy.p99.toFixed(1)} ms`);
    expect(noisy.failed).toBe(0);
    // Within 3x of the quiet p99, or 250 ms of it: the two windows are a few seconds apart, and the other test files
    // running on the same two cores move a p99 of tens of milliseconds by as much as 100 ms (CI: 23 ms quiet, 115 ms
    // later). A starved A, what the limits prevent, answers in seconds or not at all. The line above logs both.
    expect(noisy.p99).toBeLessThan(Math.max(3 * quiet.p99, quiet.p99 + 250));
    // B was stopped by its limit, and its log says so with the code.
    await expect
      .poll(async () => (await host.cli(['logs', '--app', b.id])).stdout, { timeout: 60_000 })
      .toContain('RUNPLAN_W_RUN_MEMORY_LIMIT: web was killed: the application used more than its 1 GiB of memory');
  });
});
