import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { copyIntoGateway } from '../src/addons/bucket-copy.js';
import { fileMd5, type GatewayAccess, gatewayAccess, listObjects, putObject } from '../src/addons/gateway-objects.js';
import { StorageProvider } from '../src/addons/storage.js';
import { archivedBuckets, dumpStorage } from '../src/backup/storage-archive.js';
import { keyPath, s3, s3Bytes } from './helpers/s3-client.js';

/**
 * A storage add-on's buckets and objects as backup writes them and restore reads them back (storage-archive.ts),
 * through a real Ceph gateway: keys that are no paths (`a/../b`, `%2F`, unicode, a leading `/`), an empty bucket,
 * a 0-byte object, a multipart upload and a 100 MiB object streamed both ways without being held in memory.
 */

const MIB = 1024 * 1024;

/** How far the memory of Buffers grew at most while `work` ran (garbage not collected yet included): an object of 100 MiB held whole would pass 100. */
async function peakBuffers<T>(work: () => Promise<T>): Promise<{ result: T; grewMib: number }> {
  const base = process.memoryUsage().arrayBuffers;
  let peak = base;
  const sample = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
  }, 5);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    return { result, grewMib: (peak - base) / MIB };
  } finally {
    clearInterval(sample);
  }
}
const KEYS = ['a/../b', '../escape', '%2F..%2Fetc', '/leading', 'with space/and+plus.txt', 'ünï/çødé ✓.txt', 'trailing/', '.'];

