import { join, resolve, sep } from 'node:path';
import S3Error from 's3rver/lib/models/error.js';
import FilesystemStore from 's3rver/lib/stores/filesystem.js';
import { bucketNameProblem, keyProblem } from './s3-names.js';

const UPLOAD_ID = /^[0-9a-f]{32}$/;

/** Whether `path` is `folder` itself or below it, once both are resolved. */
function inside(folder: string, path: string): boolean {
  const root = resolve(folder);
  const p = resolve(path);
  return p === root || p.startsWith(root + sep);
}

function checkBucket(store: FilesystemStore, bucket: string): void {
  const problem = bucketNameProblem(bucket);
  if (problem) throw new S3Error('InvalidBucketName', `The specified bucket is not valid: ${problem}`, { BucketName: bucket.slice(0, 100) });
  if (!inside(store.rootDirectory, join(store.rootDirectory, bucket))) throw new S3Error('InvalidBucketName', 'The specified bucket is not valid');
}

function checkUploadId(uploadId: string): void {
  if (!UPLOAD_ID.test(uploadId)) throw new S3Error('InvalidArgument', 'The upload id is not one this storage made');
}

/**
 * The last wall inside the storage server: every path s3rver's file store makes
 * from a bucket, a key or an upload id is checked where it is made, whatever route
 * the name came by (the URL, x-amz-copy-source, the XML body of a multi-object
 * delete), and must stay inside its bucket's folder. The front check
 * (s3RequestProblem) answers the URL's forms first; this catches what it cannot
 * see, such as keys in a request body, with the same S3 errors.
 */
export function guardFilesystemStore(): void {
  const proto = FilesystemStore.prototype;
  const { getBucketPath, getResourcePath, initiateUpload, putPart, putObjectMultipart } = proto;
  proto.getBucketPath = function (this: FilesystemStore, bucket: string) {
    checkBucket(this, bucket);
    return getBucketPath.call(this, bucket);
  };
  proto.getResourcePath = function (this: FilesystemStore, bucket: string, key?: string, resource?: string) {
    checkBucket(this, bucket);
    if (key !== undefined && key !== '') {
      // A key from an XML body may have been parsed as a number.
      const problem = keyProblem(String(key));
      if (problem) throw new S3Error(problem.code, problem.message);
    }
    const path = getResourcePath.call(this, bucket, key, resource);
    if (!inside(join(this.rootDirectory, bucket), path)) throw new S3Error('InvalidArgument', 'The object key leads out of its bucket');
    return path;
  };
  proto.initiateUpload = function (this: FilesystemStore, bucket, key, uploadId, metadata) {
    checkUploadId(uploadId);
    return initiateUpload.call(this, bucket, key, uploadId, metadata);
  };
  proto.putPart = function (this: FilesystemStore, bucket, uploadId, partNumber, content) {
    checkUploadId(uploadId);
    // s3rver passes the query's text: it becomes a file name.
    const n = String(partNumber);
    if (!/^[1-9][0-9]{0,4}$/.test(n) || Number(n) > 10_000) throw new S3Error('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
    return putPart.call(this, bucket, uploadId, partNumber, content);
  };
  proto.putObjectMultipart = function (this: FilesystemStore, bucket, uploadId, parts) {
    checkUploadId(uploadId);
    return putObjectMultipart.call(this, bucket, uploadId, parts);
  };
}
