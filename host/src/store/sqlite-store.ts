import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { HostErrors } from '../errors.js';
import { type Migration, migrations, SCHEMA_MIGRATIONS_TABLE, SQLITE } from './migrations.js';
// Both stores make their records (records.ts) and refuse what they refuse (store-errors.ts) with the same code.
import * as records from './records.js';
import * as storeErrors from './store-errors.js';
import {
  type AddonRecord,
  type AppRecord,
  type AppUserRecord,
  type DomainRecord,
  type HostStore,
  type NewAddon,
  type NewApp,
  type NewRelease,
  type ReleaseOutcome,
  type ReleaseRecord,
  type SshKeyRecord,
  type StoreClock,
  type StoreLock,
  type StoreOptions,
  systemClock,
  type VariableSet,
} from './store.js';

// How long a writer waits for another connection's transaction (another runplan-host process) before failing.
const BUSY_TIMEOUT_MS = 5000;
const FILE_MODE = 0o600;

/**
 * Opens (and creates, 0600) the store at `file`, bringing a store made by an
 * earlier version to the current schema; a store made by a newer version is
 * refused (STORE_NEWER) and left as it was.
 */
export async function openSqliteStore(file: string, options: StoreOptions = {}): Promise<SqliteStore> {
  let db: Database.Database | undefined;
  try {
    // Created before SQLite opens it, so it never exists with the umask's mode; SQLite gives its -wal and
    // -shm files the main file's mode, and they are set again below in case they were left by an older process.
    closeSync(openSync(file, 'a', FILE_MODE));
    chmodSync(file, FILE_MODE);
    db = new Database(file);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    migrate(db, file, options.clock ?? systemClock);
    for (const sidecar of [`${file}-wal`, `${file}-shm`]) if (existsSync(sidecar)) chmodSync(sidecar, FILE_MODE);
  } catch (error) {
    db?.close();
    if (HostErrors.STORE_NEWER.is(error)) throw error;
    throw HostErrors.STORE_OPEN_FAILED.create({ message: `cannot open the store ${file}: ${(error as Error).message}`, file, cause: error });
  }
  return new SqliteStore(db, options.clock ?? systemClock);
}

function migrate(db: Database.Database, file: string, clock: StoreClock): void {
  db.exec(SCHEMA_MIGRATIONS_TABLE);
  const applied = () => new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]);
  storeErrors.refuseNewerSchema(applied(), migrations, { name: file, file });
  for (const migration of migrations) {
    // IMMEDIATE: another process opening the same store at once waits, then finds the migration applied.
    db.transaction((m: Migration) => {
      if (applied().has(m.version)) return;
      db.exec(m.sql(SQLITE));
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, clock.now().toISOString());
    }).immediate(migration);
  }
}

/** The host's store in one SQLite file (WAL, foreign keys on). better-sqlite3 is synchronous: each method is one statement or one transaction. */
export class SqliteStore implements HostStore {
  constructor(
    private readonly db: Database.Database,
    private readonly clock: StoreClock,
  ) {}

  private now(): string {
    return this.clock.now().toISOString();
  }

