/**
 * `runplan-host migrate-store`: copies an SQLite store into an empty PostgreSQL
 * one, table by table in one transaction, then compares what both hold (rows
 * and a checksum per table) before it commits: a copy that differs is rolled
 * back, and the SQLite store is never changed.
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { HostErrors } from '../errors.js';
import { openPostgresStore, urlWithoutPassword } from './postgres-store.js';
import { openSqliteStore } from './sqlite-store.js';

/**
 * Every table, parents before children. `apps.current_release` refers to a
 * release, so applications are copied without it and given it once releases are in.
 */
const TABLES = ['orgs', 'apps', 'variables', 'exposed_variables', 'ssh_keys', 'releases', 'release_logs', 'addons', 'addon_links', 'app_links', 'app_users', 'app_domains'] as const;

/** Columns only PostgreSQL has: SQLite's rowid plays their part there (the order keys were added in). */
const POSTGRES_ONLY: Readonly<Record<string, readonly string[]>> = { ssh_keys: ['added_order'] };

/** SQLite's rowid order is the order ssh_keys were added: copied in that order, PostgreSQL numbers them alike. */
const COPY_ORDER: Readonly<Record<string, string>> = { ssh_keys: 'rowid' };

export interface TableCopy {
  readonly table: string;
  readonly rows: number;
  /** SHA-256 of the table's rows, each as JSON of its values in column order, sorted. */
  readonly checksum: string;
}

type Row = Record<string, unknown>;

/** One value as both databases give it: a boolean PostgreSQL keeps is SQLite's 0 or 1. */
function canonical(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'bigint') return Number(value);
  return value;
}

function checksumOf(rows: readonly Row[], columns: readonly string[]): string {
  const lines = rows.map((row) => JSON.stringify(columns.map((c) => canonical(row[c])))).sort();
  const hash = createHash('sha256');
  for (const line of lines) hash.update(`${line}\n`);
  return hash.digest('hex');
}

/** Copies the SQLite store `file` into the empty PostgreSQL database at `url`; returns what each table holds in both. */
export async function migrateStore(file: string, url: string): Promise<TableCopy[]> {
  // Opened once through the store: an SQLite store of an older version is brought to the current schema first,
  // and PostgreSQL gets the same schema (or is refused if a newer runplan-host made it).
  await (await openSqliteStore(file)).close();
  await (await openPostgresStore(url)).close();
  const source = new Database(file, { readonly: true, fileMustExist: true });
  const target = new pg.Client({ connectionString: url });
  target.on('error', () => {});
  await target.connect();
  try {
    await target.query('BEGIN');
    // Nobody writes the target while it is filled and compared.
    await target.query(`LOCK TABLE ${TABLES.join(', ')} IN EXCLUSIVE MODE`);
    for (const table of TABLES) {
      const { rows } = await target.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
      if (Number(rows[0]?.n) > 0) {
        throw HostErrors.STORE_MIGRATION_FAILED.create({
          message: `the PostgreSQL store ${urlWithoutPassword(url)} is not empty (table ${table} has ${rows[0]?.n} rows): migrate-store copies into an empty database only.`,
          details: { table },
        });
      }
    }
    const copies: TableCopy[] = [];
    // The columns both databases have, in SQLite's order: what is copied, and what is compared.
    const columnsOf = new Map(
      TABLES.map((table) => [table, (source.prepare(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`).pluck().all() as string[]).filter((c) => !POSTGRES_ONLY[table]?.includes(c))]),
    );
    for (const table of TABLES) {
      const columns = columnsOf.get(table) as string[];
      const rows = source.prepare(`SELECT ${columns.join(', ')} FROM ${table} ORDER BY ${COPY_ORDER[table] ?? 'rowid'}`).all() as Row[];
      const copied = table === 'apps' ? rows.map((r) => ({ ...r, current_release: null })) : rows;
      await insertRows(target, table, columns, copied);
      if (table === 'releases') {
        const apps = source.prepare('SELECT id, current_release FROM apps WHERE current_release IS NOT NULL').all() as { id: string; current_release: number }[];
        for (const app of apps) await target.query('UPDATE apps SET current_release = $1 WHERE id = $2', [app.current_release, app.id]);
      }
    }
    // Compared once all is in: what PostgreSQL holds, read back, against what SQLite holds.
    for (const table of TABLES) {
      const columns = columnsOf.get(table) as string[];
      const mine = source.prepare(`SELECT ${columns.join(', ')} FROM ${table}`).all() as Row[];
      const theirs = (await target.query<Row>(`SELECT ${columns.join(', ')} FROM ${table}`)).rows;
      const expected = { rows: mine.length, checksum: checksumOf(mine, columns) };
      const found = { rows: theirs.length, checksum: checksumOf(theirs, columns) };
      if (expected.rows !== found.rows || expected.checksum !== found.checksum) {
        throw HostErrors.STORE_MIGRATION_FAILED.create({
          message: `table ${table} differs once copied: SQLite has ${expected.rows} rows (sha256 ${expected.checksum.slice(0, 12)}), PostgreSQL ${found.rows} (sha256 ${found.checksum.slice(0, 12)}); nothing was kept.`,
          details: { table, expected, found },
        });
      }
      copies.push({ table, ...expected });
    }
    await target.query('COMMIT');
    return copies;
  } catch (error) {
    await target.query('ROLLBACK').catch(() => {});
    if (HostErrors.STORE_MIGRATION_FAILED.is(error)) throw error;
    throw HostErrors.STORE_MIGRATION_FAILED.create({ message: `copying the store into ${urlWithoutPassword(url)} failed: ${(error as Error).message}; nothing was kept.`, cause: error });
  } finally {
    source.close();
    await target.end().catch(() => {});
  }
}

// PostgreSQL takes at most 65,535 parameters in one statement.
const ROWS_PER_INSERT = 500;

async function insertRows(client: pg.Client, table: string, columns: readonly string[], rows: readonly Row[]): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const batch = rows.slice(start, start + ROWS_PER_INSERT);
    const values: unknown[] = [];
    const tuples = batch.map((row) => `(${columns.map((c) => `$${values.push(toPostgres(table, c, row[c]))}`).join(', ')})`);
    await client.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`, values);
  }
}

/** SQLite keeps PostgreSQL's booleans as 0 and 1. */
function toPostgres(table: string, column: string, value: unknown): unknown {
  if (table === 'apps' && column === 'dedicated_build_instance') return value === 1;
  return value;
}
