import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../test/helpers/ports.js';
import { tempDir } from '../../test/helpers/temp.js';
import { HostErrors } from '../src/errors.js';
import { latestVersion, migrations } from '../src/store/migrations.js';
import { migrateStore } from '../src/store/migrate-store.js';
import { openPostgresStore, type PostgresStore } from '../src/store/postgres-store.js';
import { openSqliteStore } from '../src/store/sqlite-store.js';
import type { AppRecord, HostStore } from '../src/store/store.js';
import { type StoreServer, startStoreServer } from './helpers/store-server.js';
import { describeHostStore, ManualClock } from './store-contract.js';

/**
 * The PostgreSQL store against a real server: a cluster of Debian's PostgreSQL made for this file by the
 * add-on provider's code (it finds the installed major, runs initdb and the server as the postgres account,
 * waits with pg_isready, and stops the server by its PID, waiting for it to exit), and a new database per test.
 * The store connects over TCP with a password, as a host given a postgres:// URL would.
 */

let server: StoreServer;

beforeAll(async () => {
  server = await startStoreServer('runplan-host-pgstore-');
});

afterAll(async () => {
  await server?.stop();
});

/**
 * A new, empty database the store's role owns, and its URL. Its default order is not byte order (ICU's
 * English with punctuation ignored, like many a production database's locale): the store must still list
 * as SQLite does.
 */
function newDatabase(): Promise<string> {
  return server.newDatabase('t', "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US-u-ka-shifted'");
}

/** What the store's role sees in that database, outside any store. */
async function inDatabase<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

describeHostStore('PostgreSQL', async ({ clock }) => openPostgresStore(await newDatabase(), { clock }));