  async createApp(app: NewApp): Promise<AppRecord> {
    const record = records.newAppRecord(app, this.now());
    this.db
      .transaction(() => {
        if (this.db.prepare('SELECT 1 FROM apps WHERE org = ? AND name = ?').get(app.org, app.name)) throw storeErrors.appNameTaken(app);
        this.ensureOrg(app.org, record.createdAt);
        this.db.prepare('INSERT INTO apps (id, name, org, zone, type, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(record.id, record.name, record.org, record.zone, record.type, record.createdAt);
      })
      .immediate();
    return record;
  }

  async findApp(idOrName: string, org?: string): Promise<AppRecord | undefined> {
    // An id is never a valid name (names have no "_"), so the two lookups cannot be confused.
    const byId = this.db.prepare('SELECT * FROM apps WHERE id = ?').get(idOrName) as records.AppRow | undefined;
    if (byId) return org === undefined || byId.org === org ? records.toApp(byId) : undefined;
    const rows = (
      org === undefined ? this.db.prepare('SELECT * FROM apps WHERE name = ? ORDER BY org').all(idOrName) : this.db.prepare('SELECT * FROM apps WHERE name = ? AND org = ?').all(idOrName, org)
    ) as records.AppRow[];
    if (rows.length > 1) throw storeErrors.ambiguousName('application', idOrName, rows);
    return rows[0] && records.toApp(rows[0]);
  }

  async listApps(org?: string): Promise<AppRecord[]> {
    const rows = (org === undefined ? this.db.prepare('SELECT * FROM apps ORDER BY org, name').all() : this.db.prepare('SELECT * FROM apps WHERE org = ? ORDER BY name').all(org)) as records.AppRow[];
    return rows.map(records.toApp);
  }

  async variables(appId: string, set: VariableSet = 'own'): Promise<Record<string, string>> {
    const rows = this.db.prepare(`SELECT name, value FROM ${records.VARIABLE_TABLES[set]} WHERE app_id = ? ORDER BY name`).all(appId) as Array<{ name: string; value: string }>;
    return Object.fromEntries(rows.map((r) => [r.name, r.value]));
  }

  async changeVariables(appId: string, set: Readonly<Record<string, string>>, remove: readonly string[], which: VariableSet = 'own'): Promise<void> {
    storeErrors.refuseSetAndRemoved(set, remove);
    const now = this.now();
    this.db
      .transaction(() => {
        this.requireApp(appId);
        const upsert = this.db.prepare(
          `INSERT INTO ${records.VARIABLE_TABLES[which]} (app_id, name, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (app_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
        );
        for (const [name, value] of Object.entries(set)) upsert.run(appId, name, value, now);
        const del = this.db.prepare(`DELETE FROM ${records.VARIABLE_TABLES[which]} WHERE app_id = ? AND name = ?`);
        for (const name of remove) del.run(appId, name);
      })
      .immediate();
  }

  async addKey(key: Omit<SshKeyRecord, 'id' | 'addedAt'>): Promise<SshKeyRecord> {
    const record = records.newKeyRecord(key, this.now());
    this.db
      .transaction(() => {
        const existing = this.db.prepare('SELECT id FROM ssh_keys WHERE org = ? AND public_key = ?').pluck().get(key.org, key.publicKey) as string | undefined;
        if (existing !== undefined) throw storeErrors.keyTaken(key, existing);
        this.ensureOrg(key.org, record.addedAt);
        this.db
          .prepare('INSERT INTO ssh_keys (id, org, public_key, fingerprint, comment, added_at) VALUES (?, ?, ?, ?, ?, ?)')
          .run(record.id, record.org, record.publicKey, record.fingerprint, record.comment, record.addedAt);
      })
      .immediate();
    return record;
  }

  async removeKey(id: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM ssh_keys WHERE id = ?').run(id).changes > 0;
  }

  async findKey(id: string): Promise<SshKeyRecord | undefined> {
    const row = this.db.prepare('SELECT * FROM ssh_keys WHERE id = ?').get(id) as records.KeyRow | undefined;
    return row && records.toKey(row);
  }

  async listKeys(org?: string): Promise<SshKeyRecord[]> {
    const rows = (
      org === undefined ? this.db.prepare('SELECT * FROM ssh_keys ORDER BY org, added_at, rowid').all() : this.db.prepare('SELECT * FROM ssh_keys WHERE org = ? ORDER BY added_at, rowid').all(org)
    ) as records.KeyRow[];
    return rows.map(records.toKey);
  }

  async beginRelease(release: NewRelease): Promise<ReleaseRecord> {
    const startedAt = this.now();
    // IMMEDIATE takes the write lock before reading the last number, so two connections never pick the same one.
    return this.db
      .transaction(() => {
        this.requireApp(release.appId);
        const last = this.db.prepare('SELECT MAX(number) FROM releases WHERE app_id = ?').pluck().get(release.appId) as number | null;
        const number = (last ?? 0) + 1;
        this.db
          .prepare(
            `INSERT INTO releases (app_id, number, cause, commit_sha, requested_by, status, variables, links, started_at)
             VALUES (?, ?, ?, ?, ?, 'deploying', ?, ?, ?)`,
          )
          .run(release.appId, number, release.cause, release.commit, release.by, JSON.stringify(release.variables), JSON.stringify(release.links ?? []), startedAt);
        return this.readRelease(release.appId, number) as ReleaseRecord;
      })
      .immediate();
  }

  async finishRelease(appId: string, number: number, outcome: ReleaseOutcome): Promise<ReleaseRecord> {
    const finishedAt = this.now();
    return this.db
      .transaction(() => {
        const current = this.readRelease(appId, number);
        if (!current) throw storeErrors.releaseNotFound(appId, number);
        if (current.status !== 'deploying') throw storeErrors.releaseAlreadyFinished(appId, number, current.status, outcome.status);
        this.db
          .prepare(
            `UPDATE releases SET status = ?, plan = ?, plan_digest = ?, port = ?, error_code = ?, finished_at = ?
             WHERE app_id = ? AND number = ?`,
          )
          .run(outcome.status, records.planText(outcome.plan), outcome.planDigest ?? null, outcome.port ?? null, outcome.errorCode ?? null, finishedAt, appId, number);
        if (outcome.status === 'succeeded') this.db.prepare('UPDATE apps SET current_release = ? WHERE id = ?').run(number, appId);
        return this.readRelease(appId, number) as ReleaseRecord;
      })
      .immediate();
  }

  async release(appId: string, number: number): Promise<ReleaseRecord | undefined> {
    return this.readRelease(appId, number);
  }

  async listReleases(appId: string): Promise<ReleaseRecord[]> {
    const rows = this.db.prepare('SELECT * FROM releases WHERE app_id = ? ORDER BY number DESC').all(appId) as records.ReleaseRow[];
    return rows.map(records.toRelease);
  }

  async failUnfinishedReleases(): Promise<number> {
    const result = this.db.prepare(`UPDATE releases SET status = 'failed', error_code = ?, finished_at = ? WHERE status = 'deploying'`).run(HostErrors.DEPLOY_INTERRUPTED.code, this.now());
    return result.changes;
  }

  async appendLog(appId: string, number: number, lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return;
    this.db
      .transaction(() => {
        if (!this.db.prepare('SELECT 1 FROM releases WHERE app_id = ? AND number = ?').get(appId, number)) throw storeErrors.releaseNotFound(appId, number, ' to log for');
        const last = this.db.prepare('SELECT MAX(seq) FROM release_logs WHERE app_id = ? AND number = ?').pluck().get(appId, number) as number | null;
        const insert = this.db.prepare('INSERT INTO release_logs (app_id, number, seq, line) VALUES (?, ?, ?, ?)');
        let seq = last ?? 0;
        for (const line of lines) insert.run(appId, number, ++seq, line);
      })
      .immediate();
  }

  async releaseLog(appId: string, number: number): Promise<string[]> {
    return this.db.prepare('SELECT line FROM release_logs WHERE app_id = ? AND number = ? ORDER BY seq').pluck().all(appId, number) as string[];
  }

  async createAddon(addon: NewAddon): Promise<AddonRecord> {
    const record = records.newAddonRecord(addon, this.now());
    this.db
      .transaction(() => {
        if (this.db.prepare('SELECT 1 FROM addons WHERE org = ? AND name = ?').get(addon.org, addon.name)) throw storeErrors.addonNameTaken(addon);
        this.ensureOrg(addon.org, record.createdAt);
        this.db
          .prepare('INSERT INTO addons (id, name, org, provider, zone, created_at, config) VALUES (?, ?, ?, ?, ?, ?, ?)')
          .run(record.id, record.name, record.org, record.provider, record.zone, record.createdAt, JSON.stringify(record.config));
      })
      .immediate();
    return record;
  }

  async findAddon(idOrName: string, org?: string): Promise<AddonRecord | undefined> {
    // As for applications: an id has a "_", a name never does.
    const byId = this.db.prepare('SELECT * FROM addons WHERE id = ?').get(idOrName) as records.AddonRow | undefined;
    if (byId) return org === undefined || byId.org === org ? records.toAddon(byId) : undefined;
    const rows = (
      org === undefined ? this.db.prepare('SELECT * FROM addons WHERE name = ? ORDER BY org').all(idOrName) : this.db.prepare('SELECT * FROM addons WHERE name = ? AND org = ?').all(idOrName, org)
    ) as records.AddonRow[];
    if (rows.length > 1) throw storeErrors.ambiguousName('add-on', idOrName, rows);
    return rows[0] && records.toAddon(rows[0]);
  }

  async listAddons(org?: string): Promise<AddonRecord[]> {
    const rows = (
      org === undefined ? this.db.prepare('SELECT * FROM addons ORDER BY org, name').all() : this.db.prepare('SELECT * FROM addons WHERE org = ? ORDER BY name').all(org)
    ) as records.AddonRow[];
    return rows.map(records.toAddon);
  }

  async changeAddonConfig(id: string, config: Readonly<Record<string, string>>): Promise<void> {
    this.requireAddon(id);
    this.db.prepare('UPDATE addons SET config = ? WHERE id = ?').run(JSON.stringify(config), id);
  }

  async removeAddon(id: string): Promise<void> {
    this.db
      .transaction(() => {
        const addon = this.requireAddon(id);
        const apps = this.db.prepare('SELECT apps.id, apps.name FROM addon_links JOIN apps ON apps.id = addon_links.app_id WHERE addon_id = ? ORDER BY apps.name').all(id) as Array<{
          id: string;
          name: string;
        }>;
        if (apps.length > 0) throw storeErrors.addonLinked(addon, apps);
        this.db.prepare('DELETE FROM addons WHERE id = ?').run(id);
      })
      .immediate();
  }

  async linkAddon(appId: string, addonId: string): Promise<boolean> {
    const now = this.now();
    return this.db
      .transaction(() => {
        const appOrg = this.requireApp(appId).org;
        const addon = this.requireAddon(addonId);
        if (appOrg !== addon.org) throw storeErrors.addonOrgMismatch(appId, appOrg, addon);
        return this.db.prepare('INSERT INTO addon_links (app_id, addon_id, linked_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING').run(appId, addonId, now).changes > 0;
      })
      .immediate();
  }

  async unlinkAddon(appId: string, addonId: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM addon_links WHERE app_id = ? AND addon_id = ?').run(appId, addonId).changes > 0;
  }

  async linkApp(appId: string, targetId: string): Promise<boolean> {
    const now = this.now();
    return this.db
      .transaction(() => {
        storeErrors.refuseAppLink(this.requireApp(appId), this.requireApp(targetId));
        return this.db.prepare('INSERT INTO app_links (app_id, target_id, linked_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING').run(appId, targetId, now).changes > 0;
      })
      .immediate();
  }

  async unlinkApp(appId: string, targetId: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM app_links WHERE app_id = ? AND target_id = ?').run(appId, targetId).changes > 0;
  }

  async appLinksOf(appId: string): Promise<AppRecord[]> {
    const rows = this.db.prepare('SELECT apps.* FROM app_links JOIN apps ON apps.id = app_links.target_id WHERE app_id = ? ORDER BY apps.name').all(appId) as records.AppRow[];
    return rows.map(records.toApp);
  }

  async appsLinkedTo(addonId: string): Promise<AppRecord[]> {
    const rows = this.db.prepare('SELECT apps.* FROM addon_links JOIN apps ON apps.id = addon_links.app_id WHERE addon_id = ? ORDER BY apps.name').all(addonId) as records.AppRow[];
    return rows.map(records.toApp);
  }

  async linksOf(appId: string): Promise<AddonRecord[]> {
    const rows = this.db.prepare('SELECT addons.* FROM addon_links JOIN addons ON addons.id = addon_links.addon_id WHERE app_id = ? ORDER BY addons.name').all(appId) as records.AddonRow[];
    return rows.map(records.toAddon);
  }

  async addDomain(appId: string, name: string): Promise<{ domain: DomainRecord; added: boolean }> {
    const at = this.now();
    return this.db
      .transaction(() => {
        this.requireApp(appId);
        const existing = this.db.prepare('SELECT * FROM app_domains WHERE name = ?').get(name) as records.DomainRow | undefined;
        if (existing) return { domain: records.toDomain(existing), added: false };
        this.db.prepare('INSERT INTO app_domains (name, app_id, added_at) VALUES (?, ?, ?)').run(name, appId, at);
        return { domain: { name, appId, addedAt: at }, added: true };
      })
      .immediate();
  }

  async removeDomain(name: string): Promise<DomainRecord | undefined> {
    const row = this.db.prepare('DELETE FROM app_domains WHERE name = ? RETURNING *').get(name) as records.DomainRow | undefined;
    return row && records.toDomain(row);
  }

  async findDomain(name: string): Promise<DomainRecord | undefined> {
    const row = this.db.prepare('SELECT * FROM app_domains WHERE name = ?').get(name) as records.DomainRow | undefined;
    return row && records.toDomain(row);
  }

  async listDomains(of: { readonly appId?: string; readonly org?: string } = {}): Promise<DomainRecord[]> {
    const rows = this.db
      .prepare('SELECT app_domains.* FROM app_domains JOIN apps ON apps.id = app_domains.app_id WHERE (? IS NULL OR app_id = ?) AND (? IS NULL OR apps.org = ?) ORDER BY app_domains.name')
      .all(of.appId ?? null, of.appId ?? null, of.org ?? null, of.org ?? null) as records.DomainRow[];
    return rows.map(records.toDomain);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  private requireAddon(addonId: string): records.AddonRow {
    const row = this.db.prepare('SELECT * FROM addons WHERE id = ?').get(addonId) as records.AddonRow | undefined;
    if (!row) throw storeErrors.addonNotFound(addonId);
    return row;
  }

  /** One serve per data folder (serve.pid), and the file is in it: no other host shares this store. */
  async appUser(appId: string): Promise<AppUserRecord | undefined> {
    return records.toAppUser(this.db.prepare('SELECT * FROM app_users WHERE app_id = ?').get(appId) as records.AppUserRow | undefined);
  }

  async highestAppUid(): Promise<number | undefined> {
    return (this.db.prepare('SELECT max(uid) AS uid FROM app_users').get() as { uid: number | null }).uid ?? undefined;
  }

  async recordAppUser(user: Omit<AppUserRecord, 'createdAt'>): Promise<AppUserRecord | undefined> {
    const at = this.now();
    const { changes } = this.db.prepare('INSERT INTO app_users (uid, app_id, name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING').run(user.uid, user.appId, user.name, at);
    return changes === 1 ? { ...user, createdAt: at } : undefined;
  }

  async lockApp(_appId: string, _onWait: () => void): Promise<StoreLock> {
    return { release: async () => {} };
  }

  async setDedicatedBuildInstance(appId: string, on: boolean): Promise<AppRecord> {
    this.requireApp(appId);
    this.db.prepare('UPDATE apps SET dedicated_build_instance = ? WHERE id = ?').run(on ? 1 : 0, appId);
    return records.toApp(this.requireApp(appId));
  }

  private ensureOrg(org: string, at: string): void {
    this.db.prepare('INSERT INTO orgs (id, created_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING').run(org, at);
  }

  private requireApp(appId: string): records.AppRow {
    const row = this.db.prepare('SELECT * FROM apps WHERE id = ?').get(appId) as records.AppRow | undefined;
    if (!row) throw storeErrors.appNotFound(appId);
    return row;
  }

  private readRelease(appId: string, number: number): ReleaseRecord | undefined {
    const row = this.db.prepare('SELECT * FROM releases WHERE app_id = ? AND number = ?').get(appId, number) as records.ReleaseRow | undefined;
    return row && records.toRelease(row);
  }
}
