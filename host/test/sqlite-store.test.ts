import { spawn } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { build } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { HostErrors } from '../src/errors.js';
import { latestVersion, migrations } from '../src/store/migrations.js';
import { openSqliteStore, type SqliteStore } from '../src/store/sqlite-store.js';
import { describeHostStore, ManualClock } from './store-contract.js';

describeHostStore('SQLite', async ({ clock }) => openSqliteStore(join(await tempDir('runplan-host-store-'), 'store.sqlite'), { clock }));

// The schema of version 1 as it was released, written here by hand (not from migrations.ts), so a later
// edit of migration 1 cannot hide that stores made by that version no longer open.
const V1_SCHEMA = `
  CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);
  CREATE TABLE orgs (id TEXT PRIMARY KEY, created_at TEXT NOT NULL);
  CREATE TABLE apps (id TEXT PRIMARY KEY, name TEXT NOT NULL, org TEXT NOT NULL REFERENCES orgs(id),
    zone TEXT NOT NULL CHECK (zone IN ('par', 'mtl')), type TEXT NOT NULL CHECK (type IN ('node', 'ruby', 'play1')),
    created_at TEXT NOT NULL, current_release INTEGER, UNIQUE (org, name),
    FOREIGN KEY (id, current_release) REFERENCES releases(app_id, number));
  CREATE TABLE variables (app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE, name TEXT NOT NULL,
    value TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (app_id, name));
  CREATE TABLE ssh_keys (id TEXT PRIMARY KEY, org TEXT NOT NULL REFERENCES orgs(id), public_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL, comment TEXT NOT NULL, added_at TEXT NOT NULL, UNIQUE (org, public_key));
  CREATE TABLE releases (app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE, number INTEGER NOT NULL CHECK (number >= 1),
    cause TEXT NOT NULL CHECK (cause IN ('push', 'restart', 'rollback')), commit_sha TEXT NOT NULL, requested_by TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('deploying', 'succeeded', 'failed')), variables TEXT NOT NULL, plan TEXT,
    plan_digest TEXT, port INTEGER, error_code TEXT, started_at TEXT NOT NULL, finished_at TEXT, PRIMARY KEY (app_id, number));
  INSERT INTO schema_migrations VALUES (1, '2026-01-01T00:00:00.000Z');
  INSERT INTO orgs VALUES ('orga_old', '2026-01-01T00:00:00.000Z');
  INSERT INTO apps VALUES ('app_00000000-0000-4000-8000-000000000001', 'old', 'orga_old', 'mtl', 'ruby', '2026-01-01T00:00:00.000Z', NULL);
  INSERT INTO releases VALUES ('app_00000000-0000-4000-8000-000000000001', 1, 'push', '${'c'.repeat(40)}', 'cli', 'succeeded',
    '{"A":"1"}', '{"steps":[]}', 'sha256:old', 40001, NULL, '2026-01-01T00:00:00.000Z', '2026-01-01T00:01:00.000Z');
  UPDATE apps SET current_release = 1;
`;
const OLD_APP = 'app_00000000-0000-4000-8000-000000000001';
const ROOT = join(import.meta.dirname, '..', '..');

// A process that opens the store, waits for "go" on stdin, begins `count` releases of one application
// and prints their numbers: the store's own code, bundled, since the child cannot load TypeScript.
const BEGIN_RELEASES = `
const { openSqliteStore } = require(process.argv[2]);
(async () => {
  const store = await openSqliteStore(process.argv[3]);
  process.stdout.write('ready\\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const numbers = [];
  for (let i = 0; i < Number(process.argv[5]); i++) {
    numbers.push((await store.beginRelease({ appId: process.argv[4], cause: 'push', commit: 'a'.repeat(40), by: 'cli', variables: {} })).number);
  }
  await store.close();
  process.stdout.write(JSON.stringify(numbers) + '\\n');
  process.stdin.destroy();
})().catch((error) => { console.error(error); process.exit(1); });
`;

