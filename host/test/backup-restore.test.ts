import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { openPostgresStore } from '../src/store/postgres-store.js';
import { processesUnder } from '../../test/helpers/processes.js';
import { keyPath, s3, s3Bytes } from './helpers/s3-client.js';
import { type StoreServer, startStoreServer } from './helpers/store-server.js';
import { TestHost } from './helpers/test-host.js';

const run = promisify(execFile);

/**
 * Backup and restore of a whole runplan-host, with the real programs: a host serving one application
 * (fixtures/host/backup-probe) with a variable, linked to a PostgreSQL add-on with rows, a Redis add-on
 * with a key and a storage add-on with an object. `backup` runs while requests go on through the edge
 * (none may fail); the archive is restored into a new data folder on other ports beside the running
 * host, served, and asked over HTTPS through its own edge for the variable and the data; a push to it deploys.
 */

type Env = Record<string, string>;
/** A key no file name could be: a `..` segment, unicode, a space. */
const UNICODE_KEY = 'a/../ünï cödé.txt';
const codeOf = (r: { stdout: string; stderr: string }) => /RUNPLAN_HOST_E_[A-Z_]+/.exec(r.stderr + r.stdout)?.[0];

describe('runplan-host backup and restore', () => {
  let host: TestHost;
  let restored: TestHost | undefined;
  let key: string;
  let app: { id: string; gitRemote: string };
  let repo: string;
  let backups: string;
  let archive: string;
  let encrypted: string;
  let keyFile: string;
  const secrets: string[] = [];
  const addonEnv = async (name: string): Promise<Env> =>
    Object.fromEntries((await host.json<{ variables: { name: string; value: string }[] }>(['addon', 'env', name, '--show'])).variables.map((v) => [v.name, v.value]));

  beforeAll(async () => {
    host = await TestHost.create();
    await host.serve();
    key = await host.key('alice', 'acme');
    app = await host.json(['create', '--type', 'node', 'probe', '--region', 'par', '--org', 'acme']);
    repo = await host.repository('host/backup-probe');
    await host.git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
    for (const [name, value] of [
      ['CC_HEALTH_CHECK_PATH', '/health'],
      ['GREETING', 'hello from before the backup'],
      ['RELEASE_MARK', 'one'],
    ] as const)
      expect((await host.cli(['env', 'set', name, value, '--app', app.id])).code).toBe(0);
    for (const [kind, name] of [
      ['postgresql', 'db'],
      ['redis', 'cache'],
      ['storage', 'files'],
    ] as const) {
      await host.json(['addon', 'create', kind, name, '--org', 'acme']);
      expect((await host.cli(['link-addon', name, '--app', app.id])).code).toBe(0);
    }
    // The data, written as the application's own clients would, with the add-ons' variables.
    const db = await addonEnv('db');
    const client = new pg.Client({ connectionString: db.POSTGRESQL_ADDON_URI });
    await client.connect();
    await client.query('CREATE TABLE notes (id serial PRIMARY KEY, note text NOT NULL)');
    await client.query("INSERT INTO notes (note) VALUES ('first row'), ('second row')");
    await client.end();
    const cache = await addonEnv('cache');
    await run('redis-cli', ['-h', cache.REDIS_HOST ?? '', '-p', cache.REDIS_PORT ?? '', 'SET', 'greeting', 'kept by redis'], { env: { ...process.env, REDISCLI_AUTH: cache.REDIS_PASSWORD } });
    const files = await addonEnv('files');
    expect((await s3(files, 'PUT', '/photos')).status).toBe(200);
    expect((await s3(files, 'PUT', '/photos/cat.txt', 'a cat, in a bucket')).status).toBe(200);
    expect((await s3(files, 'PUT', keyPath('photos', UNICODE_KEY), 'ünïcödé, in a bucket', { headers: { 'Content-Type': 'text/plain; charset=utf-8' } })).status).toBe(200);
    expect((await s3(files, 'PUT', '/empty-bucket')).status).toBe(200);
    secrets.push(db.POSTGRESQL_ADDON_PASSWORD ?? '', cache.REDIS_PASSWORD ?? '', files.STORAGE_ADDON_KEY_SECRET ?? '', (await readFile(join(host.data, 'api-token'), 'utf8')).trim());
    const pushed = await host.push(repo, 'runplan', key);
    expect(pushed.code, pushed.output).toBe(0);
    backups = await tempDir('runplan-host-backups-');
    archive = join(backups, 'host.tar.gz');
    encrypted = join(backups, 'host.tar.gz.enc');
    keyFile = join(await tempDir('runplan-host-backup-key-'), 'backup.key');
    await run('sh', ['-c', `umask 077 && openssl rand -base64 32 > ${keyFile}`]);
  }, 600_000);

  afterAll(async () => {
    // Both stopped before either removes accounts: the two hosts' add-on servers run as the same add-on accounts.
    await restored?.stop();
    await host?.stop();
    await restored?.dispose();
    await host?.dispose();
    if (backups) await rm(backups, { recursive: true, force: true });
    if (keyFile) await rm(join(keyFile, '..'), { recursive: true, force: true });
  });

  it('backs up the whole host while it serves: no request fails, one 0600 archive with a checksummed manifest, no secret printed; encrypted with a key file, openssl opens it', async () => {
    expect((await host.get(app.id, '/')).json()).toMatchObject({ greeting: 'hello from before the backup', release: 'one' });
    const asking = host.keepAsking(app.id);
    const started = Date.now();
    const backup = await host.cli(['backup', '--to', archive]);
    const took = Date.now() - started;
    const requests = await asking.stop();
    expect(backup.code, backup.stdout + backup.stderr).toBe(0);
    expect(requests.failed).toEqual([]);
    expect(requests.sent).toBeGreaterThan(0);
    console.log(`backup took ${took} ms; ${requests.sent} requests meanwhile, none failed`);
    // Written under a temporary name and renamed: nothing else is left beside it.
    expect(await readdir(backups)).toEqual(['host.tar.gz']);
    expect((await stat(archive)).mode & 0o777).toBe(0o600);
    for (const secret of secrets) expect(backup.stdout + backup.stderr).not.toContain(secret);
    const manifest = JSON.parse((await run('tar', ['-xzOf', archive, 'manifest.json'])).stdout) as {
      runplanHost: string;
      storeSchema: number;
      store: string;
      entries: { path: string; sha256: string }[];
    };
    expect(manifest).toMatchObject({ runplanHost: expect.any(String), storeSchema: expect.any(Number), store: 'sqlite' });
    const paths = manifest.entries.map((e) => e.path);
    for (const expected of ['store.sqlite', 'settings.json', 'api-token', 'ssh/ssh_host_ed25519_key', `git/${app.id}.bundle`, 'edge/data/caddy/pki/authorities/local/root.crt'])
      expect(paths).toContain(expected);
    expect(paths.some((p) => /^addons\/postgresql\/addon_[0-9a-f-]+\.pgdump$/.test(p))).toBe(true);
    expect(paths.some((p) => /^addons\/redis\/addon_[0-9a-f-]+\.rdb$/.test(p))).toBe(true);
    // A storage add-on: an index of its buckets and objects and one numbered file per object, read from the gateway.
    const storageIndex = paths.find((p) => /^addons\/storage\/addon_[0-9a-f-]+\/index\.json$/.test(p)) ?? '';
    const index = JSON.parse((await run('tar', ['-xzOf', archive, storageIndex])).stdout) as { buckets: { name: string; objects: { key: string; file: string }[] }[] };
    expect(index.buckets.map((b) => b.name).sort()).toEqual(['empty-bucket', 'photos']);
    expect(index.buckets.flatMap((b) => b.objects.map((o) => o.key)).sort()).toEqual(['cat.txt', UNICODE_KEY].sort());
    expect(paths).toContain(storageIndex.replace(/index\.json$/, 'objects/0'));
    for (const e of manifest.entries) expect(e.sha256).toMatch(/^[0-9a-f]{64}$/);

    // Encrypted with the operator's key file, in OpenSSL's format: openssl alone decrypts it.
    const sealed = await host.cli(['backup', '--to', encrypted, '--encrypt-with', keyFile]);
    expect(sealed.code, sealed.stdout + sealed.stderr).toBe(0);
    expect((await stat(encrypted)).mode & 0o777).toBe(0o600);
    expect((await readFile(encrypted)).subarray(0, 8).toString()).toBe('Salted__');
    const opened = await run('sh', ['-c', `openssl enc -d -aes-256-cbc -pbkdf2 -iter 100000 -md sha256 -pass file:${keyFile} -in ${encrypted} | tar -xzO manifest.json`]);
    expect(JSON.parse(opened.stdout)).toMatchObject({ store: 'sqlite' });

    const nowhere = await host.cli(['backup', '--to', join(backups, 'no-such-folder', 'host.tar.gz')]);
    expect(codeOf(nowhere)).toBe('RUNPLAN_HOST_E_BACKUP_FAILED');
  }, 300_000);

  it('refuses a damaged archive (naming the entry), an encrypted one without its key or with another, and a folder that holds a host, restoring nothing', async () => {
    const unpacked = await tempDir('runplan-host-unpacked-');
    await run('tar', ['-xzf', archive, '-C', unpacked]);
    await writeFile(join(unpacked, 'api-token'), 'not the token\n');
    const damaged = join(backups, 'damaged.tar.gz');
    await run('tar', ['-czf', damaged, '-C', unpacked, '.']);
    const target = join(await tempDir('runplan-host-refused-'), 'data');
    const refused = await run(process.execPath, [join(import.meta.dirname, '..', 'dist', 'cli.js'), 'restore', damaged, '--data', target]).catch((e: { stdout: string; stderr: string }) => e);
    expect(codeOf(refused)).toBe('RUNPLAN_HOST_E_RESTORE_CORRUPT');
    expect(refused.stderr).toContain('api-token');
    expect(existsSync(target)).toBe(false);
    // Nothing half-restored beside it either (the folders a restore builds in).
    expect(await readdir(join(target, '..'))).toEqual([]);

    // An archive of a PostgreSQL store needs a database to go into (--store).
    await run('tar', ['-xzf', archive, '-C', unpacked]);
    const manifest = JSON.parse(await readFile(join(unpacked, 'manifest.json'), 'utf8')) as { store: string };
    await writeFile(join(unpacked, 'manifest.json'), JSON.stringify({ ...manifest, store: 'postgresql' }));
    const elsewhere = join(backups, 'postgres-store.tar.gz');
    await run('tar', ['-czf', elsewhere, '-C', unpacked, '.']);
    const noStore = await run(process.execPath, [join(import.meta.dirname, '..', 'dist', 'cli.js'), 'restore', elsewhere, '--data', target]).catch((e: { stdout: string; stderr: string }) => e);
    expect(codeOf(noStore)).toBe('RUNPLAN_HOST_E_RESTORE_FAILED');
    expect(existsSync(target)).toBe(false);
    await rm(unpacked, { recursive: true, force: true });

    // An encrypted archive: without its key file, and with another one.
    const locked = await run(process.execPath, [join(import.meta.dirname, '..', 'dist', 'cli.js'), 'restore', encrypted, '--data', target]).catch((e: { stdout: string; stderr: string }) => e);
    expect(codeOf(locked)).toBe('RUNPLAN_HOST_E_INPUT_USAGE');
    expect(locked.stderr).toContain('--decrypt-with');
    const otherKey = join(backups, 'other.key');
    await writeFile(otherKey, 'not the key the archive was made with\n', { mode: 0o600 });
    const wrongKey = await run(process.execPath, [join(import.meta.dirname, '..', 'dist', 'cli.js'), 'restore', encrypted, '--decrypt-with', otherKey, '--data', target]).catch(
      (e: { stdout: string; stderr: string }) => e,
    );
    expect(codeOf(wrongKey)).toBe('RUNPLAN_HOST_E_RESTORE_CORRUPT');
    expect(existsSync(target)).toBe(false);
    expect(await readdir(join(target, '..'))).toEqual([]);

    // --store is for the archive of a PostgreSQL store.
    const sqliteStore = await run(process.execPath, [join(import.meta.dirname, '..', 'dist', 'cli.js'), 'restore', archive, '--store', 'postgres://nobody@127.0.0.1:1/none', '--data', target]).catch(
      (e: { stdout: string; stderr: string }) => e,
    );
    expect(codeOf(sqliteStore)).toBe('RUNPLAN_HOST_E_INPUT_USAGE');
    expect(existsSync(target)).toBe(false);

    const over = await host.cli(['restore', archive]);
    expect(codeOf(over)).toBe('RUNPLAN_HOST_E_RESTORE_TARGET_NOT_EMPTY');
    expect((await host.get(app.id, '/')).status).toBe(200);
  }, 120_000);

  it('restores the encrypted archive beside the running host on other ports: serve brings the application back with its variable and its data, and a push deploys', async () => {
    const started = Date.now();
    // The encrypted archive: what an operator keeps off the machine.
    const r = await TestHost.restore(encrypted, { args: ['--decrypt-with', keyFile] });
    restored = r.host;
    expect(r.code, r.output).toBe(0);
    for (const secret of secrets) expect(r.output).not.toContain(secret);
    // The Ceph cluster restore made to put the objects back is stopped: serve starts it.
    expect(processesUnder(join(restored.data, '..'))).toEqual([]);
    expect(r.output).toMatch(/the storage add-on files: 2 bucket\(s\), 2 object\(s\)/);
    await restored.serve();
    console.log(`restore and serve took ${Date.now() - started} ms`);
    const about = (await restored.get(app.id, '/')).json();
    expect(about).toMatchObject({ app: 'host-backup-probe', greeting: 'hello from before the backup', release: 'one' });
    expect((await restored.get(app.id, '/rows')).json()).toEqual({ rows: ['first row', 'second row'] });
    expect((await restored.get(app.id, '/redis?key=greeting')).json()).toEqual({ value: 'kept by redis' });
    expect((await restored.get(app.id, '/object?bucket=photos&key=cat.txt')).json()).toEqual({ status: 200, body: 'a cat, in a bucket' });
    // Through S3 with the restored add-on's variables (its user made again in the restored host's gateway: new keys): each object byte-identical, the empty bucket kept.
    const files = Object.fromEntries((await restored.json<{ variables: { name: string; value: string }[] }>(['addon', 'env', 'files', '--show'])).variables.map((v) => [v.name, v.value]));
    expect(files.STORAGE_ADDON_KEY_ID).not.toBe((await addonEnv('files')).STORAGE_ADDON_KEY_ID);
    const cat = await s3Bytes(files, 'GET', '/photos/cat.txt');
    expect({ status: cat.status, same: cat.bytes.equals(Buffer.from('a cat, in a bucket')) }).toEqual({ status: 200, same: true });
    const unicode = await s3Bytes(files, 'GET', keyPath('photos', UNICODE_KEY));
    expect({ same: unicode.bytes.equals(Buffer.from('ünïcödé, in a bucket')), type: unicode.headers['content-type'] }).toEqual({ same: true, type: 'text/plain; charset=utf-8' });
    expect((await s3(files, 'GET', '/')).body).toContain('<Name>empty-bucket</Name>');
    expect(await s3(files, 'GET', '/empty-bucket?list-type=2')).toMatchObject({ status: 200, body: expect.not.stringContaining('<Contents>') });
    // Its own add-on servers answer, not the original host's: a row added to the original is not seen.
    const db = await addonEnv('db');
    const client = new pg.Client({ connectionString: db.POSTGRESQL_ADDON_URI });
    await client.connect();
    await client.query("INSERT INTO notes (note) VALUES ('only in the original')");
    await client.end();
    expect((await restored.get(app.id, '/rows')).json()).toEqual({ rows: ['first row', 'second row'] });

    // The same key pushes to the restored host (its keys came back), which deploys a new release.
    const remote = await restored.json<{ apps: { id: string; gitRemote: string }[] }>(['apps']);
    const restoredRemote = remote.apps.find((a) => a.id === app.id)?.gitRemote ?? '';
    expect(restoredRemote).toContain(`:${restored.ports.ssh}/`);
    await host.git(repo, ['remote', 'add', 'restored', restoredRemote]);
    await writeFile(join(repo, 'CHANGES'), 'after the restore\n');
    await host.commit(repo, 'after the restore');
    const pushed = await restored.push(repo, 'restored', key);
    expect(pushed.code, pushed.output).toBe(0);
    const head = (await host.git(repo, ['rev-parse', 'HEAD'])).output.trim();
    expect((await restored.get(app.id, '/')).json()).toMatchObject({ commit: head, greeting: 'hello from before the backup' });
  }, 600_000);
});

