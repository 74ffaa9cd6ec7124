import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillPlaceholders, listFixtures, prepareFixture } from '../../test/helpers/fixtures.js';
import { processesUnder } from '../../test/helpers/processes.js';
import { type Play1Mirror, standInDistributions, startPlay1Mirror } from '../../test/helpers/play1.js';
import { s3 } from './helpers/s3-client.js';
import { TestHost } from './helpers/test-host.js';

/**
 * Add-ons on a real runplan-host: a PostgreSQL add-on made in the host's own
 * cluster, linked to a Node application (fixtures/host/pg-facts) that connects with
 * the injected POSTGRESQL_ADDON_URI and reports, over HTTPS through the edge, what
 * the database itself says it is. The database is stopped (SIGSTOP) to show the
 * gate rejecting a deploy while the old release keeps serving.
 */

interface AddonView {
  id: string;
  name: string;
  org: string;
  provider: string;
  linkedTo: string[];
}
type Variables = { variables: { name: string; value: string; secret: boolean }[] };

const codeOf = (r: { stdout: string; stderr: string }) => /RUNPLAN_HOST_E_[A-Z_]+/.exec(r.stderr + r.stdout)?.[0];

describe('runplan-host add-ons', () => {
  let host: TestHost;
  let mirror: Play1Mirror;
  let key: string;
  let app: { id: string; gitRemote: string };
  let repo: string;
  const env = async (name: string) => Object.fromEntries((await host.json<Variables>(['addon', 'env', name, '--show'])).variables.map((v) => [v.name, v.value]));
  /** The PID of the cluster's postmaster (the first line of its postmaster.pid). */
  const postmaster = async () => Number((await readFile(join(host.data, 'addons', 'postgresql', 'cluster', 'postmaster.pid'), 'utf8')).split('\n')[0]);

  beforeAll(async () => {
    // Play 1.x from a mirror of stand-in distributions (no real Play can be had here), a host-level setting of serve.
    mirror = await startPlay1Mirror(await standInDistributions());
    host = await TestHost.create();
    await host.serve({ env: mirror.hostEnv() });
    key = await host.key('alice', 'acme');
    app = await host.json(['create', '--type', 'node', 'shop', '--region', 'par', '--org', 'acme']);
    repo = await host.repository('host/pg-facts');
    await host.git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
    for (const [name, value] of [
      ['CC_HEALTH_CHECK_PATH', '/health'],
      ['RELEASE_MARK', 'one'],
    ])
      expect((await host.cli(['env', 'set', name as string, value as string, '--app', app.id])).code).toBe(0);
  }, 300_000);

  afterAll(async () => {
    await host?.dispose();
    await mirror?.close();
  });

  it('creates PostgreSQL and Redis add-ons, masks their secrets, and refuses bad input with coded errors, making nothing', async () => {
    const { addon } = await host.json<{ addon: AddonView }>(['addon', 'create', 'postgresql', 'db-main', '--org', 'acme']);
    expect(addon).toMatchObject({ name: 'db-main', org: 'acme', provider: 'postgresql', linkedTo: [] });
    expect(addon.id).toMatch(/^addon_[0-9a-f-]{36}$/);
    expect(addon).not.toHaveProperty('config');
    await host.json(['addon', 'create', 'redis', 'cache', '--org', 'acme']);
    await host.json(['addon', 'create', 'postgresql', 'elsewhere', '--org', 'globex']);

    const masked = await host.json<Variables>(['addon', 'env', 'db-main']);
    expect(masked.variables.map((v) => v.name)).toEqual([
      'POSTGRESQL_ADDON_HOST',
      'POSTGRESQL_ADDON_PORT',
      'POSTGRESQL_ADDON_DB',
      'POSTGRESQL_ADDON_USER',
      'POSTGRESQL_ADDON_PASSWORD',
      'POSTGRESQL_ADDON_URI',
    ]);
    expect(masked.variables.filter((v) => v.value === '***').map((v) => v.name)).toEqual(['POSTGRESQL_ADDON_PASSWORD', 'POSTGRESQL_ADDON_URI']);
    const shown = await env('db-main');
    expect(shown.POSTGRESQL_ADDON_PASSWORD).toMatch(/^[0-9a-f]{48}$/);
    const redis = await host.json<Variables>(['addon', 'env', 'cache']);
    expect(redis.variables.find((v) => v.name === 'REDIS_PASSWORD')?.value).toBe('***');

    const refused = await Promise.all([
      host.cli(['addon', 'create', 'mongodb', 'docs', '--org', 'acme']),
      host.cli(['addon', 'create', 'postgresql', 'db-main', '--org', 'acme']),
      host.cli(['addon', 'create', 'postgresql', 'Bad_Name', '--org', 'acme']),
      host.cli(['addon', 'rm', 'nothing-here']),
      host.cli(['link-addon', 'elsewhere', '--app', app.id]),
    ]);
    expect(refused.map((r) => r.code)).toEqual([2, 2, 2, 2, 2]);
    expect(refused.map(codeOf)).toEqual([
      'RUNPLAN_HOST_E_ADDON_PROVIDER_UNKNOWN',
      'RUNPLAN_HOST_E_ADDON_NAME_TAKEN',
      'RUNPLAN_HOST_E_INPUT_ADDON_NAME',
      'RUNPLAN_HOST_E_ADDON_NOT_FOUND',
      'RUNPLAN_HOST_E_ADDON_ORG_MISMATCH',
    ]);
    const { addons } = await host.json<{ addons: AddonView[] }>(['addons']);
    expect(addons.map((a) => `${a.org}/${a.name}`).sort()).toEqual(['acme/cache', 'acme/db-main', 'globex/elsewhere']);
  });

  it('links before the first deploy; the push connects with the injected URI and the health path queries the database', async () => {
    const linked = await host.cli(['link-addon', 'db-main', '--app', app.id]);
    expect(linked.code, linked.stderr).toBe(0);
    expect(linked.stdout).toContain('has never been deployed');
    const pushed = await host.push(repo, 'runplan', key);
    expect(pushed.code, pushed.output).toBe(0);
    expect(pushed.output).toContain('variables of addon db-main: POSTGRESQL_ADDON_DB, POSTGRESQL_ADDON_HOST');
    expect(pushed.output).toContain('Response from GET /health is 200');
    const db = await env('db-main');
    expect(pushed.output).not.toContain(db.POSTGRESQL_ADDON_PASSWORD);
    const facts = (await host.get(app.id, '/')).json<Record<string, unknown>>();
    expect(facts).toMatchObject({ app: 'host-pg-facts', linked: true, database: db.POSTGRESQL_ADDON_DB, user: db.POSTGRESQL_ADDON_USER, visits: 1 });
    const { releases } = await host.json<{ releases: { number: number; links: string[] }[] }>(['releases', '--app', app.id]);
    expect(releases[0]).toMatchObject({ number: 1, links: ['db-main'] });
  });

  it('refuses to remove a linked add-on (exit 1, a conflict, not bad input), naming it as typed and the application, with the exact command that unlinks it', async () => {
    const r = await host.cli(['addon', 'rm', 'db-main']);
    expect(r.code).toBe(1);
    expect(codeOf(r)).toBe('RUNPLAN_HOST_E_ADDON_LINKED');
    expect(r.stderr).toContain('the add-on db-main is linked to shop');
    expect(r.stderr).toContain('fix: Unlink it first, then remove it: runplan-host unlink-addon db-main --app shop.');
    expect(r.stderr).not.toMatch(/<name>|<app>|addon_[0-9a-f]/);
  });

  it('with the database stopped, a push is rejected by the gate and the old release keeps serving', async () => {
    await host.cli(['env', 'set', 'RELEASE_MARK', 'two', '--app', app.id]);
    await host.commit(repo, 'second');
    const pid = await postmaster();
    process.kill(pid, 'SIGSTOP');
    let pushed: { code: number; output: string };
    try {
      pushed = await host.push(repo, 'runplan', key);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(pushed.code, pushed.output).not.toBe(0);
    expect(pushed.output).toContain('[remote rejected]');
    expect(pushed.output).toMatch(/Response from GET \/health is 503/);
    expect(pushed.output).toContain('release 1 never stopped serving');
    expect((await host.get(app.id, '/about')).json()).toMatchObject({ release: 'one', linked: true });
  });

  it('a second linked PostgreSQL shadows the first, said on the push; unlinking makes a release back on the first, its data kept', async () => {
    await host.json(['addon', 'create', 'postgresql', 'db-new', '--org', 'acme']);
    const linked = await host.cli(['link-addon', 'db-new', '--app', app.id]);
    expect(linked.code, linked.stdout + linked.stderr).toBe(0);
    expect(linked.stdout).toContain('warning: POSTGRESQL_ADDON_URI of addon db-main is hidden by addon db-new');
    const dbNew = await env('db-new');
    expect((await host.get(app.id, '/')).json()).toMatchObject({ release: 'two', database: dbNew.POSTGRESQL_ADDON_DB, visits: 1 });

    const unlinked = await host.cli(['unlink-addon', 'db-new', '--app', app.id]);
    expect(unlinked.code, unlinked.stdout + unlinked.stderr).toBe(0);
    const db = await env('db-main');
    // Two visits on db-main: release 1's, and this one.
    expect((await host.get(app.id, '/')).json()).toMatchObject({ database: db.POSTGRESQL_ADDON_DB, visits: 2 });
    expect((await host.cli(['addon', 'rm', 'db-new'])).code).toBe(0);
    const { addons } = await host.json<{ addons: AddonView[] }>(['addons', '--org', 'acme']);
    expect(addons.map((a) => a.name)).toEqual(['cache', 'db-main']);
  });

  it("resolves a Play 1.x application's %platform.db.url, .user and .pass to the linked database (the fixture's expect.json)", async () => {
    const play: { id: string; gitRemote: string } = await host.json(['create', '--type', 'play1', 'catalog', '--region', 'par', '--org', 'acme']);
    const playRepo = await host.repository('host/play-db');
    await host.git(playRepo, ['remote', 'add', 'runplan', play.gitRemote]);
    expect((await host.cli(['link-addon', 'db-main', '--app', play.id])).code).toBe(0);
    const pushed = await host.push(playRepo, 'runplan', key);
    expect(pushed.code, pushed.output).toBe(0);
    const db = await env('db-main');
    expect(pushed.output).not.toContain(db.POSTGRESQL_ADDON_PASSWORD);
    const expected = JSON.parse(await readFile(join(playRepo, 'expect.json'), 'utf8')) as { requests: { path: string; status: number; json: unknown }[] };
    for (const r of fillPlaceholders(expected.requests, db)) {
      const answer = await host.get(play.id, r.path);
      expect(answer.status).toBe(r.status);
      expect(answer.json()).toMatchObject(r.json as Record<string, unknown>);
    }
  });

  it('runs a Rails app with Sidekiq on a linked Redis add-on: a job enqueued over HTTP is processed by the Sidekiq process (fixtures/ruby/rails-sidekiq)', async () => {
    const fixture = listFixtures('ruby').find((f) => f.name === 'rails-sidekiq');
    if (!fixture) throw new Error('no fixture ruby/rails-sidekiq');
    const prepared = await prepareFixture(fixture);
    const rails: { id: string; gitRemote: string } = await host.json(['create', '--type', 'ruby', 'jobs', '--region', 'par', '--org', 'acme']);
    const railsRepo = await host.repository(prepared.dir);
    await host.git(railsRepo, ['remote', 'add', 'runplan', rails.gitRemote]);
    // The fixture's own variables; REDIS_URL comes from the link, not from a Redis the test started.
    for (const [name, value] of Object.entries(prepared.expect.env ?? {})) expect((await host.cli(['env', 'set', name, value, '--app', rails.id])).code).toBe(0);
    expect((await host.cli(['link-addon', 'cache', '--app', rails.id])).code).toBe(0);
    const pushed = await host.push(railsRepo, 'runplan', key);
    expect(pushed.code, pushed.output).toBe(0);
    expect(pushed.output).toContain('variables of addon cache: REDIS_HOST, REDIS_PASSWORD, REDIS_PORT, REDIS_URL');
    expect(pushed.output).toContain('started sidekiq (pid');
    expect(pushed.output).not.toContain((await env('cache')).REDIS_PASSWORD);
    expect((await host.get(rails.id, '/jobs/roundtrip')).json()).toMatchObject({ processed: true, byAnotherProcess: true });
  });

  it("stores a Rails app's uploads in a linked storage add-on with Active Storage, exactly the specification's recipe (fixtures/host/rails-storage)", async () => {
    const fixture = listFixtures('host').find((f) => f.name === 'rails-storage');
    if (!fixture) throw new Error('no fixture host/rails-storage');
    const prepared = await prepareFixture(fixture);
    await host.json(['addon', 'create', 'storage', 'files', '--org', 'acme']);
    await host.json(['addon', 'create', 'postgresql', 'rails-db', '--org', 'acme']);
    const storage = await env('files');
    // The customer makes the bucket with any S3 client, as the recipe says.
    expect(await s3(storage, 'PUT', '/uploads')).toMatchObject({ status: 200 });
    const rails: { id: string; gitRemote: string } = await host.json(['create', '--type', 'ruby', 'uploads', '--region', 'par', '--org', 'acme']);
    const railsRepo = await host.repository(prepared.dir);
    await host.git(railsRepo, ['remote', 'add', 'runplan', rails.gitRemote]);
    for (const [name, value] of Object.entries(fillPlaceholders(prepared.expect.env ?? {}, storage))) {
      const set = await host.cli(['env', 'set', name, value, '--app', rails.id]);
      expect(set.code, set.stderr).toBe(0);
    }
    for (const addon of ['files', 'rails-db']) expect((await host.cli(['link-addon', addon, '--app', rails.id])).code).toBe(0);
    const pushed = await host.push(railsRepo, 'runplan', key);
    expect(pushed.code, pushed.output).toBe(0);
    expect(pushed.output).toContain('variables of addon files: STORAGE_ADDON_HOST, STORAGE_ADDON_KEY_ID, STORAGE_ADDON_KEY_SECRET');
    expect(pushed.output).not.toContain(storage.STORAGE_ADDON_KEY_SECRET);

    const uploaded = await host.get(rails.id, '/files?name=hello.txt', { method: 'POST', body: 'stored through Active Storage', headers: { 'content-type': 'text/plain' } });
    expect(uploaded.status, uploaded.body).toBe(200);
    const blob = uploaded.json<{ key: string; service: string; bucket: string; bytes: number }>();
    expect(blob).toMatchObject({ service: 'platform', bucket: 'uploads', bytes: 29 });
    expect(await host.get(rails.id, `/files/${blob.key}`)).toMatchObject({ status: 200, body: 'stored through Active Storage' });
    // In the storage add-on's bucket, under the blob's key, read with the add-on's own key pair.
    expect(await s3(storage, 'GET', `/uploads/${blob.key}`)).toEqual({ status: 200, body: 'stored through Active Storage' });
  });

  it('links two applications: the linked one receives what the other exposes, and loses it at the release after unlinking', async () => {
    const front: { id: string; gitRemote: string } = await host.json(['create', '--type', 'node', 'front', '--region', 'par', '--org', 'acme']);
    await host.json(['create', '--type', 'node', 'other-org-app', '--region', 'par', '--org', 'globex']);
    const frontRepo = await host.repository('host/facts');
    await host.git(frontRepo, ['remote', 'add', 'runplan', front.gitRemote]);
    expect((await host.cli(['expose', 'set', 'GREETING', 'hello from shop', '--app', app.id])).code).toBe(0);
    expect((await host.cli(['expose', 'set', 'DATABASE_URL', 'postgresql://u:exposed-secret@db/x', '--app', app.id])).code).toBe(0);
    const exposed = await host.json<{ variables: { name: string; value: string }[] }>(['expose', '--app', app.id]);
    expect(exposed.variables.find((v) => v.name === 'DATABASE_URL')?.value).toBe('***');
    const crossed = await host.cli(['link', 'other-org-app', '--app', front.id]);
    expect([crossed.code, codeOf(crossed)]).toEqual([2, 'RUNPLAN_HOST_E_LINK_ORG_MISMATCH']);
    expect((await host.cli(['link', 'shop', '--app', front.id])).code).toBe(0);

    const pushed = await host.push(frontRepo, 'runplan', key);
    expect(pushed.code, pushed.output).toBe(0);
    expect(pushed.output).toContain('variables of application shop: DATABASE_URL, GREETING');
    expect(pushed.output).not.toContain('exposed-secret');
    const facts = (await host.get(front.id, '/')).json<Record<string, unknown>>();
    expect(facts).toMatchObject({ greeting: 'hello from shop', databaseUrlSha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // What shop exposes is not shop's own environment.
    expect((await host.get(app.id, '/about')).json()).toMatchObject({ app: 'host-pg-facts' });

    const unlinked = await host.cli(['unlink', 'shop', '--app', front.id]);
    expect(unlinked.code, unlinked.stdout + unlinked.stderr).toBe(0);
    expect((await host.get(front.id, '/')).json()).toMatchObject({ greeting: null, databaseUrlSha256: null });
  });

  it('serve stops every add-on server it started and starts them again; the app comes back on its database with its data', async () => {
    const before = await postmaster();
    expect(await host.stop()).toBe(0);
    expect(() => process.kill(before, 0)).toThrow();
    // Nothing of the data folder runs any more: no database, Redis or storage server, no release.
    expect(processesUnder(host.data)).toEqual([]);
    await host.serve({ env: mirror.hostEnv() });
    expect(await postmaster()).not.toBe(before);
    expect((await host.get(app.id, '/')).json()).toMatchObject({ linked: true, visits: 3 });
  });
});