async function beginInProcesses(file: string, appId: string, processes: number, count: number): Promise<number[][]> {
  const dir = await tempDir('runplan-host-store-child-');
  const bundle = join(dir, 'store.cjs');
  await build({
    entryPoints: [join(ROOT, 'host/src/store/sqlite-store.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile: bundle,
    external: ['better-sqlite3', 'runplan'],
    logLevel: 'error',
  });
  const script = join(dir, 'begin.cjs');
  writeFileSync(script, BEGIN_RELEASES);
  const children = Array.from({ length: processes }, () => {
    const child = spawn(process.execPath, [script, bundle, file, appId, String(count)], { env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk) => {
      err += chunk;
    });
    const ready = new Promise<void>((resolve) => child.stdout.on('data', () => out.startsWith('ready\n') && resolve()));
    const done = new Promise<number[]>((resolve, reject) =>
      child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.split('\n')[1] ?? '') as number[]) : reject(new Error(`child exited ${code}: ${err}`)))),
    );
    return { child, ready, done };
  });
  // All open before any begins, so their transactions overlap.
  await Promise.all(children.map((c) => c.ready));
  for (const { child } of children) child.stdin.write('go\n');
  return Promise.all(children.map((c) => c.done));
}

function writeRaw(file: string, sql: string): void {
  const db = new Database(file);
  db.exec(sql);
  db.close();
}