describe('runplan-host backup and restore of a PostgreSQL store', () => {
  let server: StoreServer;
  let host: TestHost;
  let restored: TestHost | undefined;
  let backups: string;

  beforeAll(async () => {
    server = await startStoreServer('runplan-host-backup-store-');
    backups = await tempDir('runplan-host-backups-');
  }, 120_000);

  afterAll(async () => {
    await restored?.dispose();
    await host?.dispose();
    await server?.stop();
    if (backups) await rm(backups, { recursive: true, force: true });
  });

  it("dumps the store with pg_dump and loads it with pg_restore into the database restore's --store names, the password never printed", async () => {
    const [from, into] = [await server.newDatabase('backup_from'), await server.newDatabase('backup_into')];
    host = await TestHost.create({ initArgs: ['--store', from] });
    await host.serve();
    await host.key('alice', 'acme');
    const app = await host.json<{ id: string }>(['create', '--type', 'node', 'web', '--region', 'par', '--org', 'acme']);
    await host.stop();
    const archive = join(backups, 'host.tar.gz');
    const backup = await host.cli(['backup', '--to', archive]);
    expect(backup.code, backup.stdout + backup.stderr).toBe(0);
    expect(backup.stdout + backup.stderr).not.toContain(server.password);
    const manifest = JSON.parse((await run('tar', ['-xzOf', archive, 'manifest.json'])).stdout) as { store: string; entries: { path: string }[] };
    expect(manifest.store).toBe('postgresql');
    expect(manifest.entries.map((e) => e.path)).toContain('store.pgdump');

    const r = await TestHost.restore(archive, { args: ['--store', into] });
    restored = r.host;
    expect(r.code, r.output).toBe(0);
    expect(r.output).not.toContain(server.password);
    expect((await readFile(join(restored.data, 'store-url'), 'utf8')).trim()).toBe(into);
    const store = await openPostgresStore(into);
    try {
      expect((await store.listApps()).map((a) => a.id)).toEqual([app.id]);
      expect((await store.listKeys()).map((k) => k.org)).toEqual(['acme']);
    } finally {
      await store.close();
    }
  }, 300_000);
});
