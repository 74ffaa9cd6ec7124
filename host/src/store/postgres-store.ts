import pg from 'pg';
import { HostErrors } from '../errors.js';
import { migrations, POSTGRES, SCHEMA_MIGRATIONS_TABLE } from './migrations.js';
// Both stores make their records (records.ts) and refuse what they refuse (store-errors.ts) with the same code.
import * as records from './records.js';
import * as storeErrors from './store-errors.js';
import type {
  DomainRecord,
  AddonRecord,
  AppRecord,
  AppUserRecord,
  HostStore,
  NewAddon,
  NewApp,
  NewRelease,
  ReleaseOutcome,
  ReleaseRecord,
  SshKeyRecord,
  StoreClock,
  StoreLock,
  StoreOptions,
  VariableSet,
} from './store.js';
import { systemClock } from './store.js';

// A server that does not answer is reported when the store opens, not waited for without end.
const CONNECT_TIMEOUT_MS = 10_000;
// The advisory lock the hosts sharing a database take while migrating it: any fixed number no other program
// on that database uses; this one is "runplan" in ASCII.
const MIGRATION_LOCK = '32217264538018158';
// The first key of the deploy locks (the second is the application id's hash): "rpln" in ASCII, apart from other programs' locks.
const DEPLOY_LOCK_CLASS = 0x72706c6e;

/** A pool, or one client of it inside a transaction: what the queries below run on. */
type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * Opens the store in the PostgreSQL database at `url` (postgres://user:password@host:port/database),
 * bringing a database made by an earlier version, or an empty one, to the current schema;
 * one made by a newer version is refused (STORE_NEWER) and left as it was.
 */
export async function openPostgresStore(url: string, options: StoreOptions = {}): Promise<PostgresStore> {
  const clock = options.clock ?? systemClock;
  const store: storeErrors.StoreName = { name: urlWithoutPassword(url) };
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle client whose connection ends (the server restarted) is reported on the pool; unheard, Node would end
  // the process. The pool has dropped that client already: the next query connects again.
  pool.on('error', () => {});
  try {
    await migrate(pool, store, clock);
  } catch (error) {
    await pool.end().catch(() => {});
    if (HostErrors.STORE_NEWER.is(error)) throw error;
    throw HostErrors.STORE_OPEN_FAILED.create({
      message: `cannot open the store ${store.name}: ${(error as Error).message}`,
      fix: 'Check the URL (postgres://user:password@host:port/database), that the server runs and accepts this host, and that the role may create tables in the database.',
      details: { store: store.name },
      cause: error,
    });
  }
  return new PostgresStore(pool, clock);
}

async function migrate(pool: pg.Pool, store: storeErrors.StoreName, clock: StoreClock): Promise<void> {
  // Each transaction takes the lock first and holds it to its end: a second host opening the same database at once
  // waits, then finds the table made and the migration applied.
  const lock = (client: Queryable) => client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
  const applied = async (client: Queryable) => new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
  await inTransaction(pool, async (client) => {
    await lock(client);
    await client.query(SCHEMA_MIGRATIONS_TABLE);
    storeErrors.refuseNewerSchema(await applied(client), migrations, store);
  });
  for (const migration of migrations) {
    await inTransaction(pool, async (client) => {
      await lock(client);
      if ((await applied(client)).has(migration.version)) return;
      await client.query(migration.sql(POSTGRES));
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [migration.version, clock.now().toISOString()]);
    });
  }
}

/** Runs `work` in one transaction on one client of the pool: committed if it resolves, rolled back if it throws. */
async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A client that cannot even roll back has lost its connection: given back as broken, the pool closes it.
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

/** The URL as a message may show it: its password, in the user part or a password= parameter, hidden. */
export function urlWithoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = 'xxxxx';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', 'xxxxx');
    return parsed.toString();
  } catch {
    return '(a PostgreSQL URL that is not a URL)';
  }
}

