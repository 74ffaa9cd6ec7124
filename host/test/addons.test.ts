import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { formatIdentity, identifyProcess, type ProcessIdentity } from 'runplan/process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processesUnder } from '../../test/helpers/processes.js';
import { freePort } from '../../test/helpers/ports.js';
import { tempDir } from '../../test/helpers/temp.js';
import { removeAddonAccount } from '../src/addons/addon-accounts.js';
import { PostgresqlProvider } from '../src/addons/postgresql.js';
import { RedisProvider } from '../src/addons/redis.js';
import { StorageProvider, tenantOf } from '../src/addons/storage.js';
import { removeAddonAccountsUnder } from './helpers/addon-accounts.js';
import { s3 } from './helpers/s3-client.js';
import { HostErrors } from '../src/errors.js';

/**
 * The add-on providers against the real servers (Debian's PostgreSQL and redis-server):
 * what a linked app's variables reach, that add-ons cannot reach one another, and that
 * the host leaves nothing running and keeps the data across a restart.
 */

interface Run {
  readonly ok: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } }, (error, stdout, stderr) =>
      resolve({ ok: !error, stdout: String(stdout).trim(), stderr: String(stderr).trim() }),
    );
  });
}

/** psql as an app would run it, with the add-on's variables. */
function psql(v: Record<string, string>, sql: string, db = v.POSTGRESQL_ADDON_DB ?? ''): Promise<Run> {
  return run('psql', ['-X', '-tA', '-h', v.POSTGRESQL_ADDON_HOST ?? '', '-p', v.POSTGRESQL_ADDON_PORT ?? '', '-U', v.POSTGRESQL_ADDON_USER ?? '', '-d', db, '-c', sql], {
    PGPASSWORD: v.POSTGRESQL_ADDON_PASSWORD ?? '',
  });
}

function redisCli(v: Record<string, string>, ...command: string[]): Promise<Run> {
  return run('redis-cli', ['--no-auth-warning', '-a', v.REDIS_PASSWORD ?? '', '-h', v.REDIS_HOST ?? '', '-p', v.REDIS_PORT ?? '', ...command]);
}