describe('PostgresStore', () => {
  const opened: PostgresStore[] = [];
  async function openAt(url: string, clock = new ManualClock()): Promise<PostgresStore> {
    const store = await openPostgresStore(url, { clock });
    opened.push(store);
    return store;
  }
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  it('brings an empty database to the latest version once when two stores open it at once', async () => {
    const url = await newDatabase();
    const [a, b] = await Promise.all([openAt(url), openAt(url)]);
    const versions = await inDatabase<{ version: number }>(url, 'SELECT version FROM schema_migrations ORDER BY version');
    expect(versions.map((v) => v.version)).toEqual(migrations.map((m) => m.version));
    expect(versions.at(-1)?.version).toBe(latestVersion);
    // Both work on the one schema.
    const web = await a.createApp({ name: 'web', org: 'orga_a', zone: 'par', type: 'node' });
    expect(await b.findApp('web')).toEqual(web);
  });

  it('gives 10 releases begun at once, through two stores on one database, the numbers 1 to 10', async () => {
    const url = await newDatabase();
    const [a, b] = [await openAt(url), await openAt(url)];
    const web = await a.createApp({ name: 'web', org: 'orga_a', zone: 'par', type: 'node' });
    const begun = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).beginRelease({ appId: web.id, cause: 'push', commit: 'a'.repeat(40), by: 'cli', variables: {} })));
    expect(begun.map((r) => r.number).sort((x, y) => x - y)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
  });

  it('keeps everything across close and reopen, and goes on numbering', async () => {
    const url = await newDatabase();
    const first = await openAt(url);
    const web = await first.createApp({ name: 'web', org: 'orga_a', zone: 'par', type: 'node' });
    await first.beginRelease({ appId: web.id, cause: 'push', commit: 'a'.repeat(40), by: 'cli', variables: { A: '1' } });
    await first.finishRelease(web.id, 1, { status: 'succeeded', port: 40000, plan: { a: [1] }, planDigest: 'sha256:d' });
    await first.appendLog(web.id, 1, ['one', 'two']);
    await first.close();

    const again = await openAt(url);
    expect(await again.findApp('web')).toEqual({ ...web, currentRelease: 1 });
    expect(await again.release(web.id, 1)).toMatchObject({ status: 'succeeded', variables: { A: '1' }, plan: { a: [1] }, port: 40000 });
    expect(await again.releaseLog(web.id, 1)).toEqual(['one', 'two']);
    expect((await again.beginRelease({ appId: web.id, cause: 'restart', commit: 'a'.repeat(40), by: 'cli', variables: {} })).number).toBe(2);
  });

  it('refuses a database made by a newer version, and leaves its schema alone', async () => {
    const url = await newDatabase();
    await inDatabase(
      url,
      `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL); INSERT INTO schema_migrations VALUES (${latestVersion + 7}, '2027-01-01T00:00:00.000Z')`,
    );
    const refused = openPostgresStore(url);
    await expect(refused).rejects.toMatchObject({
      code: HostErrors.STORE_NEWER.code,
      message: expect.stringContaining(`version ${latestVersion + 7}`),
      details: { unknownVersions: [latestVersion + 7], latestVersion },
    });
    expect(await inDatabase(url, "SELECT to_regclass('apps') AS apps")).toEqual([{ apps: null }]);
  });

  it("holds an application's deploy lock across stores on one database, until released or its holder's connection ends", async () => {
    const url = await newDatabase();
    const [a, b] = await Promise.all([openAt(url), openAt(url)]);
    const app = await a.createApp({ name: 'web', org: 'orga_acme', zone: 'par', type: 'node' });
    const held = await a.lockApp(app.id, () => {
      throw new Error('the first lock does not wait');
    });
    // Another application is not held up.
    await (await b.lockApp('app_other', () => {})).release();
    let waited = 0;
    let acquired = false;
    const second = b.lockApp(app.id, () => {
      waited += 1;
    });
    void second.then(() => {
      acquired = true;
    });
    await expect.poll(() => waited).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(acquired).toBe(false);
    await held.release();
    await (await second).release();
    expect(acquired).toBe(true);
    // A holder that dies: its connection ends, and the lock with it.
    const dying = await a.lockApp(app.id, () => {});
    const third = b.lockApp(app.id, () => {});
    await inDatabase(url, "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()");
    await (await third).release();
    await dying.release();
  });

  it('refuses a server that does not answer and a wrong password, naming the URL without its password', async () => {
    const nobody = `postgres://${server.role}:${server.password}@127.0.0.1:${await freePort()}/postgres`;
    const wrong = (await newDatabase()).replace(server.password, 'not-the-password');
    for (const url of [nobody, wrong]) {
      const error = await openPostgresStore(url).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        code: HostErrors.STORE_OPEN_FAILED.code,
        message: expect.stringContaining(`${server.role}:xxxxx@127.0.0.1`),
        details: { store: expect.stringContaining('xxxxx') },
      });
      const { message, details } = error as { message: string; details: unknown };
      for (const password of [server.password, 'not-the-password']) expect(`${message} ${JSON.stringify(details)}`).not.toContain(password);
    }
  });
});

/** A table as both databases describe it: its columns in order, its keys and foreign keys (those two in a fixed order). */
interface TableShape {
  columns: Array<{ name: string; type: string; notNull: boolean }>;
  primaryKey: string[];
  unique: string[][];
  foreignKeys: Array<{ columns: string[]; references: string; to: string[]; onDelete: string }>;
}

/** The table's unique keys and foreign keys in one order, whatever order the database lists them in. */
function ordered(shape: TableShape): TableShape {
  const byColumns = (a: string[], b: string[]) => a.join().localeCompare(b.join());
  return { ...shape, unique: [...shape.unique].sort(byColumns), foreignKeys: [...shape.foreignKeys].sort((a, b) => byColumns(a.columns, b.columns)) };
}

