import { stat } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostPaths } from '../src/paths.js';
import { openPostgresStore } from '../src/store/postgres-store.js';
import { type StoreServer, startStoreServer } from './helpers/store-server.js';
import { TestHost } from './helpers/test-host.js';

/**
 * runplan-host keeping its state in PostgreSQL (issue 28): a host made with
 * `init --store postgres://…` takes a push and serves it, and a host on SQLite
 * moves there with `migrate-store`. The server is a cluster of Debian's
 * PostgreSQL made for this file; each host gets a database of its own.
 */
let server: StoreServer;
const hosts: TestHost[] = [];

const newDatabase = () => server.newDatabase('h');

beforeAll(async () => {
  server = await startStoreServer('runplan-host-pg-');
}, 120_000);

afterAll(async () => {
  for (const host of hosts) await host.dispose();
  await server?.stop();
});

describe('runplan-host on a PostgreSQL store', () => {
  it('made with init --store: deploys a git push through the gate, and keeps the application and its release in PostgreSQL', async () => {
    const url = await newDatabase();
    const host = await TestHost.create({ initArgs: ['--store', url] });
    hosts.push(host);
    const paths = hostPaths(host.data);
    // The URL holds the password: root's alone.
    expect((await stat(paths.storeUrl)).mode & 0o777).toBe(0o600);
    await host.serve();
    const key = await host.key('alice', 'acme');
    const app = await host.json<{ id: string; gitRemote: string }>(['create', '--type', 'node', 'facts', '--region', 'par', '--org', 'acme']);
    const repo = await host.repository('host/facts');
    await host.git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
    const pushed = await host.push(repo, 'runplan', key);
    expect(pushed.code, pushed.output).toBe(0);
    expect((await host.get(app.id, '/')).json<{ app: string }>().app).toBe('host-facts');

    const store = await openPostgresStore(url);
    try {
      expect((await store.findApp(app.id))?.currentRelease).toBe(1);
      expect((await store.listReleases(app.id)).map((r) => [r.number, r.status])).toEqual([[1, 'succeeded']]);
      expect((await store.releaseLog(app.id, 1)).join('\n')).toContain('==> release 1 serves');
    } finally {
      await store.close();
    }
    // init does not move a host to another store.
    const moved = await host.cli(['init', '--store', 'sqlite']);
    expect(moved.code).toBe(2);
    expect(moved.stderr).toContain('RUNPLAN_HOST_E_INPUT_USAGE');
    expect(moved.stderr).toContain('migrate-store');
    expect(`${moved.stdout}${moved.stderr}`).not.toContain(server.password);
  }, 300_000);

  it('runs one deploy of an application at a time across two serves sharing the store: pushed to both at once, one waits and says so', async () => {
    const url = await newDatabase();
    const [a, b] = [await TestHost.create({ initArgs: ['--store', url] }), await TestHost.create({ initArgs: ['--store', url] })];
    hosts.push(a, b);
    await a.serve();
    const key = await a.key('carol', 'acme');
    const app = await a.json<{ id: string; gitRemote: string }>(['create', '--type', 'node', 'facts', '--region', 'par', '--org', 'acme']);
    // The second host finds the application and the key in the shared store when it starts.
    await b.serve();
    const repo = await a.repository('host/facts');
    const remoteOf = (host: TestHost) => app.gitRemote.replace(`${a.sshUser}@127.0.0.1:${a.ports.ssh}`, `${host.sshUser}@127.0.0.1:${host.ports.ssh}`);
    await a.git(repo, ['remote', 'add', 'a', remoteOf(a)]);
    await a.git(repo, ['remote', 'add', 'b', remoteOf(b)]);
    const [toA, toB] = await Promise.all([a.push(repo, 'a', key), b.push(repo, 'b', key)]);
    expect(toA.code, toA.output).toBe(0);
    expect(toB.code, toB.output).toBe(0);
    const waited = [toA, toB].filter((p) => p.output.includes('another runplan-host on this store is deploying facts: this one waits for it'));
    expect(waited).toHaveLength(1);
    // One after the other: release 1 ended before release 2 began.
    const store = await openPostgresStore(url);
    try {
      const [second, first] = await store.listReleases(app.id);
      expect([first?.number, first?.status, second?.number, second?.status]).toEqual([1, 'succeeded', 2, 'succeeded']);
      expect(Date.parse(second?.startedAt as string)).toBeGreaterThanOrEqual(Date.parse(first?.finishedAt as string));
    } finally {
      await store.close();
    }
    for (const host of [a, b]) expect((await host.get(app.id, '/')).status).toBe(200);
  }, 300_000);

  it('moves a host from SQLite with migrate-store: refused while it serves, then every record is read back from PostgreSQL', async () => {
    const host = await TestHost.create();
    hosts.push(host);
    await host.serve();
    await host.key('bob', 'acme');
    const app = await host.json<{ id: string }>(['create', '--type', 'ruby', 'shop', '--region', 'mtl', '--org', 'acme']);
    expect((await host.cli(['env', 'set', 'GREETING', 'héllo', '--app', app.id])).code).toBe(0);
    expect((await host.cli(['build-instance', 'dedicated', '--app', app.id])).code).toBe(0);
    const url = await newDatabase();
    const refused = await host.cli(['migrate-store', '--to', url]);
    expect(refused.stderr).toContain('RUNPLAN_HOST_E_HOST_ALREADY_SERVING');
    await host.stop();

    const migrated = await host.cli(['migrate-store', '--to', url, '--json']);
    expect(migrated.code, migrated.stderr).toBe(0);
    const report = JSON.parse(migrated.stdout) as { store: string; tables: { table: string; rows: number; checksum: string }[] };
    expect(report.store).not.toContain(server.password);
    expect(Object.fromEntries(report.tables.map((t) => [t.table, t.rows]))).toMatchObject({ orgs: 1, apps: 1, variables: 1, ssh_keys: 1, releases: 0 });

    await host.serve();
    const shown = await host.json<{ variables: { name: string; value: string }[] }>(['env', '--app', app.id]);
    expect(shown.variables).toEqual([expect.objectContaining({ name: 'GREETING', value: 'héllo' })]);
    expect(await host.json<{ dedicatedBuildInstance: boolean }>(['build-instance', '--app', app.id])).toEqual({ dedicatedBuildInstance: true });
    // What serve changes now is in PostgreSQL.
    expect((await host.cli(['env', 'set', 'SECOND', 'yes', '--app', app.id])).code).toBe(0);
    const store = await openPostgresStore(url);
    try {
      expect(await store.variables(app.id)).toEqual({ GREETING: 'héllo', SECOND: 'yes' });
    } finally {
      await store.close();
    }
    const again = await host.cli(['migrate-store', '--to', url]);
    expect(again.stderr).toContain('in PostgreSQL already');
  }, 300_000);
});
