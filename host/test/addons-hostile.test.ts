import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processesUnder } from '../../test/helpers/processes.js';
import { s3 } from './helpers/s3-client.js';
import { TestHost } from './helpers/test-host.js';

/**
 * Hostile tenants against the add-ons of a real runplan-host: two organizations,
 * each with a storage, a Redis and a PostgreSQL add-on; globex (B) holds only its
 * own credentials (what `addon env --show` gives its members) and tries to reach
 * acme's (A's) objects, keys and rows: traversal in every form an S3 server may
 * decode, A's Redis port, A's database and role, and what `ps` shows of the
 * add-on servers. Nothing of A's may come back, nothing of B's may land in A's.
 */

type Variables = { variables: { name: string; value: string }[] };
interface Run {
  readonly ok: boolean;
  readonly out: string;
}

function run(command: string, args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ ok: !error, out: `${String(stdout)}${String(stderr)}`.trim() }),
    );
  });
}

/** redis-cli with the password in REDISCLI_AUTH (never in argv: the ps check below would see it). */
const redisCli = (host: string, port: string, password: string | undefined, ...command: string[]) =>
  run('redis-cli', ['-h', host, '-p', port, ...command], password === undefined ? {} : { REDISCLI_AUTH: password });

/** psql as B's app would run it, the password in PGPASSWORD. */
const psql = (v: Record<string, string>, sql: string, { db = v.POSTGRESQL_ADDON_DB ?? '', user = v.POSTGRESQL_ADDON_USER ?? '' } = {}) =>
  run('psql', ['-X', '-tA', '-v', 'ON_ERROR_STOP=1', '-h', v.POSTGRESQL_ADDON_HOST ?? '', '-p', v.POSTGRESQL_ADDON_PORT ?? '', '-U', user, '-d', db, '-c', sql], {
    PGPASSWORD: v.POSTGRESQL_ADDON_PASSWORD ?? '',
  });

/** The real uid of a process. */
const uidOf = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** The S3 error code of an answer's XML body. */
const codeOf = (body: string) => /<Code>([^<]+)<\/Code>/.exec(body)?.[1];