function sqliteSchema(file: string): Record<string, TableShape> {
  const db = new Database(file, { readonly: true });
  try {
    const all = <R>(sql: string, ...params: unknown[]) => db.prepare(sql).all(...params) as R[];
    const tables = all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").map((t) => t.name);
    return Object.fromEntries(
      tables.map((table) => {
        const columns = all<{ name: string; type: string; notnull: number; pk: number }>('SELECT * FROM pragma_table_info(?) ORDER BY cid', table);
        const unique = all<{ name: string }>("SELECT name FROM pragma_index_list(?) WHERE origin = 'u' ORDER BY name", table).map((i) =>
          all<{ name: string }>('SELECT name FROM pragma_index_info(?) ORDER BY seqno', i.name).map((c) => c.name),
        );
        const keys = all<{ id: number; table: string; from: string; to: string; on_delete: string }>('SELECT * FROM pragma_foreign_key_list(?) ORDER BY id, seq', table);
        const foreignKeys = [...new Set(keys.map((k) => k.id))].map((id) => {
          const parts = keys.filter((k) => k.id === id);
          return { columns: parts.map((k) => k.from), references: parts[0]?.table ?? '', to: parts.map((k) => k.to), onDelete: parts[0]?.on_delete ?? '' };
        });
        const shape: TableShape = {
          // A key's column is NOT NULL in PostgreSQL; SQLite lets a TEXT one be null unless it says so, but the stores never write one.
          columns: columns.map((c) => ({ name: c.name, type: c.type.toLowerCase(), notNull: c.notnull === 1 || c.pk > 0 })),
          primaryKey: columns
            .filter((c) => c.pk > 0)
            .sort((a, b) => a.pk - b.pk)
            .map((c) => c.name),
          unique,
          foreignKeys,
        };
        return [table, ordered(shape)];
      }),
    );
  } finally {
    db.close();
  }
}

