import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceBucket } from '../addons/bucket-copy.js';
import { type GatewayAccess, getObject, keptHeaders, listBuckets, listObjects } from '../addons/gateway-objects.js';
import { readS3rverFolder } from '../addons/s3rver-folder.js';
import { writeSecretFile } from './secret-file.js';

/**
 * A storage add-on in a backup archive: `index.json` lists its buckets (empty ones too) and, per
 * object, its key, size, ETag, MD5 and kept headers, and the file `objects/<n>` holding its bytes.
 * No key ever becomes a path: keys may hold `..`, `/`, `%2F` or any unicode.
 */
const INDEX = 'index.json';

interface IndexedObject {
  readonly key: string;
  readonly size: number;
  /** As the gateway gave it: `<md5>-<parts>` for a multipart upload, whose bytes' MD5 is `md5`. */
  readonly etag: string;
  readonly md5: string;
  readonly headers: Record<string, string>;
  /** `objects/<n>`. */
  readonly file: string;
}

interface StorageIndex {
  readonly format: 1;
  readonly buckets: readonly { readonly name: string; readonly objects: readonly IndexedObject[] }[];
}

/** Reads every bucket and object of the add-on from the gateway into `out` (made): its index and one file per object. */
export async function dumpStorage(access: GatewayAccess, out: string): Promise<{ buckets: number; objects: number; bytes: number }> {
  await mkdir(join(out, 'objects'), { recursive: true, mode: 0o700 });
  const buckets: { name: string; objects: IndexedObject[] }[] = [];
  let n = 0;
  let bytes = 0;
  for (const name of await listBuckets(access)) {
    const objects: IndexedObject[] = [];
    for (const listed of await listObjects(access, name)) {
      const file = `objects/${n++}`;
      const got = await getObject(access, name, listed.key, join(out, file));
      // Deleted since it was listed: the archive is of the add-on as it was read.
      if (got === undefined) continue;
      if (!got.etag.includes('-') && got.etag !== got.md5) throw new Error(`${name}/${listed.key} read from the S3 gateway does not match its ETag ${got.etag}`);
      objects.push({ key: listed.key, size: got.size, etag: got.etag, md5: got.md5, headers: got.headers, file });
      bytes += got.size;
    }
    buckets.push({ name, objects });
  }
  await writeSecretFile(join(out, INDEX), `${JSON.stringify({ format: 1, buckets } satisfies StorageIndex)}\n`);
  // Gone since listed: no file of theirs stays beside the index.
  const kept = new Set(buckets.flatMap((b) => b.objects.map((o) => o.file)));
  for (let i = 0; i < n; i++) if (!kept.has(`objects/${i}`)) await rm(join(out, `objects/${i}`), { force: true });
  return { buckets: buckets.length, objects: kept.size, bytes };
}

/**
 * The buckets and objects of an add-on's folder in an unpacked archive: this layout, or the
 * s3rver folder a runplan-host of before Ceph archived (no index.json; a bucket is a folder,
 * never a file of that name); none when the archive holds no folder for it.
 */
export async function archivedBuckets(dir: string): Promise<SourceBucket[]> {
  const index = join(dir, INDEX);
  if (!existsSync(index) || !statSync(index).isFile()) return readS3rverFolder(dir);
  const parsed = JSON.parse(await readFile(index, 'utf8')) as Partial<StorageIndex>;
  const buckets = parsed.format === 1 && Array.isArray(parsed.buckets) ? (parsed.buckets as StorageIndex['buckets']) : undefined;
  if (buckets === undefined) throw new Error(`${index} is not an index runplan-host backup writes`);
  return buckets.map((bucket) => ({
    name: String(bucket.name),
    objects: bucket.objects.map((o) => {
      // The archive names files by number only: an index that named another path is refused, not followed.
      if (!/^objects\/[0-9]+$/.test(o.file) || typeof o.key !== 'string' || !/^[0-9a-f]{32}$/.test(o.md5)) throw new Error(`${index} lists an object it cannot hold (${JSON.stringify(o.file)})`);
      const file = join(dir, o.file);
      if (!existsSync(file) || statSync(file).size !== o.size) throw new Error(`${index}: the object ${bucket.name}/${o.key} is not the ${o.size} bytes of ${o.file}`);
      return { key: o.key, file, size: o.size, md5: o.md5, headers: keptHeaders(o.headers ?? {}) };
    }),
  }));
}
