import { execFile } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processesUnder } from '../../test/helpers/processes.js';
import { ensureAddonAccount } from '../src/addons/addon-accounts.js';
import { StorageProvider } from '../src/addons/storage.js';
import { hostPaths } from '../src/paths.js';
import { openHostStore } from '../src/store/open-store.js';
import type { AddonRecord } from '../src/store/store.js';
import { keyPath, s3, s3Bytes } from './helpers/s3-client.js';
import { TestHost } from './helpers/test-host.js';

const run = promisify(execFile);

/**
 * `runplan-host storage move`, the real command on a data folder as an s3rver-era host left it: a store
 * whose storage add-ons have configs without `tenant`, their objects in s3rver 3.7's FilesystemStore layout
 * (`<bucket>/<key>._S3rver_object`, `._S3rver_metadata.json`, `._S3rver_object.md5`), written here by hand.
 * Each object is read back through the gateway byte for byte with its content type. Also: such a host's
 * backup (s3rver's files as they are) restored into a new host, which moves them into its own gateway.
 */

interface FixtureObject {
  readonly key: string;
  readonly body: Buffer;
  /** Its _S3rver_metadata.json; none: s3rver served binary/octet-stream. */
  readonly type?: string;
  /** s3rver writes the .md5 file; an object copied with new metadata had none until read. */
  readonly md5File?: boolean;
}

// No `a/../b`: s3rver made paths of keys, and the file of such a key is the one of `b`. Its `..` keys are last segments (a file `.._S3rver_object`).
const OBJECTS: Record<string, readonly FixtureObject[]> = {
  photos: [
    { key: 'cat.txt', body: Buffer.from('a cat, in a bucket'), type: 'text/plain' },
    { key: 'a/..', body: Buffer.from('a key ending in ..'), type: 'text/plain' },
    { key: '..', body: Buffer.from('the key ..'), type: 'application/x-dots' },
    { key: '%2F..%2Fetc', body: Buffer.from('percent signs, kept as they are'), type: 'text/plain' },
    { key: 'with space/and more.txt', body: Buffer.from('spaces'), type: 'text/plain; charset=utf-8' },
    { key: 'ünï/çødé ✓.txt', body: Buffer.from('ünïcödé'), type: 'text/plain; charset=utf-8' },
    { key: 'empty.bin', body: Buffer.alloc(0), type: 'application/octet-stream' },
    { key: 'big/random.bin', body: randomBytes(3 * 1024 * 1024 + 17), type: 'application/x-random', md5File: false },
    { key: 'no-metadata', body: Buffer.from('stored without a content type') },
  ],
  docs: [{ key: 'nested/deep/report.json', body: Buffer.from('{"ok":true}'), type: 'application/json' }],
  'empty-bucket': [],
};
const count = Object.values(OBJECTS).flat().length;
const bytes = Object.values(OBJECTS)
  .flat()
  .reduce((sum, o) => sum + o.body.length, 0);

/** One object as s3rver 3.7.1's FilesystemStore writes it (lib/stores/filesystem.js: getResourcePath, putMetadata). */
async function writeS3rverObject(objects: string, bucket: string, o: FixtureObject): Promise<void> {
  const parts = o.key.split('/');
  const last = parts.pop() as string;
  const folder = join(objects, bucket, ...parts);
  // Suffixed before it is a path, as s3rver does: a last segment `..` is a file name, never the parent.
  const base = `${folder}/${last}`;
  await mkdir(folder, { recursive: true });
  await writeFile(`${base}._S3rver_object`, o.body);
  if (o.md5File !== false) await writeFile(`${base}._S3rver_object.md5`, createHash('md5').update(o.body).digest('hex'));
  if (o.type !== undefined) await writeFile(`${base}._S3rver_metadata.json`, JSON.stringify({ 'content-type': o.type, 'x-amz-meta-by': 's3rver' }, null, 2));
}

