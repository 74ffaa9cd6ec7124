import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../test/helpers/ports.js';
import { ROOT, TestHost } from './helpers/test-host.js';

const run = promisify(execFile);

interface Pushed {
  readonly app: string;
  readonly commit: string;
  readonly code: number;
  readonly output: string;
}

interface ReleaseView {
  readonly number: number;
  readonly status: string;
  readonly cause: string;
  readonly commit: string;
  readonly errorCode: string | null;
}

const PUSHES_PER_APP = 10;

/** The PIDs of this host's proc-receive hooks running now (one per push that reached its hook). */
function hooksOf(data: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
        return args.includes('proc-receive') && args.includes(data);
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Pushes are atomic (issue 35): the deploy and git's update of master happen
 * under the application's one lock, so whatever order concurrent pushes take,
 * the release that serves is master's, and a push git reports rejected never
 * serves. Real sshd, git, serve and Caddy; the fixture reports its commit over
 * HTTPS.
 */
describe('atomic pushes (local engine)', () => {
  let host: TestHost;
  let key: string;
  /**
   * A loopback port that holds each build of the first application at its pre-build hook while something listens there
   * (CC_PRE_BUILD_HOOK): the tests choose when a deploy is under way. A port, not a file: inside its walls an application
   * sees no /tmp of the machine, but its network is the machine's (docs/security.md).
   */
  let gatePort: number;
  let gate: Server | undefined;
  const apps: { id: string; gitRemote: string; repo: string }[] = [];

  const master = async (appId: string) => {
    const { stdout } = await run('git', ['-c', 'safe.directory=*', '--git-dir', join(host.data, 'git', `${appId}.git`), 'rev-parse', '--verify', '-q', 'refs/heads/master']).catch(() => ({
      stdout: '',
    }));
    return stdout.trim();
  };
  const servingCommit = async (appId: string) => (await host.get(appId, '/')).json<{ commit: string }>().commit;
  const releasesOf = async (appId: string) => (await host.json<{ releases: ReleaseView[] }>(['releases', '--app', appId])).releases;
  const currentOf = async (appId: string) => {
    const { apps: views } = await host.json<{ apps: { id: string; currentRelease: number | null }[] }>(['apps']);
    const number = views.find((a) => a.id === appId)?.currentRelease;
    return (await releasesOf(appId)).find((r) => r.number === number);
  };
  /** A clone of the application's repository with one more commit of its own. */
  let clones = 0;
  const change = async (app: { repo: string }, text: string) => {
    clones += 1;
    const dir = `${app.repo}-${clones}`;
    await run('cp', ['-a', app.repo, dir]);
    await host.writeFile(dir, 'PUSH', `${text}\n`);
    await host.commit(dir, text);
    return { dir, commit: (await run('git', ['rev-parse', 'HEAD'], { cwd: dir })).stdout.trim() };
  };
  // Forced: the client would refuse a push on a master it never saw (another clone's); serve and git still check master's old value.
  const push = async (dir: string) => {
    for (let attempt = 1; ; attempt += 1) {
      const pushed = await host.push(dir, 'runplan', key, '+master:master');
      // sshd drops some of many connections opened at once before they log in (its MaxStartups): nothing reached the host, so the pusher tries again, a little later.
      const dropped = pushed.code !== 0 && !pushed.output.includes('remote:') && /kex_exchange_identification|Connection (reset|closed)/.test(pushed.output);
      if (!dropped || attempt === 5) return pushed;
      await new Promise((resolve) => setTimeout(resolve, attempt * (200 + Math.random() * 800)));
    }
  };
  const deploying = async (appId: string, commit: string) => (await releasesOf(appId)).some((r) => r.commit === commit && r.status === 'deploying');
  const closeGate = async () => {
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(gatePort, '127.0.0.1', resolve);
    });
    gate = server;
  };
  const openGate = async () => {
    const server = gate;
    gate = undefined;
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  };

  beforeAll(async () => {
    host = await TestHost.create();
    // A shorter drain than the default 5 s: each deploy of an application waits for the one before to drain.
    const settings = JSON.parse(await readFile(join(host.data, 'settings.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(host.data, 'settings.json'), JSON.stringify({ ...settings, drainMs: 1000 }));
    await host.serve();
    key = await host.key('alice', 'acme');
    gatePort = await freePort();
    for (const name of ['atom-one', 'atom-two']) {
      const app = await host.json<{ id: string; gitRemote: string }>(['create', '--type', 'node', name, '--region', 'par', '--org', 'acme']);
      const repo = await host.repository('host/facts');
      await host.git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
      const first = await host.push(repo, 'runplan', key);
      expect(first.code, first.output).toBe(0);
      apps.push({ ...app, repo });
    }
  }, 300_000);

  afterAll(async () => {
    await openGate();
    await host?.dispose();
  });

  it('leaves master == the serving release for both applications after 20 concurrent pushes, and no push reported rejected serves', { timeout: 900_000 }, async () => {
    // Each push its own clone and commit, all made before any is pushed.
    const made: { app: string; dir: string; commit: string }[] = [];
    for (const app of apps) for (let i = 0; i < PUSHES_PER_APP; i += 1) made.push({ app: app.id, ...(await change(app, `push ${i} of ${app.id}`)) });
    const started = Date.now();
    const pushes: Pushed[] = await Promise.all(made.map(async (m) => ({ app: m.app, commit: m.commit, ...(await push(m.dir)) })));
    console.log(`${pushes.length} concurrent pushes ended in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    for (const app of apps) {
      const mine = pushes.filter((p) => p.app === app.id);
      const head = await master(app.id);
      const serving = await servingCommit(app.id);
      const releases = await releasesOf(app.id);
      const current = await currentOf(app.id);
      const summary = mine
        .map(
          (p) =>
            `${p.commit.slice(0, 7)} exit ${p.code}: ${p.output
              .split('\n')
              .filter((l) => /rejected|RUNPLAN_|serves|->/.test(l))
              .join(' | ')}`,
        )
        .join('\n');
      // The application answers with master's commit, and the store's current release is master's.
      expect(serving, summary).toBe(head);
      expect(current?.commit, summary).toBe(head);
      // master is one of the pushes, and that push was reported accepted, with the line of its release serving.
      const winner = mine.find((p) => p.commit === head);
      expect(winner?.code, summary).toBe(0);
      expect(winner?.output).toContain(`==> release ${current?.number} serves`);
      for (const pushed of mine) {
        const rejected = /\[remote rejected\]|\[rejected\]/.test(pushed.output);
        // git's exit status and its report agree.
        expect(rejected, pushed.output).toBe(pushed.code !== 0);
        if (!rejected) continue;
        expect(pushed.commit, pushed.output).not.toBe(serving);
        // A rejected push's release, if it got one, never became current: it is recorded failed.
        for (const release of releases.filter((r) => r.commit === pushed.commit)) expect(release.status, pushed.output).toBe('failed');
      }
      console.log(`${PUSHES_PER_APP} concurrent pushes to ${app.id}: ${mine.filter((p) => p.code === 0).length} accepted, ${mine.filter((p) => p.code !== 0).length} rejected`);
    }
  });

  it('refuses a push whose master moved while it waited, before deploying anything (RUNPLAN_HOST_E_PUSH_STALE)', async () => {
    const app = apps[0] as (typeof apps)[number];
    const waitWhileHeld = `const net = require('net'); const held = () => { const s = net.connect(${gatePort}, '127.0.0.1'); s.once('connect', () => { s.destroy(); setTimeout(held, 100); }); s.once('error', () => process.exit(0)); }; held();`;
    expect((await host.cli(['env', 'set', 'CC_PRE_BUILD_HOOK', `node -e "${waitWhileHeld}"`, '--app', app.id])).code).toBe(0);
    const first = await change(app, 'the first of two');
    const second = await change(app, 'the second of two');
    await closeGate();
    const pushingFirst = push(first.dir);
    await until('the first push to deploy', () => deploying(app.id, first.commit));
    // The second push read master before the first moved it: its hook runs, and waits for the application's lock.
    const pushingSecond = push(second.dir);
    await until('the second push to reach its hook', () => hooksOf(host.data).length >= 2);
    await openGate();
    const [accepted, refused] = await Promise.all([pushingFirst, pushingSecond]);
    expect(accepted.code, accepted.output).toBe(0);
    expect(refused.code, refused.output).not.toBe(0);
    expect(refused.output).toContain('remote: ==> another deploy of atom-one is running (push by key_');
    expect(refused.output).toContain('remote: error RUNPLAN_HOST_E_PUSH_STALE: master moved while this push waited');
    expect(refused.output).toContain('[remote rejected] master -> master (RUNPLAN_HOST_E_PUSH_STALE)');
    expect((await releasesOf(app.id)).filter((r) => r.commit === second.commit)).toEqual([]);
    expect(await master(app.id)).toBe(first.commit);
    expect(await servingCommit(app.id)).toBe(first.commit);
  });

  it('refuses a push git cannot record, and its release never serves (RUNPLAN_HOST_E_PUSH_REF_UPDATE)', async () => {
    const app = apps[0] as (typeof apps)[number];
    const before = await master(app.id);
    // Another git process holding master's lock, as git documents its ref locks.
    const lock = join(host.data, 'git', `${app.id}.git`, 'refs', 'heads', 'master.lock');
    await writeFile(lock, '');
    try {
      const refused = await change(app, 'a push git cannot record');
      const pushed = await push(refused.dir);
      expect(pushed.code, pushed.output).not.toBe(0);
      // Through the gate, then refused at the ref update.
      expect(pushed.output).toContain('health check passed');
      expect(pushed.output).toContain(`RUNPLAN_HOST_E_PUSH_REF_UPDATE: git could not move master to ${refused.commit.slice(0, 12)}: update_ref failed for ref 'refs/heads/master': cannot lock ref`);
      expect(pushed.output).toContain('RUNPLAN_HOST_E_DEPLOY_FAILED');
      expect(pushed.output).toContain('[remote rejected] master -> master (RUNPLAN_HOST_E_PUSH_REF_UPDATE)');
      expect((await releasesOf(app.id)).find((r) => r.commit === refused.commit)).toMatchObject({ status: 'failed', errorCode: 'RUNPLAN_HOST_E_PUSH_REF_UPDATE' });
    } finally {
      await rm(lock, { force: true });
    }
    expect(await master(app.id)).toBe(before);
    expect(await servingCommit(app.id)).toBe(before);
  });

  it('stops the deploy of a push whose hook is killed: git reports it rejected and it never serves (RUNPLAN_HOST_E_PUSH_ABANDONED)', async () => {
    const app = apps[0] as (typeof apps)[number];
    const before = await master(app.id);
    const abandoned = await change(app, 'a push whose hook dies');
    await closeGate();
    const pushing = push(abandoned.dir);
    await until('the push to deploy', () => deploying(app.id, abandoned.commit));
    const [hook] = hooksOf(host.data);
    // The hook of the push this test started.
    process.kill(hook as number, 'SIGKILL');
    const pushed = await pushing;
    await openGate();
    expect(pushed.code, pushed.output).not.toBe(0);
    expect(pushed.output).toMatch(/\[remote rejected\] master -> master/);
    await until('the release to be recorded failed', async () => (await releasesOf(app.id)).some((r) => r.commit === abandoned.commit && r.status === 'failed'));
    expect((await releasesOf(app.id)).find((r) => r.commit === abandoned.commit)?.errorCode).toBe('RUNPLAN_HOST_E_PUSH_ABANDONED');
    expect(await master(app.id)).toBe(before);
    expect(await servingCommit(app.id)).toBe(before);
  });

  it('restarts, when asked during a push, the release of the push: master still serves', async () => {
    const app = apps[0] as (typeof apps)[number];
    const pushedNow = await change(app, 'a push during which a restart is asked');
    await closeGate();
    const pushing = push(pushedNow.dir);
    await until('the push to deploy', () => deploying(app.id, pushedNow.commit));
    // The restart's lines as they come: it says when it waits for the push.
    const restart = spawn(process.execPath, [join(ROOT, 'host', 'dist', 'cli.js'), 'restart', '--app', app.id, '--data', host.data], { stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    for (const stream of [restart.stdout, restart.stderr]) stream.on('data', (chunk: Buffer) => (said += chunk.toString()));
    const restarting = new Promise<number | null>((resolve) => restart.once('exit', resolve));
    await until('the restart to wait for the push', () => said.includes('==> another deploy of atom-one is running (push by key_'));
    await openGate();
    const [pushed, restarted] = await Promise.all([pushing, restarting]);
    expect(pushed.code, pushed.output).toBe(0);
    expect(restarted, said).toBe(0);
    expect(await master(app.id)).toBe(pushedNow.commit);
    expect(await servingCommit(app.id)).toBe(pushedNow.commit);
    expect(await currentOf(app.id)).toMatchObject({ cause: 'restart', commit: pushedNow.commit });
  });

  it('rejects a push under way when serve stops; serve started again serves master, the push’s release never current', async () => {
    const app = apps[0] as (typeof apps)[number];
    const before = await master(app.id);
    const interrupted = await change(app, 'a push serve stops under');
    await closeGate();
    const pushing = push(interrupted.dir);
    await until('the push to deploy', () => deploying(app.id, interrupted.commit));
    expect(await host.stop()).toBe(0);
    const pushed = await pushing;
    await openGate();
    expect(pushed.code, pushed.output).not.toBe(0);
    expect(pushed.output).toMatch(/\[remote rejected\] master -> master/);
    await host.serve();
    expect(await master(app.id)).toBe(before);
    expect(await servingCommit(app.id)).toBe(before);
    expect((await releasesOf(app.id)).find((r) => r.commit === interrupted.commit)?.status).toBe('failed');
    expect((await currentOf(app.id))?.commit).toBe(before);
  });
});