/** True when nothing listens on the loopback port any more. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const newId = () => `addon_${randomUUID()}`;

describe('PostgreSQL add-ons (one cluster made by the host)', () => {
  let root: string;
  let dir: string;
  let provider: PostgresqlProvider;
  const a = { id: newId(), name: 'db-a' };
  const b = { id: newId(), name: 'db-b' };
  let va: Record<string, string>;
  let vb: Record<string, string>;
  let configB: Record<string, string>;

  beforeAll(async () => {
    root = await tempDir('runplan-host-addons-pg-');
    dir = join(root, 'data', 'addons', 'postgresql');
    provider = new PostgresqlProvider({ dir });
    await provider.start();
  });
  afterAll(async () => {
    await provider.stop();
  });

  it('creates a role and a database an app reaches with the variables, and the URI', async () => {
    const created = await provider.create(a);
    va = created.variables;
    expect(Object.keys(va).sort()).toEqual(['POSTGRESQL_ADDON_DB', 'POSTGRESQL_ADDON_HOST', 'POSTGRESQL_ADDON_PASSWORD', 'POSTGRESQL_ADDON_PORT', 'POSTGRESQL_ADDON_URI', 'POSTGRESQL_ADDON_USER']);
    expect(va.POSTGRESQL_ADDON_HOST).toBe('127.0.0.1');
    expect(va.POSTGRESQL_ADDON_PORT).toBe(String(provider.port));
    expect(va.POSTGRESQL_ADDON_URI).toBe(`postgresql://${va.POSTGRESQL_ADDON_USER}:${va.POSTGRESQL_ADDON_PASSWORD}@127.0.0.1:${provider.port}/${va.POSTGRESQL_ADDON_DB}`);
    expect(provider.variables(created.config)).toEqual(va);
    expect(await psql(va, 'select 1')).toMatchObject({ ok: true, stdout: '1' });
    expect(await run('psql', ['-X', '-tA', va.POSTGRESQL_ADDON_URI ?? '', '-c', 'select current_user = current_database()'])).toMatchObject({ ok: true, stdout: 't' });
    expect(await psql(va, "create table notes (body text); insert into notes values ('kept')")).toMatchObject({ ok: true });
    // A wrong password is refused over TCP: the socket's trust is not reachable from there.
    expect((await psql({ ...va, POSTGRESQL_ADDON_PASSWORD: 'wrong' }, 'select 1')).stderr).toMatch(/password authentication failed/);
  });

  it("does not let a second add-on's role into the first's database", async () => {
    const created = await provider.create(b);
    vb = created.variables;
    configB = created.config;
    expect(await psql(vb, 'select 1')).toMatchObject({ ok: true, stdout: '1' });
    const intrusion = await psql(vb, 'select * from notes', va.POSTGRESQL_ADDON_DB);
    expect(intrusion.ok).toBe(false);
    expect(intrusion.stderr).toMatch(/permission denied for database/);
  });

  it('removes the role and the database', async () => {
    await provider.remove(b, configB);
    const admin = (sql: string) => run('psql', ['-X', '-tA', '-h', provider.socketDir, '-p', String(provider.port), '-U', 'postgres', '-d', 'postgres', '-c', sql]);
    expect(await admin(`select count(*) from pg_roles where rolname = '${vb.POSTGRESQL_ADDON_USER}'`)).toMatchObject({ ok: true, stdout: '0' });
    expect(await admin(`select count(*) from pg_database where datname = '${vb.POSTGRESQL_ADDON_DB}'`)).toMatchObject({ ok: true, stdout: '0' });
    expect((await psql(vb, 'select 1')).ok).toBe(false);
    // Removing again finds nothing to drop, and fails nothing.
    await provider.remove(b, configB);
  });

  it('stops by PID leaving no process and the port free; a new provider on the folder finds the data', async () => {
    const pid = provider.pid as number;
    expect(processesUnder(dir).length).toBeGreaterThan(1);
    await provider.stop();
    expect(processesUnder(dir)).toEqual([]);
    expect(() => process.kill(pid, 0)).toThrow();
    expect(await portFree(Number(va.POSTGRESQL_ADDON_PORT))).toBe(true);

    provider = new PostgresqlProvider({ dir });
    await provider.start();
    expect(provider.port).toBe(Number(va.POSTGRESQL_ADDON_PORT));
    expect(await psql(va, 'select body from notes')).toMatchObject({ ok: true, stdout: 'kept' });
  });
});

describe('Redis add-ons (one redis-server per add-on)', () => {
  let root: string;
  let dir: string;
  let provider: RedisProvider;
  const a = { id: newId(), name: 'cache-a' };
  const b = { id: newId(), name: 'cache-b' };
  let configA: Record<string, string>;
  let va: Record<string, string>;
  let vb: Record<string, string>;
  let configB: Record<string, string>;
  let blocker: Server | undefined;

  beforeAll(async () => {
    root = await tempDir('runplan-host-addons-redis-');
    dir = join(root, 'data', 'addons', 'redis');
    provider = new RedisProvider({ dir });
  });
  afterAll(async () => {
    await provider.stop();
    blocker?.close();
    await removeAddonAccountsUnder(join(root, 'data', 'addons'));
  });

  it('creates an instance an app reaches with its password, and with nothing else', async () => {
    const created = await provider.create(a);
    configA = created.config;
    va = created.variables;
    expect(va).toEqual({
      REDIS_HOST: '127.0.0.1',
      REDIS_PORT: expect.stringMatching(/^\d+$/),
      REDIS_PASSWORD: expect.stringMatching(/^[0-9a-f]{48}$/),
      REDIS_URL: `redis://:${va.REDIS_PASSWORD}@127.0.0.1:${va.REDIS_PORT}`,
    });
    expect(provider.variables(configA)).toEqual(va);
    expect(await redisCli(va, 'ping')).toMatchObject({ ok: true, stdout: 'PONG' });
    // REDIS_URL as an app's client reads it (redis-rb, which Sidekiq uses).
    const ruby = `r = Redis.new(url: ENV.fetch("REDIS_URL")); puts r.set("greeting", "kept")`;
    expect(await run('ruby', ['-rredis', '-e', ruby], { REDIS_URL: va.REDIS_URL ?? '' })).toMatchObject({ ok: true, stdout: 'OK' });
    expect((await redisCli({ ...va, REDIS_PASSWORD: 'wrong' }, 'get', 'greeting')).stdout).toMatch(/WRONGPASS|NOAUTH/);
  });

  it("gives a second add-on its own instance, which the first's password does not open", async () => {
    const created = await provider.create(b);
    configB = created.config;
    vb = created.variables;
    expect(vb.REDIS_PORT).not.toBe(va.REDIS_PORT);
    expect(await redisCli(vb, 'get', 'greeting')).toMatchObject({ ok: true, stdout: '' });
    expect((await redisCli({ ...vb, REDIS_PASSWORD: va.REDIS_PASSWORD ?? '' }, 'get', 'greeting')).stdout).toMatch(/WRONGPASS|NOAUTH/);
  });

  it('removes an instance: its process, port and folder', async () => {
    const pid = provider.pid(b.id) as number;
    await provider.remove(b, configB);
    expect(() => process.kill(pid, 0)).toThrow();
    expect(await portFree(Number(vb.REDIS_PORT))).toBe(true);
    expect(existsSync(provider.folder(b.id))).toBe(false);
  });

  it('supervises each instance: one killed is started again, its data kept, and the restart is in its log', async () => {
    const killed = provider.pid(a.id) as number;
    process.kill(killed, 'SIGKILL');
    let answer: Run = { ok: false, stdout: '', stderr: '' };
    // Until the new instance answers from its data: while it reads its append-only file back it answers LOADING, and redis-cli exits 0 on that error.
    const log = () => readFileSync(join(provider.folder(a.id), 'redis.log'), 'utf8');
    const answered = () => answer.ok && !/^LOADING\b/.test(answer.stdout) && provider.pid(a.id) !== killed && log().includes('serves again');
    for (let i = 0; i < 100 && !answered(); i++) {
      await new Promise((r) => setTimeout(r, 100));
      answer = await redisCli(va, 'get', 'greeting');
    }
    expect(provider.pid(a.id)).not.toBe(killed);
    expect(answer).toMatchObject({ ok: true, stdout: 'kept' });
    expect(log()).toMatch(/Redis add-on addon_\S+ was killed by SIGKILL after [\d.]+ s; starting it again in 1.0 s \(restart 1\)[\s\S]*Redis add-on addon_\S+ serves again \(PID \d+/);
  });

  it('stops by PID leaving no process and the ports free; a new provider takes over what an earlier serve left answering, and stops what does not answer', async () => {
    const pid = provider.pid(a.id) as number;
    await provider.stop();
    expect(() => process.kill(pid, 0)).toThrow();
    expect(processesUnder(dir)).toEqual([]);
    expect(await portFree(Number(va.REDIS_PORT))).toBe(true);

    // As a serve that stopped without its add-ons (or was killed) leaves it: the instance running, its identity file written.
    // A pid file alone, as a runplan-host of before identities wrote it, is read too.
    const folder = provider.folder(a.id);
    const leftover = spawn('redis-server', [join(folder, 'redis.conf')], { cwd: folder, stdio: 'ignore', detached: true });
    writeFileSync(join(folder, 'server.pid'), `${leftover.pid}\n`);
    for (let i = 0; i < 100 && !(await redisCli(va, 'ping')).ok; i++) await new Promise((r) => setTimeout(r, 50));
    provider = new RedisProvider({ dir });
    await provider.start([{ id: a.id, config: configA }]);
    // Taken over as it runs: the same process, its data, its clients' connections.
    expect(provider.pid(a.id)).toBe(leftover.pid);
    expect(await redisCli(va, 'get', 'greeting')).toMatchObject({ ok: true, stdout: 'kept' });
    expect(readFileSync(join(folder, 'redis.log'), 'utf8')).toContain(`(PID ${leftover.pid}) left running by an earlier serve answers: taken over`);
    // The new serve stops it by its identity, though it is not its child.
    const leftoverExited = new Promise((r) => leftover.once('exit', r));
    await provider.stop();
    await leftoverExited;

    // One that does not answer (here a process that only works in the add-on's folder) is stopped first, never taken over.
    const silent = spawn('sleep', ['300'], { cwd: folder, stdio: 'ignore', detached: true });
    writeFileSync(join(folder, 'server.identity'), formatIdentity(identifyProcess(silent.pid as number) as ProcessIdentity));
    const silentExited = new Promise((r) => silent.once('exit', r));
    provider = new RedisProvider({ dir });
    await provider.start([{ id: a.id, config: configA }]);
    await silentExited;
    expect(provider.pid(a.id)).not.toBe(silent.pid);
    expect(await redisCli(va, 'get', 'greeting')).toMatchObject({ ok: true, stdout: 'kept' });
    expect(readFileSync(join(folder, 'redis.log'), 'utf8')).toContain(`left running by an earlier serve (PID ${silent.pid}) does not answer: stopping it first`);
  });

  it('reports an instance that cannot start (its port taken), quoting its log, and leaves nothing running', async () => {
    const port = await freePort();
    blocker = createServer();
    await new Promise<void>((resolve) => blocker?.listen(port, '127.0.0.1', resolve));
    const other = new RedisProvider({ dir: join(root, 'other') });
    const id = newId();
    await expect(other.start([{ id, config: { host: '127.0.0.1', port: String(port), password: 'ab12' } }])).rejects.toMatchObject({
      code: HostErrors.ADDON_SERVER_FAILED.code,
      message: expect.stringMatching(/Address already in use|bind/i),
    });
    expect(processesUnder(join(root, 'other'))).toEqual([]);
    // The add-on exists (start() was given it): its account stays for its next start, and goes with the test.
    await removeAddonAccount('redis', id);
  });
});

describe('storage add-ons (an RGW tenant each on one Ceph cluster)', () => {
  let root: string;
  let dir: string;
  let provider: StorageProvider;
  const a = { id: newId(), name: 'files-a' };
  const b = { id: newId(), name: 'files-b' };
  let va: Record<string, string>;
  let vb: Record<string, string>;
  let configB: Record<string, string>;

  beforeAll(async () => {
    root = await tempDir('runplan-host-addons-storage-');
    dir = join(root, 'data', 'addons', 'storage');
    provider = new StorageProvider({ dir, osdMb: 4096 });
  }, 180_000);
  afterAll(async () => {
    await provider.stop();
  });

  it('makes the cluster on first use, run as ceph, its keyrings 0600 and the administrator’s root’s; an S3 client reaches it with the injected key pair', async () => {
    await provider.start();
    const created = await provider.create(a);
    va = created.variables;
    expect(va).toEqual({
      STORAGE_ADDON_HOST: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      STORAGE_ADDON_KEY_ID: expect.stringMatching(/^[A-Z0-9]{20}$/),
      STORAGE_ADDON_KEY_SECRET: expect.stringMatching(/^[A-Za-z0-9]{40}$/),
    });
    expect(await s3(va, 'PUT', '/photos')).toMatchObject({ status: 200 });
    expect(await s3(va, 'PUT', '/photos/cat.txt', 'meow')).toMatchObject({ status: 200 });
    expect(await s3(va, 'GET', '/photos/cat.txt')).toEqual({ status: 200, body: 'meow' });
    const ceph = join(dir, 'ceph');
    const owners = provider.cluster.pids.map((pid) => statSync(`/proc/${pid}`).uid);
    expect(new Set(owners).size).toBe(1);
    expect(owners[0]).not.toBe(0);
    for (const name of readdirSync(ceph).filter((n) => n.endsWith('.keyring'))) {
      const st = statSync(join(ceph, name));
      expect(st.mode & 0o077, name).toBe(0);
      expect(st.uid, name).toBe(name === 'client.admin.keyring' ? 0 : owners[0]);
    }
  }, 180_000);

  it('refuses an unsigned request, a wrong secret, and another add-on’s bucket of the same name, with S3’s codes', async () => {
    const created = await provider.create(b);
    vb = created.variables;
    configB = created.config;
    // Unsigned, a request is the anonymous user's, of no tenant: A's bucket is not even named by it, and named with A's tenant it is refused.
    expect(await s3(va, 'GET', '/photos/cat.txt', undefined, { sign: false })).toMatchObject({ status: 404, body: expect.stringContaining('<Code>NoSuchBucket</Code>') });
    expect(await s3(va, 'GET', `/${tenantOf(a.id)}:photos/cat.txt`, undefined, { sign: false })).toMatchObject({ status: 403, body: expect.stringContaining('<Code>AccessDenied</Code>') });
    expect(await s3({ ...va, STORAGE_ADDON_KEY_SECRET: 'x'.repeat(40) }, 'GET', '/photos/cat.txt')).toMatchObject({ status: 403, body: expect.stringContaining('SignatureDoesNotMatch') });
    // B's own namespace: its "photos" is not A's.
    expect(await s3(vb, 'GET', '/photos/cat.txt')).toMatchObject({ status: 404, body: expect.stringContaining('NoSuchBucket') });
    expect(await s3(vb, 'PUT', '/photos')).toMatchObject({ status: 200 });
    expect(await s3(vb, 'GET', '/photos/cat.txt')).toMatchObject({ status: 404, body: expect.stringContaining('NoSuchKey') });
    expect(await s3(va, 'GET', '/photos/cat.txt')).toEqual({ status: 200, body: 'meow' });
  });

  it('remove() takes the add-on’s user with its buckets and objects: its keys answer InvalidAccessKeyId', async () => {
    expect(await s3(vb, 'PUT', '/photos/dog.txt', 'woof')).toMatchObject({ status: 200 });
    await provider.remove(b, configB);
    expect(await s3(vb, 'GET', '/photos/dog.txt')).toMatchObject({ status: 403, body: expect.stringContaining('InvalidAccessKeyId') });
    const buckets = (await provider.cluster.rgwAdmin(['bucket', 'list'])) as string[];
    expect(buckets).toContain(`${configB.tenant === undefined ? '' : tenantOf(a.id)}/photos`);
    expect(buckets.filter((name) => name.startsWith(`${configB.tenant}/`))).toEqual([]);
    // Removed twice (a remove stopped half-way): nothing left, no error.
    await provider.remove(b, configB);
  });

  it('stops by PID leaving no process; a new provider starts the made cluster again and finds the objects', async () => {
    const pids = provider.cluster.pids;
    expect(pids).toHaveLength(3);
    await provider.stop();
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect(processesUnder(dir)).toEqual([]);
    provider = new StorageProvider({ dir });
    await provider.start([{ id: a.id, config: { tenant: 'x' } }]);
    expect(await s3(va, 'GET', '/photos/cat.txt')).toEqual({ status: 200, body: 'meow' });
  }, 120_000);

  it('refuses to start over add-ons an earlier host kept in s3rver’s folders, naming the command that moves them', async () => {
    const older = new StorageProvider({ dir: join(root, 'older') });
    await expect(older.start([{ id: newId(), config: { port: '1', keyId: 'RPABC', secret: 's' } }])).rejects.toMatchObject({ code: HostErrors.ADDON_STORAGE_MOVE.code });
  });
});