describe('storage add-ons in a backup archive (index.json and objects/<n>)', () => {
  let root: string;
  let provider: StorageProvider;
  let from: Record<string, string>;
  let into: Record<string, string>;
  let fromAccess: GatewayAccess;
  let intoAccess: GatewayAccess;
  let big: string;
  let bigMd5: string;
  const multipart = Buffer.concat([Buffer.alloc(5 * MIB, 'm'), Buffer.from('the last part')]);

  beforeAll(async () => {
    root = await tempDir('runplan-host-storage-archive-');
    provider = new StorageProvider({ dir: join(root, 'storage'), osdMb: 4096 });
    await provider.start();
    const a = await provider.create({ id: `addon_${randomUUID()}`, name: 'from' });
    const b = await provider.create({ id: `addon_${randomUUID()}`, name: 'into' });
    [from, into, fromAccess, intoAccess] = [a.variables, b.variables, gatewayAccess(a.config), gatewayAccess(b.config)];
    for (const bucket of ['photos', 'empty-bucket']) expect((await s3(from, 'PUT', `/${bucket}`)).status).toBe(200);
    for (const key of KEYS) expect((await s3(from, 'PUT', keyPath('photos', key), `the object ${key}`, { headers: { 'Content-Type': 'text/x-probe' } })).status, key).toBe(200);
    expect((await s3(from, 'PUT', keyPath('photos', 'zero.bin'), '')).status).toBe(200);
    // A multipart upload: its ETag is `<md5 of the parts' md5s>-2`, not the MD5 of its bytes.
    const started = await s3(from, 'POST', `${keyPath('photos', 'parts.bin')}?uploads`);
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(started.body)?.[1] ?? '';
    const etags: string[] = [];
    for (const [n, part] of [multipart.subarray(0, 5 * MIB), multipart.subarray(5 * MIB)].entries()) {
      const put = await s3Bytes(from, 'PUT', `${keyPath('photos', 'parts.bin')}?partNumber=${n + 1}&uploadId=${encodeURIComponent(uploadId)}`, part.toString());
      expect(put.status).toBe(200);
      etags.push(String(put.headers.etag));
    }
    const parts = etags.map((etag, n) => `<Part><PartNumber>${n + 1}</PartNumber><ETag>${etag}</ETag></Part>`).join('');
    expect((await s3(from, 'POST', `${keyPath('photos', 'parts.bin')}?uploadId=${encodeURIComponent(uploadId)}`, `<CompleteMultipartUpload>${parts}</CompleteMultipartUpload>`)).status).toBe(200);
    // 100 MiB of random bytes, written and PUT as a stream.
    big = join(root, 'big.bin');
    const out = createWriteStream(big);
    for (let i = 0; i < 100; i++) if (!out.write(randomBytes(MIB))) await new Promise<void>((r) => out.once('drain', () => r()));
    await new Promise<void>((r) => out.end(() => r()));
    const bigFile = await fileMd5(big);
    bigMd5 = bigFile.md5;
    expect(await putObject(fromAccess, 'photos', 'big/100mib.bin', { file: big, ...bigFile, headers: { 'content-type': 'application/octet-stream' } })).toBe(bigMd5);
  }, 300_000);

  afterAll(async () => {
    await provider?.stop();
  });

  it('writes an index of every bucket (the empty one too) and one numbered file per object: no key becomes a path, 100 MiB never held in memory', async () => {
    const out = join(root, 'archive', 'addons', 'storage', 'addon');
    const { result: dumped, grewMib } = await peakBuffers(() => dumpStorage(fromAccess, out));
    console.log(`dumpStorage: ${dumped.objects} objects, ${dumped.bytes} bytes; Buffers grew by ${grewMib.toFixed(1)} MiB at most`);
    expect(grewMib).toBeLessThan(64);
    expect(dumped).toEqual({ buckets: 2, objects: KEYS.length + 3, bytes: expect.any(Number) });
    const files = await readdir(out, { recursive: true });
    expect(files.filter((f) => f !== 'objects' && f !== 'index.json' && !/^objects\/\d+$/.test(f))).toEqual([]);
    const index = JSON.parse(await readFile(join(out, 'index.json'), 'utf8')) as {
      buckets: { name: string; objects: { key: string; etag: string; md5: string; headers: Record<string, string> }[] }[];
    };
    expect(index.buckets.map((b) => b.name).sort()).toEqual(['empty-bucket', 'photos']);
    const photos = index.buckets.find((b) => b.name === 'photos')?.objects ?? [];
    expect(photos.map((o) => o.key).sort()).toEqual([...KEYS, 'zero.bin', 'parts.bin', 'big/100mib.bin'].sort());
    expect(photos.find((o) => o.key === 'a/../b')?.headers['content-type']).toBe('text/x-probe');
    const parts = photos.find((o) => o.key === 'parts.bin');
    expect(parts?.etag).toMatch(/^[0-9a-f]{32}-2$/);
    expect(parts?.md5).toBe(createHash('md5').update(multipart).digest('hex'));
    expect(photos.find((o) => o.key === 'big/100mib.bin')?.md5).toBe(bigMd5);
  }, 300_000);

  it('puts an archived add-on into another user of the gateway: every object byte-identical with its content type, the empty bucket kept, each ETag its MD5', async () => {
    const out = join(root, 'archive', 'addons', 'storage', 'addon');
    const { result: copied, grewMib } = await peakBuffers(async () => copyIntoGateway(intoAccess, await archivedBuckets(out)));
    console.log(`copyIntoGateway: Buffers grew by ${grewMib.toFixed(1)} MiB at most`);
    expect(grewMib).toBeLessThan(64);
    expect(copied).toMatchObject({ buckets: 2, objects: KEYS.length + 3, alreadyThere: 0 });
    for (const key of KEYS) {
      const got = await s3Bytes(into, 'GET', keyPath('photos', key));
      expect({ key, status: got.status, body: got.bytes.toString(), type: got.headers['content-type'] }).toEqual({ key, status: 200, body: `the object ${key}`, type: 'text/x-probe' });
    }
    expect((await s3Bytes(into, 'GET', keyPath('photos', 'zero.bin'))).bytes.length).toBe(0);
    expect((await s3Bytes(into, 'GET', keyPath('photos', 'parts.bin'))).bytes.equals(multipart)).toBe(true);
    const listed = new Map((await listObjects(intoAccess, 'photos')).map((o) => [o.key, o.etag]));
    expect(listed.get('big/100mib.bin')).toBe(bigMd5);
    expect(listed.get('parts.bin')).toBe(createHash('md5').update(multipart).digest('hex'));
    expect((await s3(into, 'GET', '/empty-bucket?list-type=2')).body).not.toContain('<Contents>');
    // Run again (a restore's copy is checked, a move's is re-run): nothing sent twice.
    expect(await copyIntoGateway(intoAccess, await archivedBuckets(out))).toMatchObject({ alreadyThere: KEYS.length + 3 });
  }, 300_000);

  it('refuses an index that names a file outside objects/, or bytes that are not its object', async () => {
    const dir = join(root, 'hostile');
    await writeFile(join(root, 'secret'), 'not an object');
    const index = (file: string, size: number) => ({
      format: 1,
      buckets: [{ name: 'photos', objects: [{ key: 'k', size, etag: '0'.repeat(32), md5: '0'.repeat(32), headers: {}, file }] }],
    });
    await mkdir(join(dir, 'objects'), { recursive: true });
    await writeFile(join(dir, 'index.json'), JSON.stringify(index('../secret', 13)));
    await expect(archivedBuckets(dir)).rejects.toThrow(/cannot hold/);
    await writeFile(join(dir, 'objects', '0'), 'short');
    await writeFile(join(dir, 'index.json'), JSON.stringify(index('objects/0', 13)));
    await expect(archivedBuckets(dir)).rejects.toThrow(/is not the 13 bytes/);
  });
});