async function postgresSchema(url: string): Promise<Record<string, TableShape>> {
  const tables = (await inDatabase<{ name: string }>(url, 'SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename')).map((t) => t.name);
  const columns = await inDatabase<{ table: string; name: string; type: string; notnull: boolean }>(
    url,
    `SELECT c.relname AS table, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
  );
  // Each constraint's columns in its own order, and for a foreign key the referenced table's, in the same order.
  const constraints = await inDatabase<{ table: string; type: string; columns: string[]; references: string | null; to: string[] | null; on_delete: string }>(
    url,
    `SELECT c.relname AS table, k.contype AS type, k.confdeltype AS on_delete, r.relname AS references,
       (SELECT array_agg(a.attname::text ORDER BY u.i) FROM unnest(k.conkey) WITH ORDINALITY AS u(n, i) JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n) AS columns,
       (SELECT array_agg(a.attname::text ORDER BY u.i) FROM unnest(k.confkey) WITH ORDINALITY AS u(n, i) JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n) AS to
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid LEFT JOIN pg_class r ON r.oid = k.confrelid
     WHERE c.relnamespace = current_schema()::regnamespace AND k.contype IN ('p', 'u', 'f') ORDER BY k.conname`,
  );
  const ON_DELETE: Record<string, string> = { a: 'NO ACTION', c: 'CASCADE', r: 'RESTRICT', n: 'SET NULL', d: 'SET DEFAULT' };
  return Object.fromEntries(
    tables.map((table) => {
      const of = constraints.filter((k) => k.table === table);
      const shape: TableShape = {
        columns: columns.filter((c) => c.table === table).map((c) => ({ name: c.name, type: c.type, notNull: c.notnull })),
        primaryKey: of.find((k) => k.type === 'p')?.columns ?? [],
        unique: of.filter((k) => k.type === 'u').map((k) => k.columns),
        foreignKeys: of.filter((k) => k.type === 'f').map((k) => ({ columns: k.columns, references: k.references ?? '', to: k.to ?? [], onDelete: ON_DELETE[k.on_delete] ?? k.on_delete })),
      };
      return [table, ordered(shape)];
    }),
  );
}

describe('one schema in two dialects (migrations.ts)', () => {
  it('gives SQLite and PostgreSQL the same tables, columns, keys and foreign keys, but for what each dialect writes its own way', async () => {
    const file = join(await tempDir('runplan-host-schema-'), 'store.sqlite');
    await (await openSqliteStore(file)).close();
    const url = await newDatabase();
    await (await openPostgresStore(url)).close();
    const sqlite = sqliteSchema(file);
    const postgres = await postgresSchema(url);

    // What each dialect writes its own way (migrations.ts, Dialect): a yes/no column is PostgreSQL's boolean and SQLite's
    // 0 or 1; the order keys were added in is SQLite's rowid and a column of PostgreSQL's.
    const TYPES: Record<string, string> = { text: 'text', integer: 'integer', boolean: 'integer' };
    const POSTGRES_ONLY = [{ table: 'ssh_keys', column: 'added_order', type: 'bigint' }];
    const asSqlite = Object.fromEntries(
      Object.entries(postgres).map(([table, shape]) => {
        const columns = shape.columns.filter((c) => !POSTGRES_ONLY.some((o) => o.table === table && o.column === c.name));
        return [table, { ...shape, columns: columns.map((c) => ({ ...c, type: TYPES[c.type] ?? c.type })) }];
      }),
    );
    expect(asSqlite).toEqual(sqlite);
    for (const only of POSTGRES_ONLY) expect(postgres[only.table]?.columns.find((c) => c.name === only.column)).toEqual({ name: only.column, type: only.type, notNull: true });
    expect(Object.keys(sqlite)).toEqual([
      'addon_links',
      'addons',
      'app_domains',
      'app_links',
      'app_users',
      'apps',
      'exposed_variables',
      'orgs',
      'release_logs',
      'releases',
      'schema_migrations',
      'ssh_keys',
      'variables',
    ]);
    expect(sqlite.apps?.foreignKeys).toContainEqual({ columns: ['id', 'current_release'], references: 'releases', to: ['app_id', 'number'], onDelete: 'NO ACTION' });

    // Both record the same versions: a store reports one schema version whichever database holds it.
    const versions = (await inDatabase<{ version: number }>(url, 'SELECT version FROM schema_migrations ORDER BY version')).map((v) => v.version);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all()).toEqual(versions);
    } finally {
      db.close();
    }
    expect(versions).toEqual(migrations.map((m) => m.version));
  });
});

describe('migrateStore (runplan-host migrate-store)', () => {
  /** An SQLite store holding a row in every table, with the cases a copy gets wrong: keys added in one millisecond, a release serving, unicode, a boolean. */
  async function filledSqliteStore(): Promise<string> {
    const file = join(await tempDir('runplan-host-migrate-'), 'store.sqlite');
    const clock = new ManualClock();
    const store = await openSqliteStore(file, { clock });
    const web = await store.createApp({ name: 'web', org: 'orga_acme', zone: 'par', type: 'node' });
    const api = await store.createApp({ name: 'api', org: 'orga_acme', zone: 'mtl', type: 'ruby' });
    await store.createApp({ name: 'web', org: 'orga_other', zone: 'par', type: 'play1' });
    await store.setDedicatedBuildInstance(api.id, true);
    await store.changeVariables(web.id, { GREETING: 'héllo ✓', API_TOKEN: 's3cr3t' }, []);
    await store.changeVariables(api.id, { SHARED_URL: 'https://api' }, [], 'exposed');
    for (const body of ['AAAAC3NzaC1lZDI1NTE5AAAAIBBB', 'AAAAC3NzaC1lZDI1NTE5AAAAIAAA', 'AAAAC3NzaC1lZDI1NTE5AAAAICCC']) {
      await store.addKey({ org: 'orga_acme', publicKey: `ssh-ed25519 ${body}`, fingerprint: `SHA256:${body}`, comment: 'dev' });
    }
    const first = await store.beginRelease({ appId: web.id, cause: 'push', commit: 'a'.repeat(40), by: 'key_0123456789ab', variables: { GREETING: 'héllo ✓' }, links: ['db'] });
    await store.appendLog(web.id, first.number, ['==> step install', 'línea ✓', '']);
    await store.finishRelease(web.id, first.number, { status: 'succeeded', plan: { schemaVersion: 2 }, planDigest: 'sha256:abc', port: 34567 });
    const second = await store.beginRelease({ appId: web.id, cause: 'restart', commit: 'a'.repeat(40), by: 'cli', variables: {} });
    await store.finishRelease(web.id, second.number, { status: 'failed', errorCode: 'RUNPLAN_E_HEALTH_CHECK_FAILED' });
    const db = await store.createAddon({ name: 'db', org: 'orga_acme', provider: 'postgresql', zone: 'par', config: { password: 'p@ss' } });
    await store.linkAddon(web.id, db.id);
    await store.linkApp(web.id, api.id);
    await store.recordAppUser({ uid: 800_001, appId: web.id, name: 'app_0123456789abcdef0123456789ab' });
    await store.addDomain(web.id, 'shop.example.com');
    await store.close();
    return file;
  }

  /** Everything a host reads from a store, through the store interface. */
  async function contents(store: HostStore): Promise<unknown> {
    const apps = await store.listApps();
    return {
      apps,
      keys: await store.listKeys(),
      addons: await store.listAddons(),
      perApp: await Promise.all(
        apps.map(async (a) => ({
          own: await store.variables(a.id),
          exposed: await store.variables(a.id, 'exposed'),
          releases: await store.listReleases(a.id),
          logs: await Promise.all((await store.listReleases(a.id)).map((r) => store.releaseLog(a.id, r.number))),
          addons: await store.linksOf(a.id),
          links: await store.appLinksOf(a.id),
          user: await store.appUser(a.id),
        })),
      ),
      domains: await store.listDomains(),
    };
  }

  it('copies every table into an empty PostgreSQL database, with counts and checksums that match, and the host reads the same there', async () => {
    const file = await filledSqliteStore();
    const url = await newDatabase();
    const copies = await migrateStore(file, url);
    expect(Object.fromEntries(copies.map((c) => [c.table, c.rows]))).toEqual({
      orgs: 2,
      apps: 3,
      variables: 2,
      exposed_variables: 1,
      ssh_keys: 3,
      releases: 2,
      release_logs: 3,
      addons: 1,
      addon_links: 1,
      app_links: 1,
      app_users: 1,
      app_domains: 1,
    });
    for (const c of copies) expect(c.checksum).toMatch(/^[0-9a-f]{64}$/);
    const sqlite = await openSqliteStore(file);
    const postgres = await openPostgresStore(url);
    try {
      expect(await contents(postgres)).toEqual(await contents(sqlite));
      // It goes on where SQLite stopped: the next release of web is 3.
      const web = (await postgres.findApp('web', 'orga_acme')) as AppRecord;
      expect((await postgres.beginRelease({ appId: web.id, cause: 'restart', commit: 'b'.repeat(40), by: 'cli', variables: {} })).number).toBe(3);
    } finally {
      await sqlite.close();
      await postgres.close();
    }
    // Into a database that holds a store already: refused, and it is left as it was.
    await expect(migrateStore(file, url)).rejects.toMatchObject({ code: HostErrors.STORE_MIGRATION_FAILED.code, message: expect.stringContaining('is not empty') });
    expect(await inDatabase<{ n: string }>(url, 'SELECT count(*) AS n FROM releases')).toEqual([{ n: '3' }]);
  });

  it('keeps nothing of a copy that fails partway (a deploy log line PostgreSQL cannot hold), and names the cause without the password', async () => {
    const file = await filledSqliteStore();
    const sqlite = await openSqliteStore(file);
    const web = (await sqlite.findApp('web', 'orga_acme')) as AppRecord;
    await sqlite.appendLog(web.id, 1, ['a NUL \u0000 byte']);
    await sqlite.close();
    const url = await newDatabase();
    const error = await migrateStore(file, url).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: HostErrors.STORE_MIGRATION_FAILED.code, message: expect.stringContaining('nothing was kept') });
    expect((error as Error).message).not.toContain(server.password);
    for (const table of ['apps', 'releases', 'release_logs']) expect(await inDatabase<{ n: string }>(url, `SELECT count(*) AS n FROM ${table}`)).toEqual([{ n: '0' }]);
  });
});