describe('SqliteStore', () => {
  const opened: SqliteStore[] = [];
  async function openAt(file: string, clock = new ManualClock()): Promise<SqliteStore> {
    const store = await openSqliteStore(file, { clock });
    opened.push(store);
    return store;
  }
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  it('keeps the file and its -wal and -shm files 0600, whatever the umask', async () => {
    const file = join(await tempDir('runplan-host-store-'), 'store.sqlite');
    const umask = process.umask(0);
    try {
      const store = await openAt(file);
      await store.createApp({ name: 'web', org: 'orga_a', zone: 'par', type: 'node' });
      for (const path of [file, `${file}-wal`, `${file}-shm`]) expect({ path, mode: statSync(path).mode & 0o777 }).toEqual({ path, mode: 0o600 });
    } finally {
      process.umask(umask);
    }
  });

  it('puts back 0600 on a store whose mode was widened', async () => {
    const file = join(await tempDir('runplan-host-store-'), 'store.sqlite');
    writeFileSync(file, '', { mode: 0o644 });
    await openAt(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('keeps everything across close and reopen, and goes on numbering', async () => {
    const file = join(await tempDir('runplan-host-store-'), 'store.sqlite');
    const first = await openAt(file);
    const web = await first.createApp({ name: 'web', org: 'orga_a', zone: 'par', type: 'node' });
    await first.changeVariables(web.id, { A: '1' }, []);
    const key = await first.addKey({ org: 'orga_a', publicKey: 'ssh-ed25519 AAAA', fingerprint: 'SHA256:x', comment: '' });
    await first.beginRelease({ appId: web.id, cause: 'push', commit: 'a'.repeat(40), by: key.id, variables: { A: '1' } });
    await first.finishRelease(web.id, 1, { status: 'succeeded', port: 40000, plan: { a: [1] }, planDigest: 'sha256:d' });
    await first.appendLog(web.id, 1, ['one', 'two']);
    await first.close();

    const again = await openAt(file);
    expect(await again.findApp('web')).toEqual({ ...web, currentRelease: 1 });
    expect(await again.variables(web.id)).toEqual({ A: '1' });
    expect(await again.findKey(key.id)).toEqual(key);
    expect(await again.release(web.id, 1)).toMatchObject({ status: 'succeeded', plan: { a: [1] }, port: 40000 });
    expect(await again.releaseLog(web.id, 1)).toEqual(['one', 'two']);
    expect((await again.beginRelease({ appId: web.id, cause: 'restart', commit: 'a'.repeat(40), by: 'cli', variables: {} })).number).toBe(2);
  });

  it('migrates a store made by version 1, keeping its data', async () => {
    const file = join(await tempDir('runplan-host-store-'), 'store.sqlite');
    writeRaw(file, V1_SCHEMA);
    const clock = new ManualClock();
    const store = await openAt(file, clock);
    expect(await store.findApp('old')).toMatchObject({ id: OLD_APP, org: 'orga_old', zone: 'mtl', type: 'ruby', currentRelease: 1 });
    expect(await store.release(OLD_APP, 1)).toMatchObject({ variables: { A: '1' }, plan: { steps: [] }, planDigest: 'sha256:old', port: 40001 });
    await store.appendLog(OLD_APP, 1, ['logged after the migration']);
    expect(await store.releaseLog(OLD_APP, 1)).toEqual(['logged after the migration']);
    await store.close();

    const raw = new Database(file, { readonly: true });
    const versions = raw.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all();
    raw.close();
    expect(versions).toEqual([{ version: 1, applied_at: '2026-01-01T00:00:00.000Z' }, ...migrations.slice(1).map((m) => ({ version: m.version, applied_at: clock.now().toISOString() }))]);
  });

  it('refuses a store made by a newer version, naming the file, and leaves its schema alone', async () => {
    const file = join(await tempDir('runplan-host-store-'), 'store.sqlite');
    writeRaw(file, `${V1_SCHEMA} INSERT INTO schema_migrations VALUES (${latestVersion + 7}, '2027-01-01T00:00:00.000Z');`);
    await expect(openSqliteStore(file)).rejects.toMatchObject({
      code: HostErrors.STORE_NEWER.code,
      file,
      message: expect.stringContaining(`version ${latestVersion + 7}`),
      details: { unknownVersions: [latestVersion + 7], latestVersion },
    });
    const raw = new Database(file, { readonly: true });
    const tables = raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'release_logs'").all();
    raw.close();
    expect(tables).toEqual([]);
  });

  it('refuses a file that is not a store, and a folder that does not exist, with the file named', async () => {
    const dir = await tempDir('runplan-host-store-');
    const garbage = join(dir, 'store.sqlite');
    writeFileSync(garbage, 'not a database, just text that is long enough to be read as a header '.repeat(20));
    await expect(openSqliteStore(garbage)).rejects.toMatchObject({ code: HostErrors.STORE_OPEN_FAILED.code, file: garbage });
    const missing = join(dir, 'no-such-folder', 'store.sqlite');
    await expect(openSqliteStore(missing)).rejects.toMatchObject({ code: HostErrors.STORE_OPEN_FAILED.code, file: missing });
  });

  it('never gives two processes beginning releases of one application at once the same number', async () => {
    const file = join(await tempDir('runplan-host-store-'), 'store.sqlite');
    const store = await openAt(file);
    const web = await store.createApp({ name: 'web', org: 'orga_a', zone: 'par', type: 'node' });
    const numbers = await beginInProcesses(file, web.id, 3, 30);
    expect(numbers.map((n) => n.length)).toEqual([30, 30, 30]);
    expect(numbers.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 90 }, (_, i) => i + 1));
  });

  it('uses WAL and applies every migration once when two connections open one file', async () => {
    const file = join(await tempDir('runplan-host-store-'), 'store.sqlite');
    const [a, b] = await Promise.all([openAt(file), openAt(file)]);
    const web = await a.createApp({ name: 'web', org: 'orga_a', zone: 'par', type: 'node' });
    // Alternating connections: each takes the write lock before reading the last number.
    const begun = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).beginRelease({ appId: web.id, cause: 'push', commit: 'a'.repeat(40), by: 'cli', variables: {} })));
    expect(begun.map((r) => r.number).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.prepare('SELECT COUNT(*) FROM schema_migrations').pluck().get()).toBe(migrations.length);
    raw.close();
  });
});
