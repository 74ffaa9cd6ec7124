import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../test/helpers/processes.js';
import { hostPaths } from '../src/paths.js';
import { type RunningHost, startHost } from '../src/serve.js';
import type { PartHealth } from '../src/supervision/supervisor.js';
import { HeldClock } from './helpers/held-clock.js';
import { type Answer, TestHost } from './helpers/test-host.js';

interface Status {
  readonly serving: boolean;
  readonly apps: number;
  readonly parts: PartHealth[];
}

async function until<T>(what: () => Promise<T | undefined>, ms: number, say: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await what().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${say}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A real host (sshd, Caddy, Redis, the API, a deployed application), started in
 * this process so that the parts' restart back-off runs on a clock the test can
 * hold: the down state is seen for certain, not raced. Each part is killed with
 * SIGKILL as a crash or the OOM killer would, and what a user sees is checked:
 * the application over HTTPS, a git push, the add-on, `status` and `logs`.
 */
describe('runplan-host serve keeps its parts running, and serves the console over HTTPS only', () => {
  let host: TestHost;
  let running: RunningHost | undefined;
  const clock = new HeldClock();
  const echoed: string[] = [];
  let key: string;
  let repo: string;
  let app: { id: string; url: string };

  const status = async (): Promise<{ code: number; status: Status; text: string }> => {
    const [json, human] = await Promise.all([host.cli(['status', '--json']), host.cli(['status'])]);
    return { code: json.code, status: JSON.parse(json.stdout) as Status, text: `${human.stdout}${human.stderr}` };
  };
  const part = async (id: string): Promise<PartHealth> => {
    const found = (await status()).status.parts.find((p) => p.part === id);
    if (found === undefined) throw new Error(`status names no part ${id}`);
    return found;
  };
  const hostLog = async (): Promise<string> => (await host.json<{ lines: string[] }>(['logs', '--host'])).lines.join('\n');
  const appAnswers = async (): Promise<Answer | undefined> => {
    const answer = await host.get(app.id, '/');
    return answer.status === 200 ? answer : undefined;
  };

  beforeAll(async () => {
    host = await TestHost.create();
    running = await startHost(hostPaths(host.data), (line) => echoed.push(line), { clock, stopAppsOnExit: true });
    key = await host.key('dev', 'acme');
    app = await host.json(['create', '--type', 'node', 'facts', '--region', 'par', '--org', 'acme']);
    repo = await host.repository('host/facts');
    await host.git(repo, ['remote', 'add', 'runplan', (app as unknown as { gitRemote: string }).gitRemote]);
    const pushed = await host.push(repo, 'runplan', key);
    if (pushed.code !== 0) throw new Error(`the first push failed:\n${pushed.output}`);
  }, 300_000);

  afterAll(async () => {
    await running?.stop();
    await host?.dispose();
  });

  it('answers plain HTTP on the console name with a 308 to the same path over HTTPS, a sign-in POST too, never with a session; HTTPS answers carry HSTS; the application still answers on plain HTTP', async () => {
    const token = (await host.cli(['token', '--org', 'acme'])).stdout.split('\n')[0] as string;
    const location = `https://console.localhost:${host.ports.https}/sign-in`;
    const [get, post] = await Promise.all([
      host.get('console', '/sign-in', { plain: true }),
      host.get('console', '/sign-in', { plain: true, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${encodeURIComponent(token)}` }),
    ]);
    for (const answer of [get, post]) {
      expect(answer.status).toBe(308);
      expect(answer.headers.location).toBe(location);
      expect(answer.headers['set-cookie']).toBeUndefined();
      expect(answer.body).toBe('');
    }
    const secure = await host.get('console', '/sign-in');
    expect(secure.status).toBe(200);
    expect(secure.headers['strict-transport-security']).toBe('max-age=31536000');
    expect(secure.body).toContain('Sign in');

    const plainApp = await host.get(app.id, '/', { plain: true });
    expect(plainApp.status).toBe(200);
    expect(plainApp.json()).toMatchObject({ app: 'host-facts', forwardedProto: 'http' });
    expect(plainApp.headers['strict-transport-security']).toBeUndefined();
  });

  it('reports every part up in status, each checked from outside', async () => {
    const { code, status: now, text } = await status();
    expect(code).toBe(0);
    expect(now.serving).toBe(true);
    expect(now.parts.map((p) => [p.part, p.up])).toEqual([
      ['sshd', true],
      ['edge', true],
    ]);
    expect(now.parts.find((p) => p.part === 'sshd')?.detail).toBe(`answers SSH on 127.0.0.1:${host.ports.ssh}`);
    expect(text).toMatch(/^serving 1 application\(s\) from /);
    expect(text).toContain('  up    the edge (Caddy): its admin API answers');
  });

  it('says the edge is down while Caddy is killed and not yet started again (status exits 1), then serves again with every route', async () => {
    const before = await part('edge');
    clock.hold();
    try {
      process.kill(before.pid as number, 'SIGKILL');
      await until(async () => (clock.holding === 1 ? true : undefined), 10_000, 'the restart to wait on the clock');
      const { code, status: down, text } = await status();
      expect(code).toBe(1);
      expect(down.serving).toBe(false);
      expect(down.parts.find((p) => p.part === 'edge')).toMatchObject({ up: false, pid: null, lastExit: 'was killed by SIGKILL' });
      expect(down.parts.find((p) => p.part === 'sshd')?.up).toBe(true);
      expect(text).toContain('NOT serving: the edge (Caddy) is down');
      expect(text).toMatch(/DOWN {2}the edge \(Caddy\): its admin API does not answer/);
      await expect(host.get(app.id, '/')).rejects.toThrow();
      expect(await hostLog()).toMatch(/Z ==> the edge \(Caddy\) was killed by SIGKILL after [\d.]+ s; starting it again in 1\.0 s \(restart 1\)$/m);
    } finally {
      clock.release();
    }
    await until(appAnswers, 30_000, 'the application to answer over HTTPS');
    const { code, status: up } = await status();
    expect(code).toBe(0);
    expect(up.parts.find((p) => p.part === 'edge')).toMatchObject({ up: true, restarts: 1 });
    expect((await host.get('console', '/sign-in')).status).toBe(200);
  });

  it("starts a Caddy killed with SIGKILL again by itself: the application answers over HTTPS within 10 s, and logs (the host's and the application's) say so", async () => {
    const { pid } = await part('edge');
    const killedAt = Date.now();
    process.kill(pid as number, 'SIGKILL');
    const answer = await until(appAnswers, 10_000, 'the application to answer over HTTPS again');
    const tookMs = Date.now() - killedAt;
    console.log(`the application answered over HTTPS again ${tookMs} ms after Caddy was killed`);
    expect(tookMs).toBeLessThan(10_000);
    expect(answer.json()).toMatchObject({ app: 'host-facts', forwardedProto: 'https' });
    const log = await hostLog();
    expect(log).toMatch(/==> the edge \(Caddy\) was killed by SIGKILL after [\d.]+ s; starting it again in [\d.]+ s \(restart 2\)/);
    expect(log).toMatch(/==> the edge \(Caddy\) serves again \(PID \d+, [\d.]+ s after it stopped\)/);
    const appLog = (await host.json<{ lines: string[] }>(['logs', '--app', app.id])).lines.join('\n');
    expect(appLog).toMatch(/==> the edge \(Caddy\) was killed by SIGKILL .*\n(.*\n)*==> the edge \(Caddy\) serves again/);
    expect(echoed.join('\n')).toContain('the edge (Caddy) serves again');
  });

  it('starts sshd killed with SIGKILL again: a git push works again', async () => {
    const { pid } = await part('sshd');
    process.kill(pid as number, 'SIGKILL');
    await until(
      async () => {
        const now = await part('sshd');
        return now.up && now.pid !== pid ? now : undefined;
      },
      15_000,
      'sshd to answer again',
    );
    await host.writeFile(repo, 'MARK', 'second\n');
    await host.commit(repo, 'second');
    const pushed = await host.push(repo, 'runplan', key);
    expect(pushed.code, pushed.output).toBe(0);
    expect(pushed.output).toContain('release 2 serves');
    expect(await hostLog()).toMatch(/==> sshd was killed by SIGKILL after [\d.]+ s; starting it again in 1\.0 s \(restart 1\)[\s\S]*==> sshd serves again/);
  });

  it('starts a Redis add-on server killed with SIGKILL again, and lists it in status', async () => {
    const { addon } = await host.json<{ addon: { id: string } }>(['addon', 'create', 'redis', 'cache', '--org', 'acme']);
    const id = `redis:${addon.id}`;
    const { pid, up } = await part(id);
    expect(up).toBe(true);
    process.kill(pid as number, 'SIGKILL');
    const again = await until(
      async () => {
        const now = await part(id);
        return now.up && now.pid !== pid ? now : undefined;
      },
      15_000,
      'the Redis add-on to answer again',
    );
    expect(again).toMatchObject({ restarts: 1, lastExit: 'was killed by SIGKILL', name: `Redis add-on ${addon.id}` });
    expect(await hostLog()).toContain(`==> Redis add-on ${addon.id} was killed by SIGKILL`);
  });

  it('stops every part for good when serve stops: none is started again', async () => {
    const { status: now } = await status();
    const pids = now.parts.map((p) => p.pid as number);
    expect(pids).toHaveLength(3);
    const said = echoed.length;
    await running?.stop();
    running = undefined;
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    // Longer than the first back-off: a part started again would have said so, and be running, by now.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(echoed.slice(said).filter((l) => /starting it again|serves again/.test(l))).toEqual([]);
    expect(echoed.filter((l) => l.includes('starting it again'))).toHaveLength(4);
  });
});
