import { rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appHostOf, TestHost } from './test-host.js';

/** Where the host under test runs its releases, and what it keeps its state in. */
export interface HostUnderTest {
  /** As the tests' names say it: "local", "swarm on PostgreSQL". */
  readonly name: string;
  /** What `runplan-host init` is given besides the test host's ports and cache. */
  initArgs(): Promise<string[]>;
  /** Whether the engine runs two releases of one application side by side (the one-deploy-at-a-time case needs none). */
  readonly sideBySide: boolean;
  /** How a release whose GET /health answers 500 is refused: the error's code and lines of the push. */
  readonly failedGate: { readonly code: string; readonly lines: readonly string[] };
  /** Where a linked PostgreSQL add-on's server is, as POSTGRESQL_ADDON_HOST says it (the name, or a pattern of the address). */
  readonly addonHost: string | RegExp;
  /** What the host left in its engine once serve stopped (nothing, for a pass). */
  leftBehind(host: TestHost, appId: string): Promise<string[]>;
}

/**
 * runplan-host end to end, as a user meets it: real sshd, git, Caddy and
 * runplan on loopback; the fixture app (fixtures/host/facts) reports over HTTPS
 * what the host and the edge gave it. The same cases for every engine: the push
 * output, the gate's lines, the rejected push with the old release serving and
 * the rollback read the same on this machine and on a swarm (issue 28).
 */
