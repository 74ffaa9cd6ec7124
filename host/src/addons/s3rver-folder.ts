import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceBucket, SourceObject } from './bucket-copy.js';
import { fileMd5, keptHeaders } from './gateway-objects.js';

/**
 * The buckets and objects of a folder of s3rver 3.7's FilesystemStore, the storage add-on's
 * server of runplan-host before Ceph (`<data>/addons/storage/<id>/objects/`, and an add-on's
 * folder in that host's backup archives): each folder a bucket; in it, an object's key with
 * its last segment suffixed: `<key>._S3rver_object` (its bytes), `<key>._S3rver_metadata.json`
 * (the headers it keeps), `<key>._S3rver_object.md5`. Keys come from the file names found,
 * never a path from a key. Left out: the unfinished multipart uploads (`._S3rver_uploads/`)
 * and the bucket's and objects' configurations (`._S3rver_<cors|website|tagging>.xml`).
 */
const OBJECT = '._S3rver_object';
const METADATA = '._S3rver_metadata.json';
const UPLOADS = '._S3rver_uploads';
/** What s3rver answered for an object stored without a content type. */
const DEFAULT_TYPE = 'binary/octet-stream';

export async function readS3rverFolder(dir: string): Promise<SourceBucket[]> {
  if (!existsSync(dir)) return [];
  const buckets: SourceBucket[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory()) buckets.push({ name: entry.name, objects: await objectsUnder(join(dir, entry.name)) });
  }
  return buckets;
}

async function objectsUnder(bucketDir: string): Promise<SourceObject[]> {
  const objects: SourceObject[] = [];
  const walk = async (folder: string, prefix: string) => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!(prefix === '' && entry.name === UPLOADS)) await walk(path, `${prefix}${entry.name}/`);
      } else if (entry.isFile() && entry.name.endsWith(OBJECT)) {
        // s3rver reads its .md5 file for the ETag; the bytes are what is moved, so their own MD5 is what the gateway is checked against.
        const { md5, size } = await fileMd5(path);
        const stored = await readFile(`${path.slice(0, -OBJECT.length)}${METADATA}`, 'utf8').then(
          (text) => JSON.parse(text) as Record<string, unknown>,
          () => ({}),
        );
        const headers = keptHeaders(stored);
        objects.push({ key: `${prefix}${entry.name.slice(0, -OBJECT.length)}`, file: path, size, md5, headers: { 'content-type': DEFAULT_TYPE, ...headers } });
      }
    }
  };
  await walk(bucketDir, '');
  return objects.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