describe('runplan-host storage move (s3rver folders into the Ceph gateway)', () => {
  let host: TestHost;
  let restored: TestHost | undefined;
  let files: AddonRecord;
  let oldAccount: string | undefined;
  const oldSecret = randomBytes(30).toString('base64url');
  const storageDir = () => join(host.data, 'addons', 'storage');

  /** The add-on's variables from the store now, and a cluster started on `data` to read through (stopped by the caller). */
  const gatewayOf = async (data: string, id: string) => {
    const store = await openHostStore(hostPaths(data));
    const addon = await store.findAddon(id).finally(() => store.close());
    const provider = new StorageProvider({ dir: join(data, 'addons', 'storage') });
    await provider.start([{ id, config: addon?.config ?? {} }]);
    return { provider, config: addon?.config ?? {}, variables: provider.variables(addon?.config ?? {}) };
  };

  /** Every fixture object read back through S3, byte for byte, with its content type; the empty bucket there. */
  const expectAllObjects = async (variables: Record<string, string>) => {
    for (const [bucket, objects] of Object.entries(OBJECTS)) {
      for (const o of objects) {
        const got = await s3Bytes(variables, 'GET', keyPath(bucket, o.key));
        expect({ key: o.key, status: got.status, same: got.bytes.equals(o.body), type: got.headers['content-type'] }).toEqual({
          key: o.key,
          status: 200,
          same: true,
          type: o.type ?? 'binary/octet-stream',
        });
      }
      const listed = await s3(variables, 'GET', `/${bucket}?list-type=2`);
      expect(listed.status, bucket).toBe(200);
      expect([...listed.body.matchAll(/<Contents>/g)].length, bucket).toBe(objects.length);
    }
  };

  beforeAll(async () => {
    host = await TestHost.create();
    // A small OSD file for the test (sparse either way).
    const settings = JSON.parse(await readFile(join(host.data, 'settings.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(host.data, 'settings.json'), JSON.stringify({ ...settings, storage: { osdMb: 4096 } }));
    // The store as an s3rver-era host left it: a storage add-on's config with its own port and key pair, no tenant.
    const store = await openHostStore(hostPaths(host.data));
    try {
      const app = await store.createApp({ name: 'web', org: 'acme', zone: 'par', type: 'node' });
      files = await store.createAddon({
        id: `addon_${randomUUID()}`,
        name: 'files',
        org: 'acme',
        provider: 'storage',
        zone: 'par',
        config: { host: '127.0.0.1', port: '45999', keyId: `RP${randomBytes(9).toString('hex').toUpperCase()}`, secret: oldSecret },
      });
      await store.linkAddon(app.id, files.id);
    } finally {
      await store.close();
    }
    const folder = join(storageDir(), files.id);
    for (const [bucket, objects] of Object.entries(OBJECTS)) {
      await mkdir(join(folder, 'objects', bucket), { recursive: true });
      for (const o of objects) await writeS3rverObject(join(folder, 'objects'), bucket, o);
    }
    // What s3rver kept besides objects, left out by the move: an unfinished multipart upload, a bucket's CORS.
    await mkdir(join(folder, 'objects', 'photos', '._S3rver_uploads', 'f00d'), { recursive: true });
    await writeFile(join(folder, 'objects', 'photos', '._S3rver_uploads', 'f00d', 'key'), 'unfinished');
    await writeFile(join(folder, 'objects', 'docs', '._S3rver_cors.xml'), '<CORSConfiguration/>');
    await writeFile(join(folder, 'storage.json'), JSON.stringify({ port: 45999, directory: join(folder, 'objects'), keyId: files.config.keyId, secret: oldSecret }));
    oldAccount = (await ensureAddonAccount('storage', files.id))?.name;
  }, 300_000);

  afterAll(async () => {
    await restored?.dispose();
    await host?.dispose();
  });

  it("backs up the s3rver folder as it is; restore moves it into the new host's gateway (new keys), byte for byte, and leaves no Ceph process", async () => {
    const archive = join(dirname(host.data), 'host.tar.gz');
    const backup = await host.cli(['backup', '--to', archive]);
    expect(backup.code, backup.stdout + backup.stderr).toBe(0);
    expect(backup.stderr).toContain("s3rver's folder as it is");
    // The layout an s3rver-era host's backup has: s3rver's files under addons/storage/<id>/.
    const listing = (await run('tar', ['-tzf', archive])).stdout;
    expect(listing).toContain(`addons/storage/${files.id}/photos/cat.txt._S3rver_object`);
    expect(listing).toContain(`addons/storage/${files.id}/empty-bucket/`);

    const r = await TestHost.restore(archive);
    restored = r.host;
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain(`the storage add-on files: 3 bucket(s), ${count} object(s), ${bytes} bytes`);
    expect(r.output).not.toContain(oldSecret);
    expect(processesUnder(dirname(restored.data))).toEqual([]);
    const { provider, config, variables } = await gatewayOf(restored.data, files.id);
    try {
      expect(config.tenant).toBeDefined();
      expect(r.output).not.toContain(config.secret);
      await expectAllObjects(variables);
    } finally {
      await provider.stop();
    }
  }, 600_000);

  it('stops at a bucket the gateway refuses, removing nothing; run again once it is renamed, it goes on from there, then removes the folder and the account', async () => {
    const objects = join(storageDir(), files.id, 'objects');
    await mkdir(join(objects, 'zz_Bad'));
    await writeS3rverObject(objects, 'zz_Bad', { key: 'kept.txt', body: Buffer.from('kept'), type: 'text/plain' });
    const failed = await host.cli(['storage', 'move']);
    expect(failed.code, failed.stdout + failed.stderr).toBe(1);
    expect(failed.stderr).toContain('RUNPLAN_HOST_E_ADDON_STORAGE_MOVE_FAILED');
    expect(failed.stderr).toContain('InvalidBucketName');
    expect(failed.stderr + failed.stdout).not.toContain(oldSecret);
    expect(existsSync(join(objects, 'photos', 'cat.txt._S3rver_object'))).toBe(true);
    const store = await openHostStore(hostPaths(host.data));
    expect((await store.findAddon(files.id).finally(() => store.close()))?.config.tenant).toBeUndefined();
    expect(processesUnder(host.data)).toEqual([]);

    await rename(join(objects, 'zz_Bad'), join(objects, 'zz-fixed'));
    const moved = await host.cli(['storage', 'move']);
    expect(moved.code, moved.stdout + moved.stderr).toBe(0);
    console.log(moved.stderr + moved.stdout);
    expect(moved.stdout).toContain(`acme/files: 4 bucket(s), ${count + 1} object(s), ${bytes + 4} bytes`);
    // What the first run put is not sent again.
    expect(moved.stderr).toContain(`(${count} put by an earlier run)`);
    expect(moved.stdout).toMatch(/redeploy the applications linked to them[^\n]*\n {2}acme\/files: web/);
    expect(existsSync(join(storageDir(), files.id))).toBe(false);
    if (oldAccount !== undefined) await expect(run('getent', ['passwd', oldAccount])).rejects.toMatchObject({ code: 2 });
    expect(processesUnder(host.data)).toEqual([]);
    const { provider, config, variables } = await gatewayOf(host.data, files.id);
    try {
      expect(moved.stdout + moved.stderr).not.toContain(config.secret);
      expect(moved.stdout + moved.stderr).not.toContain(oldSecret);
      await expectAllObjects(variables);
      expect((await s3Bytes(variables, 'GET', keyPath('zz-fixed', 'kept.txt'))).bytes.toString()).toBe('kept');
    } finally {
      await provider.stop();
    }
  }, 600_000);

  it('a second run finds nothing to move and changes nothing', async () => {
    const store = await openHostStore(hostPaths(host.data));
    const before = await store.findAddon(files.id).finally(() => store.close());
    const again = await host.cli(['storage', 'move']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain('no storage add-on to move');
    const after = await openHostStore(hostPaths(host.data));
    expect((await after.findAddon(files.id).finally(() => after.close()))?.config).toEqual(before?.config);
    expect(processesUnder(host.data)).toEqual([]);
  }, 120_000);
});