export function describeHost(engine: HostUnderTest): void {
  describe(`runplan-host (${engine.name})`, () => {
    let host: TestHost;
    let key: string;
    let app: { id: string; gitRemote: string; url: string };
    let repo: string;
    const secret = 'sk_live_host_e2e_5f1c9a7d';

    beforeAll(async () => {
      // The specification's account: pushes go to git@….
      host = await TestHost.create({ sshUser: 'git', initArgs: await engine.initArgs() });
      await host.serve();
      key = await host.key('alice', 'acme');
      app = await host.json(['create', '--type', 'node', 'facts', '--region', 'par', '--org', 'acme']);
      repo = await host.repository('host/facts');
      await host.git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
    }, 300_000);

    afterAll(async () => {
      await host?.dispose();
    });

    it('creates an application with its git remote and HTTPS address, and refuses bad names, zones and types with coded errors', async () => {
      expect(app.id).toMatch(/^app_[0-9a-f-]{36}$/);
      expect(app.gitRemote).toBe(`git+ssh://git@127.0.0.1:${host.ports.ssh}/${app.id}.git`);
      expect(app.url).toBe(`https://${appHostOf(app.id)}:${host.ports.https}/`);
      const refused = await Promise.all([
        host.cli(['create', '--type', 'node', 'Bad_Name', '--region', 'par', '--org', 'acme']),
        host.cli(['create', '--type', 'node', 'ok', '--region', 'nyc', '--org', 'acme']),
        host.cli(['create', '--type', 'php', 'ok', '--region', 'par', '--org', 'acme']),
        host.cli(['create', '--type', 'node', 'facts', '--region', 'par', '--org', 'acme']),
      ]);
      expect(refused.map((r) => r.code)).toEqual([2, 2, 2, 2]);
      expect(refused.map((r) => /RUNPLAN_HOST_E_[A-Z_]+/.exec(r.stderr)?.[0])).toEqual([
        'RUNPLAN_HOST_E_INPUT_APP_NAME',
        'RUNPLAN_HOST_E_INPUT_ZONE',
        'RUNPLAN_HOST_E_INPUT_TYPE',
        'RUNPLAN_HOST_E_APP_NAME_TAKEN',
      ]);
    });

    it('deploys a git push of master through the health gate and serves it over HTTPS with X-Forwarded-Proto', async () => {
      for (const [name, value] of [
        ['CC_HEALTH_CHECK_PATH', '/health'],
        ['GREETING', 'hello'],
        ['RELEASE_MARK', 'one'],
        ['API_TOKEN', secret],
      ])
        expect((await host.cli(['env', 'set', name as string, value as string], { cwd: repo })).code).toBe(0);
      const started = Date.now();
      const pushed = await host.push(repo, 'runplan', key);
      console.log(`first push to serving (${engine.name}): ${((Date.now() - started) / 1000).toFixed(1)} s`);
      expect(pushed.code, pushed.output).toBe(0);
      expect(pushed.output).toContain('remote: Response from GET /health is 200');
      expect(pushed.output).toContain(`remote: ==> release 1 serves ${app.url}`);
      expect(pushed.output).not.toContain(secret);
      // What the pusher reads is in the application's terms: sshd finds the SSH account's home, and a step
      // whose command is an inline script (the native-modules check) is told by its purpose.
      expect(pushed.output).not.toContain('Could not chdir');
      expect(pushed.output).not.toMatch(/node -e '|more lines\)/);
      const answer = await host.get(app.id, '/');
      expect(answer.status).toBe(200);
      const facts = answer.json<Record<string, unknown>>();
      expect(facts).toMatchObject({ app: 'host-facts', greeting: 'hello', release: 'one', appId: app.id, forwardedProto: 'https', forwardedHost: appHostOf(app.id) });
      expect(facts.uid).not.toBe(0);
      const plain = await host.get(app.id, '/', { plain: true, headers: { 'x-forwarded-proto': 'https' } });
      expect(plain.json()).toMatchObject({ forwardedProto: 'http' });
    });

    it('masks secret variables and tells which changed since the serving release', async () => {
      await host.cli(['env', 'set', 'GREETING', 'bonjour', '--app', app.id]);
      const env = await host.json<{ variables: { name: string; value: string; changed: string | null }[] }>(['env', '--app', app.id]);
      expect(env.variables.find((v) => v.name === 'API_TOKEN')?.value).toBe('***');
      expect(env.variables.find((v) => v.name === 'GREETING')).toMatchObject({ value: 'bonjour', changed: 'changed' });
      const shown = await host.json<{ variables: { name: string; value: string }[] }>(['env', '--app', app.id, '--show']);
      expect(shown.variables.find((v) => v.name === 'API_TOKEN')?.value).toBe(secret);
    });

    it('restarts with the new variables through the gate, with 0 failed requests while it switches', async () => {
      const asking = host.keepAsking(app.id);
      const restarted = await host.cli(['restart', '--app', app.id]);
      await new Promise((r) => setTimeout(r, 500));
      const { sent, failed, resent } = await asking.stop();
      expect(restarted.code, restarted.stdout + restarted.stderr).toBe(0);
      expect((await host.get(app.id, '/')).json()).toMatchObject({ greeting: 'bonjour' });
      console.log(`restart under load (${engine.name}): ${sent} requests, ${failed.length} failed, ${resent} sent again after a reset`);
      expect(failed).toEqual([]);
    });

    it('rejects a push whose health check fails, with the exact lines, while the serving release answers every request', async () => {
      await host.cli(['env', 'set', 'HEALTH_STATUS', '500', '--app', app.id]);
      await host.writeFile(repo, 'CHANGED', 'a change\n');
      await host.commit(repo, 'second');
      const before = (await host.get(app.id, '/')).json<{ commit: string }>().commit;
      const asking = host.keepAsking(app.id);
      const pushed = await host.push(repo, 'runplan', key);
      const { sent, failed, resent } = await asking.stop();
      expect(pushed.code).not.toBe(0);
      for (const line of engine.failedGate.lines) expect(pushed.output).toContain(line);
      expect(pushed.output).toMatch(/\[remote rejected\] master -> master/);
      expect(pushed.output).toContain('RUNPLAN_HOST_E_DEPLOY_FAILED');
      console.log(`failing deploy under load (${engine.name}): ${sent} requests, ${failed.length} failed, ${resent} sent again after a reset`);
      expect(failed).toEqual([]);
      expect((await host.get(app.id, '/')).json<{ commit: string }>().commit).toBe(before);
      const releases = await host.json<{ releases: { number: number; status: string; errorCode: string | null }[] }>(['releases', '--app', app.id]);
      expect(releases.releases[0]).toMatchObject({ status: 'failed', errorCode: engine.failedGate.code });
    });

    it('deploys a good push under continuous requests with 0 failed, and rolls back to the earlier release', async () => {
      await host.cli(['env', 'rm', 'HEALTH_STATUS', '--app', app.id]);
      await host.cli(['env', 'set', 'RELEASE_MARK', 'two', '--app', app.id]);
      const asking = host.keepAsking(app.id);
      const started = Date.now();
      const pushed = await host.push(repo, 'runplan', key);
      const pushMs = Date.now() - started;
      await new Promise((r) => setTimeout(r, 500));
      const { sent, failed, resent, releases } = await asking.stop();
      expect(pushed.code, pushed.output).toBe(0);
      expect(pushed.output).toContain('what changed since release');
      console.log(
        `good redeploy under load (${engine.name}): push to serving ${(pushMs / 1000).toFixed(1)} s, ${sent} requests, ${failed.length} failed, ${resent} sent again after a reset, releases seen: ${[...releases].join(', ')}`,
      );
      expect(failed).toEqual([]);
      expect((await host.get(app.id, '/')).json()).toMatchObject({ release: 'two' });
      const rolled = await host.cli(['rollback', '--app', app.id]);
      expect(rolled.code, rolled.stdout + rolled.stderr).toBe(0);
      expect((await host.get(app.id, '/')).json()).toMatchObject({ release: 'one' });
    });

    it.runIf(engine.sideBySide)('runs one deploy of an application at a time: a restart during a push waits for it, and says so', async () => {
      await host.writeFile(repo, 'CHANGED', 'a third change\n');
      await host.commit(repo, 'third');
      const pushing = host.push(repo, 'runplan', key);
      // Once the push's release is recorded as deploying, a restart of the same application must wait.
      for (;;) {
        const { releases } = await host.json<{ releases: { status: string }[] }>(['releases', '--app', app.id]);
        if (releases[0]?.status === 'deploying') break;
      }
      const restarted = await host.cli(['restart', '--app', app.id]);
      const pushed = await pushing;
      expect(pushed.code, pushed.output).toBe(0);
      expect(restarted.code, restarted.stdout + restarted.stderr).toBe(0);
      expect(restarted.stdout).toContain('==> another deploy of facts is running (push by key_');
      // Right after a deploy, the next one does not wait for the replaced release's drain (only the switch is serialised),
      // and the release it replaces in turn drains beside the one still draining.
      const again = await host.cli(['restart', '--app', app.id]);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(again.stdout).not.toContain('this one waits for it');
      expect(again.stdout).toMatch(/==> release \d+ serves .* \(release \d+ drains, then stops\)/);
    });

    it("refuses a push of hostile content with runplan's own code, and keeps serving", async () => {
      const hostile = await host.repository('host/facts');
      await rm(join(hostile, 'package.json'));
      await symlink('/etc/passwd', join(hostile, 'package.json'));
      await host.commit(hostile, 'package.json is a link to a host file');
      await host.git(hostile, ['remote', 'add', 'runplan', app.gitRemote]);
      const before = (await host.get(app.id, '/')).json<{ commit: string }>().commit;
      const pushed = await host.push(hostile, 'runplan', key, '+master:master');
      expect(pushed.code).not.toBe(0);
      expect(pushed.output).toContain('RUNPLAN_E_APP_PATH_OUTSIDE');
      expect(pushed.output).not.toContain('root:x:0:0');
      expect((await host.get(app.id, '/')).json<{ commit: string }>().commit).toBe(before);
    });

    it('refuses a key of another organization, a branch other than master, a shell and a command', async () => {
      const mallory = await host.key('mallory', 'evil');
      const denied = await host.push(repo, 'runplan', mallory);
      expect(denied.code).not.toBe(0);
      expect(denied.output).toContain('RUNPLAN_HOST_E_PUSH_DENIED');
      const branch = await host.push(repo, 'runplan', key, 'master:feature');
      expect(branch.code).not.toBe(0);
      expect(branch.output).toContain('RUNPLAN_HOST_E_PUSH_BRANCH');
      expect(branch.output).toContain('master');
      for (const attempt of [await host.ssh(key, []), await host.ssh(key, ['ls', '/']), await host.ssh(key, ['git-upload-pack', `'/${app.id}.git'`])]) {
        expect(attempt.code).not.toBe(0);
        expect(attempt.output).toContain('RUNPLAN_HOST_E_SSH_COMMAND_REFUSED');
      }
    });

    let pg: { id: string } | undefined;
    const addonEnv = async (name: string) =>
      Object.fromEntries((await host.json<{ variables: { name: string; value: string }[] }>(['addon', 'env', name, '--show'])).variables.map((v) => [v.name, v.value]));

    it('links a PostgreSQL add-on: the push connects with the injected URI and the health path queries the database (fixtures/host/pg-facts)', async () => {
      await host.json(['addon', 'create', 'postgresql', 'db-main', '--org', 'acme']);
      const created = await host.json<{ id: string; gitRemote: string }>(['create', '--type', 'node', 'pgfacts', '--region', 'par', '--org', 'acme']);
      pg = created;
      const pgRepo = await host.repository('host/pg-facts');
      await host.git(pgRepo, ['remote', 'add', 'runplan', created.gitRemote]);
      expect((await host.cli(['env', 'set', 'CC_HEALTH_CHECK_PATH', '/health', '--app', created.id])).code).toBe(0);
      const linked = await host.cli(['link-addon', 'db-main', '--app', created.id]);
      expect(linked.code, linked.stderr).toBe(0);
      const pushed = await host.push(pgRepo, 'runplan', key);
      expect(pushed.code, pushed.output).toBe(0);
      expect(pushed.output).toContain('variables of addon db-main: POSTGRESQL_ADDON_DB, POSTGRESQL_ADDON_HOST');
      expect(pushed.output).toContain('Response from GET /health is 200');
      const db = await addonEnv('db-main');
      const addonHost = typeof engine.addonHost === 'string' ? engine.addonHost : expect.stringMatching(engine.addonHost);
      expect(db.POSTGRESQL_ADDON_HOST).toEqual(addonHost);
      expect(pushed.output).not.toContain(db.POSTGRESQL_ADDON_PASSWORD);
      expect((await host.get(created.id, '/')).json()).toMatchObject({
        app: 'host-pg-facts',
        linked: true,
        database: db.POSTGRESQL_ADDON_DB,
        user: db.POSTGRESQL_ADDON_USER,
        host: db.POSTGRESQL_ADDON_HOST,
        visits: 1,
      });
    });

    it('keeps every application serving while serve stops, is killed and starts again: the next serve takes each release over as it runs', async () => {
      // An operator's serve: its stop leaves the applications serving.
      expect(await host.stop()).toBe(0);
      await host.serve({ keepApps: true });
      // The processes that answer (one locally; each of a swarm's replicas, asked in turn by its proxy), by their start time.
      const startTimes = async () => {
        const seen = new Set<number>();
        for (let i = 0; i < 6; i++) seen.add((await host.get(app.id, '/')).json<{ startedAt: number }>().startedAt);
        return [...seen].sort();
      };
      const before = { ...(await host.get(app.id, '/')).json<{ commit: string }>(), startedAt: await startTimes() };
      const releases = async () => (await host.json<{ releases: unknown[] }>(['releases', '--app', app.id])).releases.length;
      const count = await releases();
      // A commit the pushes below bring while serve is down (refused), then once it is back (deployed).
      await host.writeFile(repo, 'WHILE_DOWN', 'pushed while serve is down\n');
      await host.commit(repo, 'while serve is down');
      const asking = host.keepAsking(app.id);
      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        await host.stop(signal);
        expect((await host.get(app.id, '/')).json()).toMatchObject({ commit: before.commit });
        expect(before.startedAt).toEqual(expect.arrayContaining(await startTimes()));
        // sshd stays: a push meanwhile is refused at once, with the host's code.
        const pushed = await host.push(repo, 'runplan', key);
        expect(pushed.code).not.toBe(0);
        expect(pushed.output).toContain('RUNPLAN_HOST_E_HOST_NOT_SERVING');
        await host.serve({ keepApps: true });
        expect(host.serveOutput).toMatch(/==> facts: release \d+ taken over as it runs/);
        expect(host.serveOutput).not.toContain('deployed again');
      }
      const { sent, failed } = await asking.stop();
      console.log(`serve stopped, killed and started again (${engine.name}): ${sent} requests, ${failed.length} failed`);
      expect(failed).toEqual([]);
      // The same process answers, and no release was made.
      expect(before.startedAt).toEqual(expect.arrayContaining(await startTimes()));
      expect(await releases()).toBe(count);
      // The next push after it came back deploys as ever.
      await host.writeFile(repo, 'AFTER', 'after serve came back\n');
      await host.commit(repo, 'after the restart');
      const pushed = await host.push(repo, 'runplan', key);
      expect(pushed.code, pushed.output).toBe(0);
      // Back to a serve that takes everything down with it, as the other cases expect.
      expect(await host.stop()).toBe(0);
      await host.serve();
    });

    it('brings every application back when serve starts again, its add-on data kept, and leaves nothing running when it stops', async () => {
      const serving = (await host.get(app.id, '/')).json<{ release: string; commit: string }>();
      const pid = host.servePid as number;
      expect(await host.stop()).toBe(0);
      expect(() => process.kill(pid, 0)).toThrow();
      await expect(host.get(app.id, '/')).rejects.toThrow();
      await host.serve();
      expect((await host.get(app.id, '/')).json()).toMatchObject({ app: 'host-facts', release: serving.release, commit: serving.commit });
      // The add-on's server started again on its data: the row written before serve stopped is there.
      if (pg) expect((await host.get(pg.id, '/')).json()).toMatchObject({ app: 'host-pg-facts', linked: true, visits: 2 });
      expect(host.serveOutput).not.toContain(secret);
      expect(await host.stop()).toBe(0);
      expect(await engine.leftBehind(host, app.id)).toEqual([]);
    });
  });
}
