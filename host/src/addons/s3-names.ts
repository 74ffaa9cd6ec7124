import { isIP } from 'node:net';

/**
 * What the storage add-on's server accepts as bucket and key, checked on the raw
 * request before anything else sees it (storage-main.ts). The server behind it
 * (s3rver) makes file paths of the bucket, the key and the upload id, so a name
 * that could climb out of its folder, or that another layer could decode into one
 * that does, never reaches it: refused with S3's own error answer.
 *
 * Stricter than S3 on purpose: S3 takes a key of any UTF-8, "../a" included; here
 * a key segment "." or "..", a backslash, a control character or a percent-encoding
 * left after decoding (%2F, %2e: double-encoded) is refused. Every key an
 * application names for itself (paths, dots inside names, spaces, unicode) passes.
 */

export interface S3Refusal {
  readonly status: 400;
  readonly code: 'InvalidArgument' | 'InvalidBucketName' | 'InvalidURI' | 'KeyTooLongError';
  readonly message: string;
}

export interface RawS3Request {
  readonly method: string;
  /** The request target as received: path and query, still encoded. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** S3's limit on a key: 1024 bytes of UTF-8. */
const MAX_KEY_BYTES = 1024;
/** S3's rules for a (new, general purpose) bucket name: 3 to 63 of a-z 0-9 . -, a letter or digit at both ends. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** An upload id as the server makes them (32 hex digits); a part number, 1 to 10000. */
const UPLOAD_ID = /^[0-9a-f]{32}$/;
const PART_NUMBER = /^[1-9][0-9]{0,4}$/;
const CONTROL = /[\u0000-\u001f\u007f]/;
/** What another decoding would still turn into a separator, a dot or a NUL. */
const ENCODED_LEFT = /%(2f|5c|2e|00)/i;

const refuse = (code: S3Refusal['code'], message: string): S3Refusal => ({ status: 400, code, message });

/** decodeURIComponent, or undefined for a malformed percent-encoding. */
function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** Why a bucket name is not one S3 allows, or undefined when it is. */
export function bucketNameProblem(name: string): string | undefined {
  if (!BUCKET.test(name)) return 'a bucket name is 3 to 63 characters of a-z, 0-9, "." and "-", beginning and ending with a letter or digit';
  if (name.includes('..')) return 'a bucket name has no two adjacent dots';
  if (isIP(name)) return 'a bucket name is not an IP address';
  return undefined;
}

/** Why an (already decoded) key cannot be stored here, or undefined when it can. */
export function keyProblem(key: string): S3Refusal | undefined {
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return refuse('KeyTooLongError', `Your key is too long: at most ${MAX_KEY_BYTES} bytes of UTF-8`);
  if (CONTROL.test(key)) return refuse('InvalidArgument', 'An object key has no control characters (NUL included)');
  if (key.includes('\\')) return refuse('InvalidArgument', 'An object key has no backslash on this storage');
  if (key.split('/').some((segment) => segment === '.' || segment === '..')) return refuse('InvalidArgument', 'An object key has no "." or ".." segment on this storage');
  if (ENCODED_LEFT.test(key)) return refuse('InvalidArgument', 'An object key has no percent-encoded "/", "\\", "." or NUL left after decoding (a double encoding)');
  return undefined;
}

/** A bucket and an optional key, both still encoded, as the path or x-amz-copy-source gives them. */
function checkBucketAndKey(rawBucket: string, rawKey: string | undefined): S3Refusal | undefined {
  const bucket = decoded(rawBucket);
  if (bucket === undefined) return refuse('InvalidURI', "Couldn't parse the specified URI.");
  const bucketProblem = bucketNameProblem(bucket);
  if (bucketProblem) return refuse('InvalidBucketName', `The specified bucket is not valid: ${bucketProblem}`);
  if (rawKey === undefined) return undefined;
  const key = decoded(rawKey);
  if (key === undefined) return refuse('InvalidURI', "Couldn't parse the specified URI.");
  return keyProblem(key);
}

function header(request: RawS3Request, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/**
 * Why the request must be refused before the server sees it, or undefined. Path-style
 * requests only: the Host is an IP address or localhost (s3rver would take any other
 * Host, or a `<bucket>.s3.amazonaws.com` one, as a bucket name).
 */
export function s3RequestProblem(request: RawS3Request): S3Refusal | undefined {
  const hostname = (header(request, 'host') ?? '').replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  if (!isIP(hostname) && hostname !== 'localhost') {
    return refuse('InvalidArgument', 'This storage answers path-style requests to its address only (http://<STORAGE_ADDON_HOST>/<bucket>/<key>, force_path_style)');
  }
  const i = request.url.indexOf('?');
  const path = i < 0 ? request.url : request.url.slice(0, i);
  if (!path.startsWith('/')) return refuse('InvalidURI', "Couldn't parse the specified URI.");
  const [rawBucket = '', ...rest] = path.slice(1).split('/');
  if (rawBucket !== '') {
    const problem = checkBucketAndKey(rawBucket, rest.length > 0 && rest.join('/') !== '' ? rest.join('/') : undefined);
    if (problem) return problem;
  } else if (rest.length > 0) {
    return refuse('InvalidBucketName', 'The specified bucket is not valid: the path begins with an empty bucket name');
  }
  const query = new URLSearchParams(i < 0 ? '' : request.url.slice(i + 1));
  const uploadId = query.get('uploadId');
  if (uploadId !== null && !UPLOAD_ID.test(uploadId)) return refuse('InvalidArgument', 'The upload id is not one this storage made');
  const partNumber = query.get('partNumber');
  if (partNumber !== null && (!PART_NUMBER.test(partNumber) || Number(partNumber) > 10_000)) return refuse('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
  const copySource = header(request, 'x-amz-copy-source');
  if (copySource !== undefined) {
    // "/bucket/key" or "bucket/key", URL-encoded, perhaps with ?versionId=.
    const source = copySource.split('?', 1)[0]?.replace(/^\//, '') ?? '';
    const slash = source.indexOf('/');
    if (slash <= 0) return refuse('InvalidArgument', 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey');
    const problem = checkBucketAndKey(source.slice(0, slash), source.slice(slash + 1));
    if (problem) return { ...problem, message: `x-amz-copy-source: ${problem.message}` };
  }
  return undefined;
}