/**
 * The host's store in one PostgreSQL database, for hosts that share it. Each method is one statement, or one
 * transaction on one client; what the SQLite store gets from BEGIN IMMEDIATE (one writer at a time), this one
 * gets from row locks where a read decides a write (a release's number, a release's outcome, an add-on's links)
 * and from ON CONFLICT where a look first would race another host.
 */
export class PostgresStore implements HostStore {
  private ended = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: StoreClock,
  ) {}

  private now(): string {
    return this.clock.now().toISOString();
  }

  async createApp(app: NewApp): Promise<AppRecord> {
    const record = records.newAppRecord(app, this.now());
    await inTransaction(this.pool, async (client) => {
      await ensureOrg(client, app.org, record.createdAt);
      const inserted = await client.query('INSERT INTO apps (id, name, org, zone, type, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (org, name) DO NOTHING', [
        record.id,
        record.name,
        record.org,
        record.zone,
        record.type,
        record.createdAt,
      ]);
      if (inserted.rowCount === 0) throw storeErrors.appNameTaken(app);
    });
    return record;
  }

  async findApp(idOrName: string, org?: string): Promise<AppRecord | undefined> {
    const row = await this.findRow<records.AppRow>('apps', idOrName, org);
    return row && records.toApp(row);
  }

  async listApps(org?: string): Promise<AppRecord[]> {
    return (await this.listRows<records.AppRow>('apps', org)).map(records.toApp);
  }

  /**
   * A session-level advisory lock on a client of its own, keyed on the application's id: PostgreSQL
   * releases it when that connection ends, so a host that dies mid-deploy blocks no other.
   */
  async appUser(appId: string): Promise<AppUserRecord | undefined> {
    return records.toAppUser(await first<records.AppUserRow>(this.pool, 'SELECT * FROM app_users WHERE app_id = $1', [appId]));
  }

  async highestAppUid(): Promise<number | undefined> {
    return (await first<{ uid: number | null }>(this.pool, 'SELECT max(uid) AS uid FROM app_users', []))?.uid ?? undefined;
  }

  async recordAppUser(user: Omit<AppUserRecord, 'createdAt'>): Promise<AppUserRecord | undefined> {
    const at = this.now();
    const row = await first<records.AppUserRow>(this.pool, 'INSERT INTO app_users (uid, app_id, name, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING *', [
      user.uid,
      user.appId,
      user.name,
      at,
    ]);
    return records.toAppUser(row);
  }

  async lockApp(appId: string, onWait: () => void): Promise<StoreLock> {
    const client = await this.pool.connect();
    // Held for long, the connection may end under it (the server restarts): told on the client, not thrown at the process.
    const ignore = () => {};
    client.on('error', ignore);
    try {
      const tried = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked', [DEPLOY_LOCK_CLASS, appId]);
      if (!tried.rows[0]?.locked) {
        onWait();
        await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [DEPLOY_LOCK_CLASS, appId]);
      }
    } catch (error) {
      client.off('error', ignore);
      client.release(error as Error);
      throw error;
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        try {
          await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [DEPLOY_LOCK_CLASS, appId]);
          client.off('error', ignore);
          client.release();
        } catch (error) {
          // Closed instead: the server drops the lock with the connection.
          client.off('error', ignore);
          client.release(error as Error);
        }
      },
    };
  }

  async setDedicatedBuildInstance(appId: string, on: boolean): Promise<AppRecord> {
    const row = await first<records.AppRow>(this.pool, 'UPDATE apps SET dedicated_build_instance = $1 WHERE id = $2 RETURNING *', [on, appId]);
    if (!row) throw storeErrors.appNotFound(appId);
    return records.toApp(row);
  }

  async variables(appId: string, set: VariableSet = 'own'): Promise<Record<string, string>> {
    const rows = await all<{ name: string; value: string }>(this.pool, `SELECT name, value FROM ${records.VARIABLE_TABLES[set]} WHERE app_id = $1 ORDER BY name`, [appId]);
    return Object.fromEntries(rows.map((r) => [r.name, r.value]));
  }

  async changeVariables(appId: string, set: Readonly<Record<string, string>>, remove: readonly string[], which: VariableSet = 'own'): Promise<void> {
    storeErrors.refuseSetAndRemoved(set, remove);
    const now = this.now();
    const table = records.VARIABLE_TABLES[which];
    await inTransaction(this.pool, async (client) => {
      await requireApp(client, appId);
      // Each as one statement over arrays, however many variables change.
      await client.query(
        `INSERT INTO ${table} (app_id, name, value, updated_at) SELECT $1, name, value, $4 FROM unnest($2::text[], $3::text[]) AS changed(name, value)
         ON CONFLICT (app_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
        [appId, Object.keys(set), Object.values(set), now],
      );
      await client.query(`DELETE FROM ${table} WHERE app_id = $1 AND name = ANY($2::text[])`, [appId, remove]);
    });
  }

  async addKey(key: Omit<SshKeyRecord, 'id' | 'addedAt'>): Promise<SshKeyRecord> {
    const record = records.newKeyRecord(key, this.now());
    await inTransaction(this.pool, async (client) => {
      await ensureOrg(client, key.org, record.addedAt);
      const inserted = await client.query('INSERT INTO ssh_keys (id, org, public_key, fingerprint, comment, added_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (org, public_key) DO NOTHING', [
        record.id,
        record.org,
        record.publicKey,
        record.fingerprint,
        record.comment,
        record.addedAt,
      ]);
      if (inserted.rowCount === 0) {
        const existing = await first<{ id: string }>(client, 'SELECT id FROM ssh_keys WHERE org = $1 AND public_key = $2', [key.org, key.publicKey]);
        throw storeErrors.keyTaken(key, existing?.id ?? 'a key removed since');
      }
    });
    return record;
  }

  async removeKey(id: string): Promise<boolean> {
    return changed(await this.pool.query('DELETE FROM ssh_keys WHERE id = $1', [id]));
  }

  async findKey(id: string): Promise<SshKeyRecord | undefined> {
    const row = await first<records.KeyRow>(this.pool, 'SELECT * FROM ssh_keys WHERE id = $1', [id]);
    return row && records.toKey(row);
  }

  async listKeys(org?: string): Promise<SshKeyRecord[]> {
    const rows =
      org === undefined
        ? await all<records.KeyRow>(this.pool, 'SELECT * FROM ssh_keys ORDER BY org, added_at, added_order')
        : await all<records.KeyRow>(this.pool, 'SELECT * FROM ssh_keys WHERE org = $1 ORDER BY added_at, added_order', [org]);
    return rows.map(records.toKey);
  }

  async beginRelease(release: NewRelease): Promise<ReleaseRecord> {
    const startedAt = this.now();
    return inTransaction(this.pool, async (client) => {
      // The application's row is locked before the last number is read: another beginRelease of it, from this host or
      // another, waits here until this one commits, then reads the number this one took. NO KEY UPDATE rather than
      // UPDATE: the foreign-key checks of other writes for the application (its variables, links) need not wait.
      await requireApp(client, release.appId, 'FOR NO KEY UPDATE');
      const next = await first<{ number: number }>(client, 'SELECT COALESCE(MAX(number), 0) + 1 AS number FROM releases WHERE app_id = $1', [release.appId]);
      const row = await first<records.ReleaseRow>(
        client,
        `INSERT INTO releases (app_id, number, cause, commit_sha, requested_by, status, variables, links, started_at)
         VALUES ($1, $2, $3, $4, $5, 'deploying', $6, $7, $8) RETURNING *`,
        [release.appId, next?.number, release.cause, release.commit, release.by, JSON.stringify(release.variables), JSON.stringify(release.links ?? []), startedAt],
      );
      return records.toRelease(row as records.ReleaseRow);
    });
  }

  async finishRelease(appId: string, number: number, outcome: ReleaseOutcome): Promise<ReleaseRecord> {
    const finishedAt = this.now();
    return inTransaction(this.pool, async (client) => {
      // Locked: of two outcomes recorded at once, the second sees the first and is refused.
      const current = await first<records.ReleaseRow>(client, 'SELECT * FROM releases WHERE app_id = $1 AND number = $2 FOR UPDATE', [appId, number]);
      if (!current) throw storeErrors.releaseNotFound(appId, number);
      if (current.status !== 'deploying') throw storeErrors.releaseAlreadyFinished(appId, number, current.status, outcome.status);
      const row = await first<records.ReleaseRow>(
        client,
        `UPDATE releases SET status = $1, plan = $2, plan_digest = $3, port = $4, error_code = $5, finished_at = $6
         WHERE app_id = $7 AND number = $8 RETURNING *`,
        [outcome.status, records.planText(outcome.plan), outcome.planDigest ?? null, outcome.port ?? null, outcome.errorCode ?? null, finishedAt, appId, number],
      );
      if (outcome.status === 'succeeded') await client.query('UPDATE apps SET current_release = $1 WHERE id = $2', [number, appId]);
      return records.toRelease(row as records.ReleaseRow);
    });
  }

  async release(appId: string, number: number): Promise<ReleaseRecord | undefined> {
    const row = await first<records.ReleaseRow>(this.pool, 'SELECT * FROM releases WHERE app_id = $1 AND number = $2', [appId, number]);
    return row && records.toRelease(row);
  }

  async listReleases(appId: string): Promise<ReleaseRecord[]> {
    return (await all<records.ReleaseRow>(this.pool, 'SELECT * FROM releases WHERE app_id = $1 ORDER BY number DESC', [appId])).map(records.toRelease);
  }

  async failUnfinishedReleases(): Promise<number> {
    const result = await this.pool.query(`UPDATE releases SET status = 'failed', error_code = $1, finished_at = $2 WHERE status = 'deploying'`, [HostErrors.DEPLOY_INTERRUPTED.code, this.now()]);
    return result.rowCount ?? 0;
  }

  async appendLog(appId: string, number: number, lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return;
    await inTransaction(this.pool, async (client) => {
      // Locked: two appends to one release number their lines one after the other.
      if (!(await first(client, 'SELECT 1 FROM releases WHERE app_id = $1 AND number = $2 FOR UPDATE', [appId, number]))) throw storeErrors.releaseNotFound(appId, number, ' to log for');
      await client.query(
        `INSERT INTO release_logs (app_id, number, seq, line)
         SELECT $1, $2, last.seq + appended.position, appended.line
         FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM release_logs WHERE app_id = $1 AND number = $2) AS last,
              unnest($3::text[]) WITH ORDINALITY AS appended(line, position)`,
        [appId, number, lines],
      );
    });
  }

  async releaseLog(appId: string, number: number): Promise<string[]> {
    return (await all<{ line: string }>(this.pool, 'SELECT line FROM release_logs WHERE app_id = $1 AND number = $2 ORDER BY seq', [appId, number])).map((r) => r.line);
  }

  async createAddon(addon: NewAddon): Promise<AddonRecord> {
    const record = records.newAddonRecord(addon, this.now());
    await inTransaction(this.pool, async (client) => {
      await ensureOrg(client, addon.org, record.createdAt);
      const inserted = await client.query('INSERT INTO addons (id, name, org, provider, zone, created_at, config) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (org, name) DO NOTHING', [
        record.id,
        record.name,
        record.org,
        record.provider,
        record.zone,
        record.createdAt,
        JSON.stringify(record.config),
      ]);
      if (inserted.rowCount === 0) throw storeErrors.addonNameTaken(addon);
    });
    return record;
  }

  async findAddon(idOrName: string, org?: string): Promise<AddonRecord | undefined> {
    const row = await this.findRow<records.AddonRow>('addons', idOrName, org);
    return row && records.toAddon(row);
  }

  async listAddons(org?: string): Promise<AddonRecord[]> {
    return (await this.listRows<records.AddonRow>('addons', org)).map(records.toAddon);
  }

  async changeAddonConfig(id: string, config: Readonly<Record<string, string>>): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await requireAddon(client, id, 'FOR UPDATE');
      await client.query('UPDATE addons SET config = $1 WHERE id = $2', [JSON.stringify(config), id]);
    });
  }

  async removeAddon(id: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      // Locked: a link being made to it meanwhile (linkAddon holds it FOR SHARE) is waited for, then seen.
      const addon = await requireAddon(client, id, 'FOR UPDATE');
      const apps = await all<{ id: string; name: string }>(client, 'SELECT apps.id, apps.name FROM addon_links JOIN apps ON apps.id = addon_links.app_id WHERE addon_id = $1 ORDER BY apps.name', [id]);
      if (apps.length > 0) throw storeErrors.addonLinked(addon, apps);
      await client.query('DELETE FROM addons WHERE id = $1', [id]);
    });
  }

  async linkAddon(appId: string, addonId: string): Promise<boolean> {
    const now = this.now();
    return inTransaction(this.pool, async (client) => {
      const appOrg = (await requireApp(client, appId)).org;
      // FOR SHARE: an add-on being removed meanwhile is waited for, then reported ADDON_NOT_FOUND.
      const addon = await requireAddon(client, addonId, 'FOR SHARE');
      if (appOrg !== addon.org) throw storeErrors.addonOrgMismatch(appId, appOrg, addon);
      return changed(await client.query('INSERT INTO addon_links (app_id, addon_id, linked_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [appId, addonId, now]));
    });
  }

  async unlinkAddon(appId: string, addonId: string): Promise<boolean> {
    return changed(await this.pool.query('DELETE FROM addon_links WHERE app_id = $1 AND addon_id = $2', [appId, addonId]));
  }

  async linkApp(appId: string, targetId: string): Promise<boolean> {
    const now = this.now();
    return inTransaction(this.pool, async (client) => {
      storeErrors.refuseAppLink(await requireApp(client, appId), await requireApp(client, targetId));
      return changed(await client.query('INSERT INTO app_links (app_id, target_id, linked_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [appId, targetId, now]));
    });
  }

  async unlinkApp(appId: string, targetId: string): Promise<boolean> {
    return changed(await this.pool.query('DELETE FROM app_links WHERE app_id = $1 AND target_id = $2', [appId, targetId]));
  }

  async appLinksOf(appId: string): Promise<AppRecord[]> {
    return (await all<records.AppRow>(this.pool, 'SELECT apps.* FROM app_links JOIN apps ON apps.id = app_links.target_id WHERE app_id = $1 ORDER BY apps.name', [appId])).map(records.toApp);
  }

  async appsLinkedTo(addonId: string): Promise<AppRecord[]> {
    return (await all<records.AppRow>(this.pool, 'SELECT apps.* FROM addon_links JOIN apps ON apps.id = addon_links.app_id WHERE addon_id = $1 ORDER BY apps.name', [addonId])).map(records.toApp);
  }

  async linksOf(appId: string): Promise<AddonRecord[]> {
    return (await all<records.AddonRow>(this.pool, 'SELECT addons.* FROM addon_links JOIN addons ON addons.id = addon_links.addon_id WHERE app_id = $1 ORDER BY addons.name', [appId])).map(
      records.toAddon,
    );
  }

  async addDomain(appId: string, name: string): Promise<{ domain: DomainRecord; added: boolean }> {
    const at = this.now();
    return inTransaction(this.pool, async (client) => {
      await requireApp(client, appId);
      // ON CONFLICT rather than a look first: another host of this store may add the same name at once.
      const inserted = await first<records.DomainRow>(client, 'INSERT INTO app_domains (name, app_id, added_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING *', [name, appId, at]);
      if (inserted) return { domain: records.toDomain(inserted), added: true };
      const existing = await first<records.DomainRow>(client, 'SELECT * FROM app_domains WHERE name = $1', [name]);
      return { domain: records.toDomain(existing as records.DomainRow), added: false };
    });
  }

  async removeDomain(name: string): Promise<DomainRecord | undefined> {
    const row = await first<records.DomainRow>(this.pool, 'DELETE FROM app_domains WHERE name = $1 RETURNING *', [name]);
    return row && records.toDomain(row);
  }

  async findDomain(name: string): Promise<DomainRecord | undefined> {
    const row = await first<records.DomainRow>(this.pool, 'SELECT * FROM app_domains WHERE name = $1', [name]);
    return row && records.toDomain(row);
  }

  async listDomains(of: { readonly appId?: string; readonly org?: string } = {}): Promise<DomainRecord[]> {
    const { rows } = await this.pool.query<records.DomainRow>(
      `SELECT app_domains.* FROM app_domains JOIN apps ON apps.id = app_domains.app_id
       WHERE ($1::text IS NULL OR app_id = $1) AND ($2::text IS NULL OR apps.org = $2) ORDER BY app_domains.name`,
      [of.appId ?? null, of.org ?? null],
    );
    return rows.map(records.toDomain);
  }

  async close(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.pool.end();
  }

  /** An application's or add-on's row by id, or by name (INPUT_USAGE for a name several organizations share, without `org`). */
  private async findRow<R extends records.AppRow | records.AddonRow>(table: 'apps' | 'addons', idOrName: string, org: string | undefined): Promise<R | undefined> {
    // An id is never a valid name (names have no "_"), so the two lookups cannot be confused.
    const byId = await first<R>(this.pool, `SELECT * FROM ${table} WHERE id = $1`, [idOrName]);
    if (byId) return org === undefined || byId.org === org ? byId : undefined;
    const rows =
      org === undefined
        ? await all<R>(this.pool, `SELECT * FROM ${table} WHERE name = $1 ORDER BY org`, [idOrName])
        : await all<R>(this.pool, `SELECT * FROM ${table} WHERE name = $1 AND org = $2`, [idOrName, org]);
    if (rows.length > 1) throw storeErrors.ambiguousName(table === 'apps' ? 'application' : 'add-on', idOrName, rows);
    return rows[0];
  }

  /** Applications or add-ons by organization and name, or those of `org` by name. */
  private async listRows<R extends records.AppRow | records.AddonRow>(table: 'apps' | 'addons', org: string | undefined): Promise<R[]> {
    return org === undefined ? all<R>(this.pool, `SELECT * FROM ${table} ORDER BY org, name`) : all<R>(this.pool, `SELECT * FROM ${table} WHERE org = $1 ORDER BY name`, [org]);
  }
}

async function all<R extends pg.QueryResultRow>(on: Queryable, sql: string, params: unknown[] = []): Promise<R[]> {
  return (await on.query<R>(sql, params)).rows;
}

async function first<R extends pg.QueryResultRow>(on: Queryable, sql: string, params: unknown[] = []): Promise<R | undefined> {
  return (await on.query<R>(sql, params)).rows[0];
}

/** True when the statement inserted, updated or deleted a row. */
function changed(result: pg.QueryResult): boolean {
  return (result.rowCount ?? 0) > 0;
}

async function ensureOrg(client: Queryable, org: string, at: string): Promise<void> {
  await client.query('INSERT INTO orgs (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [org, at]);
}

/** The application's row (APP_NOT_FOUND otherwise), locked as `lock` says. */
async function requireApp(client: Queryable, appId: string, lock: '' | 'FOR NO KEY UPDATE' = ''): Promise<records.AppRow> {
  const row = await first<records.AppRow>(client, `SELECT * FROM apps WHERE id = $1 ${lock}`, [appId]);
  if (!row) throw storeErrors.appNotFound(appId);
  return row;
}

/** The add-on's row (ADDON_NOT_FOUND otherwise), locked as `lock` says. */
async function requireAddon(client: Queryable, addonId: string, lock: 'FOR UPDATE' | 'FOR SHARE'): Promise<records.AddonRow> {
  const row = await first<records.AddonRow>(client, `SELECT * FROM addons WHERE id = $1 ${lock}`, [addonId]);
  if (!row) throw storeErrors.addonNotFound(addonId);
  return row;
}
