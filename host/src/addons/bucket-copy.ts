import { createBucket, type GatewayAccess, listBuckets, listObjects, putObject } from './gateway-objects.js';

/** An object to put into the gateway: its bytes in `file`, their MD5 (hex) and size, the headers it keeps. */
export interface SourceObject {
  readonly key: string;
  readonly file: string;
  readonly size: number;
  readonly md5: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface SourceBucket {
  readonly name: string;
  readonly objects: readonly SourceObject[];
}

export interface CopyTotals {
  readonly buckets: number;
  readonly objects: number;
  readonly bytes: number;
  /** Objects found in the gateway already with the same MD5 (put by an earlier run that stopped half-way): not sent again. */
  readonly alreadyThere: number;
}

/**
 * Makes each bucket (one that exists already is fine), PUTs each object, then lists every bucket
 * again: done only when each holds exactly its objects, each with its MD5 as ETag. What it throws
 * names the bucket and the key that differ; it removes nothing, so a run that failed is run again.
 */
export async function copyIntoGateway(access: GatewayAccess, buckets: readonly SourceBucket[]): Promise<CopyTotals> {
  let alreadyThere = 0;
  for (const bucket of buckets) {
    await createBucket(access, bucket.name);
    const present = new Map((await listObjects(access, bucket.name)).map((o) => [o.key, o.etag]));
    for (const object of bucket.objects) {
      if (present.get(object.key) === object.md5) {
        alreadyThere++;
        continue;
      }
      await putObject(access, bucket.name, object.key, object);
    }
  }
  await checkCopy(access, buckets);
  const objects = buckets.flatMap((b) => b.objects);
  return { buckets: buckets.length, objects: objects.length, bytes: objects.reduce((sum, o) => sum + o.size, 0), alreadyThere };
}

/** Every bucket there, each with as many objects as its source and each object's ETag its MD5. */
async function checkCopy(access: GatewayAccess, buckets: readonly SourceBucket[]): Promise<void> {
  const names = new Set(await listBuckets(access));
  for (const bucket of buckets) {
    if (!names.has(bucket.name)) throw new Error(`the bucket ${bucket.name} is not in the S3 gateway after it was made`);
    const listed = await listObjects(access, bucket.name);
    if (listed.length !== bucket.objects.length) {
      throw new Error(`the bucket ${bucket.name} holds ${listed.length} object(s) in the S3 gateway, not the ${bucket.objects.length} copied into it`);
    }
    const etags = new Map(listed.map((o) => [o.key, o.etag]));
    for (const object of bucket.objects) {
      const etag = etags.get(object.key);
      if (etag !== object.md5) {
        throw new Error(`${bucket.name}/${object.key} ${etag === undefined ? 'is missing from' : `has the ETag ${etag}, not its MD5 ${object.md5}, in`} the S3 gateway`);
      }
    }
  }
}