describe('hostile tenants: add-ons of one organization are out of reach of another', () => {
  let host: TestHost;
  const ids: Record<string, string> = {};
  const vars: Record<string, Record<string, string>> = {};
  const CANARY = 'canary of acme: only acme reads this';

  const create = async (kind: string, name: string, org: string) => {
    const { addon } = await host.json<{ addon: { id: string } }>(['addon', 'create', kind, name, '--org', org]);
    ids[name] = addon.id;
    vars[name] = Object.fromEntries((await host.json<Variables>(['addon', 'env', name, '--show'])).variables.map((v) => [v.name, v.value]));
  };
  const a = () => vars['files-a'] as Record<string, string>;
  const b = () => vars['files-b'] as Record<string, string>;
  const storageDir = (name: string) => join(host.data, 'addons', 'storage', ids[name] as string);
  /** What A's bucket holds, listed by A itself. */
  const listingOfA = async () => (await s3(a(), 'GET', '/bucket-a?list-type=2')).body;
  /** Every file under A's storage folder (as root sees it): what B may have planted there. */
  const filesOfA = () => readdirSync(storageDir('files-a'), { recursive: true }).map(String).sort();

  beforeAll(async () => {
    host = await TestHost.create();
    await host.serve();
    for (const [org, suffix] of [
      ['acme', 'a'],
      ['globex', 'b'],
    ] as const) {
      await create('storage', `files-${suffix}`, org);
      await create('redis', `cache-${suffix}`, org);
      await create('postgresql', `db-${suffix}`, org);
    }
    expect(await s3(a(), 'PUT', '/bucket-a')).toMatchObject({ status: 200 });
    expect(await s3(a(), 'PUT', '/bucket-a/canary.txt', CANARY)).toMatchObject({ status: 200 });
    expect(await s3(b(), 'PUT', '/bucket-b')).toMatchObject({ status: 200 });
  }, 300_000);

  afterAll(async () => {
    await host?.dispose();
  });

  describe('storage: B signs with its own key pair and names A’s objects through its own bucket', () => {
    // From B's bucket folder (<storage>/<B>/objects/bucket-b) up to the storage folder, then down into A's objects.
    const rel = () => `../../../${ids['files-a']}/objects/bucket-a/canary.txt`;
    const keyForms = (): [string, string][] => [
      ['plain ../', rel()],
      ['%2F for /', rel().replaceAll('/', '%2F')],
      ['%2e%2e for ..', rel().replaceAll('..', '%2e%2e')],
      ['%2E%2E%2f, upper and lower case', rel().replaceAll('..', '%2E%2E').replaceAll('/', '%2f')],
      ['double-encoded %252e%252e%252F', rel().replaceAll('..', '%252e%252e').replaceAll('/', '%252F')],
      ['backslashes (%5C)', rel().replaceAll('/', '%5C')],
      ['a NUL (%00) after ..', rel().replace('../', '..%00/')],
      ['./ and .. mixed', `./${rel()}`],
    ];
    // A bucket that is itself a way out: ".." (then the key climbs on), or one segment with encoded slashes.
    const bucketForms = (): [string, string][] => [
      ['.. as the bucket', `/../../${ids['files-a']}/objects/bucket-a/canary.txt`],
      ['%2e%2e as the bucket', `/%2e%2e/../${ids['files-a']}/objects/bucket-a/canary.txt`],
      ['a bucket of ..%2F segments', `/..%2F..%2F${ids['files-a']}%2Fobjects%2Fbucket-a/canary.txt`],
    ];
    const refusedCode = /^(InvalidArgument|InvalidBucketName|InvalidURI|KeyTooLongError)$/;
    const expectRefused = (answer: { status: number; body: string }, what: string) => {
      expect(answer.body, what).not.toContain(CANARY);
      expect({ what, status: answer.status, code: codeOf(answer.body) }).toEqual({ what, status: 400, code: expect.stringMatching(refusedCode) });
    };

    it('GET of A’s object through any traversal form is refused with 400 and S3’s code', async () => {
      for (const [what, key] of keyForms()) expectRefused(await s3(b(), 'GET', `/bucket-b/${key}`), `GET ${what}`);
      for (const [what, path] of bucketForms()) expectRefused(await s3(b(), 'GET', path), `GET ${what}`);
      // B's key pair on A's server: A's secret is needed, B's is not it.
      expect(await s3({ ...b(), STORAGE_ADDON_HOST: a().STORAGE_ADDON_HOST ?? '' }, 'GET', '/bucket-a/canary.txt')).toMatchObject({ status: 403, body: expect.stringContaining('InvalidAccessKeyId') });
    });

    it('PUT and DELETE through them are refused: A’s bucket keeps exactly its canary, and no file lands in A’s folder', async () => {
      const before = filesOfA();
      for (const [what, key] of keyForms()) {
        const planted = key.replace('canary.txt', 'planted.txt');
        expectRefused(await s3(b(), 'PUT', `/bucket-b/${planted}`, 'planted by globex'), `PUT ${what}`);
        expectRefused(await s3(b(), 'DELETE', `/bucket-b/${key}`), `DELETE ${what}`);
      }
      for (const [what, path] of bucketForms()) {
        expectRefused(await s3(b(), 'PUT', path.replace('canary.txt', 'planted.txt'), 'planted by globex'), `PUT ${what}`);
        expectRefused(await s3(b(), 'DELETE', path), `DELETE ${what}`);
      }
      expect(filesOfA()).toEqual(before);
      expect(await s3(a(), 'GET', '/bucket-a/canary.txt')).toEqual({ status: 200, body: CANARY });
      const listing = await listingOfA();
      expect(listing).toContain('<Key>canary.txt</Key>');
      expect(listing).not.toContain('planted');
    });

    it('LIST of A’s bucket through a traversing bucket name is refused', async () => {
      for (const bucket of ['..', '%2e%2e', `..%2F..%2F${ids['files-a']}%2Fobjects%2Fbucket-a`, `..%5C..%5C${ids['files-a']}%5Cobjects%5Cbucket-a`]) {
        for (const query of ['', '?list-type=2', '?uploads']) expectRefused(await s3(b(), 'GET', `/${bucket}${query}`), `LIST /${bucket}${query}`);
      }
    });

    it('a copy from A’s object (x-amz-copy-source with ../ in any form) is refused and copies nothing', async () => {
      const sources = [`/bucket-b/${rel()}`, `bucket-b/${rel().replaceAll('/', '%2F')}`, `/../../${ids['files-a']}/objects/bucket-a/canary.txt`, `/bucket-b/${rel().replaceAll('..', '%2e%2e')}`];
      for (const source of sources) {
        expectRefused(await s3(b(), 'PUT', '/bucket-b/stolen.txt', '', { headers: { 'x-amz-copy-source': source } }), `copy from ${source}`);
      }
      expect(await s3(b(), 'GET', '/bucket-b/stolen.txt')).toMatchObject({ status: 404 });
    });

    it('a multi-object delete naming A’s object in its XML body (plain, or as character references) is refused and deletes nothing', async () => {
      for (const key of [rel(), rel().replaceAll('.', '&#46;'), rel().replaceAll('/', '&#x2F;')]) {
        const body = `<?xml version="1.0" encoding="UTF-8"?><Delete><Object><Key>${key}</Key></Object></Delete>`;
        expectRefused(await s3(b(), 'POST', '/bucket-b?delete', body), `multi-object delete of ${key}`);
      }
      expect(await s3(a(), 'GET', '/bucket-a/canary.txt')).toEqual({ status: 200, body: CANARY });
      // B's own multi-object delete still works.
      expect(await s3(b(), 'PUT', '/bucket-b/gone.txt', 'x')).toMatchObject({ status: 200 });
      expect(await s3(b(), 'POST', '/bucket-b?delete', '<Delete><Object><Key>gone.txt</Key></Object></Delete>')).toMatchObject({ status: 200 });
      expect(await s3(b(), 'GET', '/bucket-b/gone.txt')).toMatchObject({ status: 404 });
    });

    it('multipart uploads toward A (a traversing key, or an upload id that climbs) are refused and write nothing in A’s folder', async () => {
      const before = filesOfA();
      expectRefused(await s3(b(), 'POST', `/bucket-b/${rel().replace('canary.txt', 'mp.txt')}?uploads`), 'initiate with ../');
      const initiated = await s3(b(), 'POST', '/bucket-b/legit.bin?uploads');
      expect(initiated.status).toBe(200);
      const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(initiated.body)?.[1] ?? '';
      expect(uploadId).not.toBe('');
      // The upload id is a folder name in s3rver: one that climbs would put the part in A's bucket.
      const climbing = encodeURIComponent(`../../../../${ids['files-a']}/objects/bucket-a`);
      expectRefused(await s3(b(), 'PUT', `/bucket-b/legit.bin?partNumber=1&uploadId=${climbing}`, 'part planted by globex'), 'part with a climbing uploadId');
      expectRefused(await s3(b(), 'PUT', `/bucket-b/legit.bin?partNumber=..%2F1&uploadId=${uploadId}`, 'x'), 'a partNumber that is no number');
      expectRefused(await s3(b(), 'POST', `/bucket-b/legit.bin?uploadId=${climbing}`, '<CompleteMultipartUpload/>'), 'complete with a climbing uploadId');
      // B's own multipart upload still works.
      expect(await s3(b(), 'PUT', `/bucket-b/legit.bin?partNumber=1&uploadId=${uploadId}`, 'one part')).toMatchObject({ status: 200 });
      expect(filesOfA()).toEqual(before);
    });

    it('a Host header naming a bucket (virtual-hosted style through a hostile name) is refused', async () => {
      for (const hostHeader of ['..', `..%2F${ids['files-a']}`, 'bucket-a.s3.amazonaws.com', '...s3.amazonaws.com']) {
        expectRefused(await s3(b(), 'GET', '/canary.txt', undefined, { host: hostHeader }), `Host: ${hostHeader}`);
      }
    });

    it('S3’s name rules: a bad bucket name, a key over 1024 bytes, and a percent-encoding that decodes to nothing are refused with S3’s codes', async () => {
      expect(await s3(b(), 'PUT', '/Not_A_Bucket')).toMatchObject({ status: 400, body: expect.stringContaining('<Code>InvalidBucketName</Code>') });
      expect(await s3(b(), 'PUT', '/ab')).toMatchObject({ status: 400, body: expect.stringContaining('<Code>InvalidBucketName</Code>') });
      expect(await s3(b(), 'PUT', `/bucket-b/${'k'.repeat(1025)}`, 'x')).toMatchObject({ status: 400, body: expect.stringContaining('<Code>KeyTooLongError</Code>') });
      // No signer encodes a path that decodes to nothing: sent as it is, unsigned (the names are checked before the signature).
      expect(await s3(b(), 'GET', '/bucket-b/%E0%A4%A', undefined, { sign: false })).toMatchObject({ status: 400, body: expect.stringContaining('<Code>InvalidURI</Code>') });
      // What S3 allows still works: nested keys, spaces, a dot inside a name, unicode.
      for (const key of ['photos/2024/cat.jpg', 'a%20b.txt', 'v1.2/notes..txt', '%C3%A9t%C3%A9.txt']) {
        expect(await s3(b(), 'PUT', `/bucket-b/${key}`, 'fine'), key).toMatchObject({ status: 200 });
        expect(await s3(b(), 'GET', `/bucket-b/${key}`), key).toEqual({ status: 200, body: 'fine' });
      }
    });

    it('each storage server runs as its own account, its folder 0700 to it: A’s server cannot even read B’s folder', async () => {
      const uids = ['files-a', 'files-b'].map((name) => {
        const pids = processesUnder(storageDir(name));
        expect(pids.length, name).toBeGreaterThan(0);
        const owners = new Set(pids.map(uidOf));
        expect(owners.size, name).toBe(1);
        const uid = [...owners][0] as number;
        const folder = statSync(storageDir(name));
        expect({ name, uid: folder.uid, mode: (folder.mode & 0o777).toString(8) }).toEqual({ name, uid, mode: '700' });
        return uid;
      });
      const [uidA = 0, uidB = 0] = uids;
      expect(uidA).not.toBe(uidB);
      expect(uidA).not.toBe(0);
      // Not shared: every process running as it is that add-on's server.
      for (const [name, uid] of [
        ['files-a', uidA],
        ['files-b', uidB],
      ] as const) {
        const running = spawnSync('ps', ['-o', 'pid=', '-u', String(uid)], { encoding: 'utf8' })
          .stdout.trim()
          .split(/\s+/)
          .map(Number);
        expect(running.sort(), name).toEqual(processesUnder(storageDir(name)).sort());
      }
      // A path bug in A's server (any file it opens) cannot reach B's files.
      const asA = spawnSync('cat', [join(storageDir('files-b'), 'storage.json')], { uid: uidA, gid: uidA, encoding: 'utf8' });
      expect(asA.status).not.toBe(0);
      expect(asA.stderr).toContain('Permission denied');
    });
  });

  describe('Redis: B’s password and connection reach only B’s instance', () => {
    const ra = () => vars['cache-a'] as Record<string, string>;
    const rb = () => vars['cache-b'] as Record<string, string>;

    it('A’s port refuses B without a password (NOAUTH) and with B’s password (WRONGPASS)', async () => {
      expect((await redisCli(ra().REDIS_HOST ?? '', ra().REDIS_PORT ?? '', undefined, 'GET', 'x')).out).toContain('NOAUTH');
      expect((await redisCli(ra().REDIS_HOST ?? '', ra().REDIS_PORT ?? '', rb().REDIS_PASSWORD, 'GET', 'x')).out).toMatch(/WRONGPASS|invalid username-password/);
      expect((await redisCli(ra().REDIS_HOST ?? '', ra().REDIS_PORT ?? '', ra().REDIS_PASSWORD, 'PING')).out).toBe('PONG');
    });

    it('B’s own instance cannot be turned on A’s files: CONFIG SET dir, MODULE LOAD and DEBUG are refused', async () => {
      const h = rb().REDIS_HOST ?? '';
      const p = rb().REDIS_PORT ?? '';
      const pw = rb().REDIS_PASSWORD;
      expect((await redisCli(h, p, pw, 'CONFIG', 'SET', 'dir', join(host.data, 'addons', 'redis', ids['cache-a'] as string, 'data'))).out).toMatch(/ERR.*protected/i);
      expect((await redisCli(h, p, pw, 'CONFIG', 'SET', 'dbfilename', '../x.rdb')).out).toMatch(/ERR.*protected/i);
      expect((await redisCli(h, p, pw, 'MODULE', 'LOAD', '/nonexistent.so')).out).toMatch(/ERR/);
      expect((await redisCli(h, p, pw, 'DEBUG', 'SLEEP', '0')).out).toMatch(/ERR/);
    });

    it('each Redis instance runs as its own account too, its folder closed to the other’s', async () => {
      const uids = ['cache-a', 'cache-b'].map((name) => {
        const dir = join(host.data, 'addons', 'redis', ids[name] as string);
        const [pid] = processesUnder(dir);
        expect(pid, name).toBeDefined();
        const folder = statSync(dir);
        expect((folder.mode & 0o777).toString(8)).toBe('700');
        expect(folder.uid).toBe(uidOf(pid as number));
        return folder.uid;
      });
      expect(uids[0]).not.toBe(uids[1]);
    });
  });

  describe('PostgreSQL: B’s role reaches only B’s database', () => {
    const pa = () => vars['db-a'] as Record<string, string>;
    const pb = () => vars['db-b'] as Record<string, string>;

    it('B cannot connect to A’s database, log in as A’s role, or become it', async () => {
      expect(await psql(pb(), 'select 1', { db: pa().POSTGRESQL_ADDON_DB })).toMatchObject({ ok: false, out: expect.stringContaining('permission denied for database') });
      expect(await psql(pb(), 'select 1', { user: pa().POSTGRESQL_ADDON_USER, db: pa().POSTGRESQL_ADDON_DB })).toMatchObject({
        ok: false,
        out: expect.stringContaining('password authentication failed'),
      });
      expect(await psql(pb(), `set role "${pa().POSTGRESQL_ADDON_USER}"`)).toMatchObject({ ok: false, out: expect.stringContaining('permission denied') });
    });

    it('B cannot read the server’s files, run programs, or load extensions', async () => {
      expect(await psql(pb(), "select pg_read_file('postgresql.conf')")).toMatchObject({ ok: false, out: expect.stringContaining('permission denied') });
      expect(await psql(pb(), "copy (select 1) to program 'id'")).toMatchObject({ ok: false, out: expect.stringMatching(/must be superuser|permission denied/) });
      expect(await psql(pb(), 'create extension file_fdw')).toMatchObject({ ok: false });
      expect(await psql(pb(), 'create extension adminpack')).toMatchObject({ ok: false });
    });

    it('the database and role names B can list (pg_database, pg_roles: PostgreSQL shows them to every role) tell nothing of A’s add-on', async () => {
      const listed = await psql(pb(), 'select datname from pg_database union all select rolname from pg_roles');
      expect(listed.ok).toBe(true);
      for (const name of ['db-a', 'files-a', 'cache-a']) {
        const id = ids[name] as string;
        expect(listed.out).not.toContain(id.replaceAll('-', ''));
        expect(listed.out).not.toContain(id);
      }
    });
  });

  it('no add-on id and no secret is on any command line `ps` shows, with both databases in use', async () => {
    const clients = [pa(), pb()].map((v) => new pg.Client({ connectionString: v.POSTGRESQL_ADDON_URI }));
    try {
      await Promise.all(clients.map((c) => c.connect()));
      const ps = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout;
      // The backends are there (their titles are what a connection shows), and the storage and Redis servers.
      expect(ps).toMatch(/postgres: .*127\.0\.0\.1/);
      expect(ps).toContain('storage-server.cjs');
      expect(ps).toContain('redis-server');
      // An id as the store has it, its uuid alone, and the uuid without hyphens (as a database name made from it was).
      const needles = Object.values(ids).flatMap((id) => [id, id.replace(/^addon_/, ''), id.replace(/^addon_/, '').replaceAll('-', '')]);
      const secrets = Object.values(vars).flatMap((v) => ['STORAGE_ADDON_KEY_SECRET', 'REDIS_PASSWORD', 'POSTGRESQL_ADDON_PASSWORD'].map((k) => v[k]).filter((s): s is string => !!s));
      expect(secrets.length).toBe(6);
      // Only the lines at fault are shown when this fails, not every process of the machine.
      expect(ps.split('\n').filter((line) => [...needles, ...secrets].some((n) => line.includes(n)))).toEqual([]);
    } finally {
      await Promise.all(clients.map((c) => c.end().catch(() => {})));
    }

    function pa() {
      return vars['db-a'] as Record<string, string>;
    }
    function pb() {
      return vars['db-b'] as Record<string, string>;
    }
  });

  it('removing an add-on removes its account with its folder', async () => {
    const folder = storageDir('files-b');
    const [pid] = processesUnder(folder);
    const uid = uidOf(pid as number);
    expect((await host.cli(['addon', 'rm', 'files-b'])).code).toBe(0);
    expect(existsSync(folder)).toBe(false);
    expect(spawnSync('id', ['-nu', String(uid)]).status).not.toBe(0);
  });
});
