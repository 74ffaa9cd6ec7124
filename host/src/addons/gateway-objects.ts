import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { type IncomingMessage, request } from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import aws4 from 'aws4';

/**
 * A storage add-on's buckets and objects read and written through Ceph's S3 gateway with the
 * add-on's own keys, as any S3 client would: what backup, restore and `storage move` share.
 * Bodies are streamed between the gateway and files, never held in memory.
 */

/** Where the gateway is and the add-on owner's key pair: from its config (host, port, keyId, secret). */
export interface GatewayAccess {
  readonly host: string;
  readonly port: string;
  readonly keyId: string;
  readonly secret: string;
}

export function gatewayAccess(config: Readonly<Record<string, string>>): GatewayAccess {
  return { host: config.host ?? '127.0.0.1', port: config.port ?? '', keyId: config.keyId ?? '', secret: config.secret ?? '' };
}

/** An object as a listing gives it. */
export interface ListedObject {
  readonly key: string;
  readonly size: number;
  /** Without its quotes: an MD5 in hex, or `<md5>-<parts>` for a multipart upload. */
  readonly etag: string;
}

/** What a GET wrote to its file: the MD5 and size of the bytes written, the ETag and the headers the object keeps. */
export interface FetchedObject {
  readonly size: number;
  readonly md5: string;
  readonly etag: string;
  readonly headers: Record<string, string>;
}

/** The gateway answered a request with an error: S3's code and message. */
class GatewayError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
  }
}

/** The headers an object keeps besides its bytes (those s3rver kept too): sent again with its PUT. */
const KEPT_HEADERS = new Set(['content-type', 'cache-control', 'content-disposition', 'content-encoding', 'content-language', 'expires', 'x-amz-website-redirect-location']);

export function keptHeaders(headers: Readonly<Record<string, unknown>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (typeof value === 'string' && (KEPT_HEADERS.has(lower) || lower.startsWith('x-amz-meta-'))) kept[lower] = value;
  }
  return kept;
}

// Encoded as SigV4's canonical request encodes a path segment (aws4 decodes each segment and encodes it so):
// the request line and the signature agree for any key, `..`, `%2F` and unicode included.
const encodeSegment = (segment: string) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function objectPath(bucket: string, key?: string): string {
  return `/${encodeSegment(bucket)}${key === undefined ? '' : `/${key.split('/').map(encodeSegment).join('/')}`}`;
}

/** A signed request; the answer's headers once they arrive (its body still to read). Never a secret in what it throws. */
function send(access: GatewayAccess, method: string, path: string, headers: Record<string, string> = {}, body?: NodeJS.ReadableStream): Promise<IncomingMessage> {
  const signed = aws4.sign(
    // A streamed body is not hashed first: its Content-MD5 lets the gateway check it instead.
    { host: `${access.host}:${access.port}`, service: 's3', region: 'us-east-1', method, path, headers: { ...headers, 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' } },
    { accessKeyId: access.keyId, secretAccessKey: access.secret },
  ) as { path: string; headers: Record<string, string> };
  return new Promise((resolve, reject) => {
    const req = request({ host: access.host, port: Number(access.port), method, path: signed.path, headers: signed.headers }, resolve);
    // A gateway that stops answering mid-way fails the copy instead of hanging it.
    req.setTimeout(120_000, () => req.destroy(new Error(`the S3 gateway at ${access.host}:${access.port} did not answer ${method} within 120 s`)));
    req.on('error', reject);
    if (body === undefined) req.end();
    else pipeline(body, req).catch(reject);
  });
}

async function text(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function refused(response: IncomingMessage, what: string): Promise<GatewayError> {
  const body = await text(response);
  const code = xmlValues(body, 'Code')[0] ?? `HTTP ${response.statusCode}`;
  return new GatewayError(`the S3 gateway refused ${what}: ${code}${xmlValues(body, 'Message')[0] ? ` (${xmlValues(body, 'Message')[0]})` : ''}`, response.statusCode ?? 0, code);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const unescapeXml = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) =>
    name.startsWith('#x') || name.startsWith('#X') ? String.fromCodePoint(parseInt(name.slice(2), 16)) : name.startsWith('#') ? String.fromCodePoint(Number(name.slice(1))) : (ENTITIES[name] ?? whole),
  );

/** The text of each element `tag` in an S3 answer (flat elements only: Name, Key, ETag…). */
function xmlValues(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, 'g'))].map((m) => unescapeXml(m[1] ?? ''));
}

/** The owner's buckets, by name. */
export async function listBuckets(access: GatewayAccess): Promise<string[]> {
  const response = await send(access, 'GET', '/');
  if (response.statusCode !== 200) throw await refused(response, 'the list of buckets');
  const body = await text(response);
  return [...body.matchAll(/<Bucket>([\s\S]*?)<\/Bucket>/g)].flatMap((m) => xmlValues(m[1] ?? '', 'Name'));
}

/** Makes the bucket; one the owner has already is fine (a move or restore run again). */
export async function createBucket(access: GatewayAccess, bucket: string): Promise<void> {
  const response = await send(access, 'PUT', objectPath(bucket), { 'Content-Length': '0' });
  if (response.statusCode === 200) {
    response.resume();
    return;
  }
  const error = await refused(response, `to make the bucket ${bucket}`);
  if (error.code !== 'BucketAlreadyOwnedByYou') throw error;
}

/** Every object of the bucket, page after page; keys URL-encoded by the gateway so that any byte comes back as it was. */
export async function listObjects(access: GatewayAccess, bucket: string): Promise<ListedObject[]> {
  const found: ListedObject[] = [];
  let token: string | undefined;
  do {
    const query = `list-type=2&encoding-type=url&max-keys=1000${token === undefined ? '' : `&continuation-token=${encodeURIComponent(token)}`}`;
    const response = await send(access, 'GET', `${objectPath(bucket)}?${query}`);
    if (response.statusCode !== 200) throw await refused(response, `the list of the bucket ${bucket}`);
    const body = await text(response);
    for (const [, entry = ''] of body.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
      found.push({
        key: decodeURIComponent(xmlValues(entry, 'Key')[0] ?? ''),
        size: Number(xmlValues(entry, 'Size')[0]),
        etag: (xmlValues(entry, 'ETag')[0] ?? '').replaceAll('"', ''),
      });
    }
    token = xmlValues(body, 'IsTruncated')[0] === 'true' ? xmlValues(body, 'NextContinuationToken')[0] : undefined;
  } while (token !== undefined);
  return found;
}

/** The object's bytes streamed into `file` (made, 0600): undefined when it is gone (deleted since it was listed). */
export async function getObject(access: GatewayAccess, bucket: string, key: string, file: string): Promise<FetchedObject | undefined> {
  const response = await send(access, 'GET', objectPath(bucket, key));
  if (response.statusCode === 404) {
    const error = await refused(response, `${bucket}/${key}`);
    if (error.code === 'NoSuchKey') return undefined;
    throw error;
  }
  if (response.statusCode !== 200) throw await refused(response, `to read ${bucket}/${key}`);
  const hash = createHash('md5');
  let size = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(response, count, createWriteStream(file, { mode: 0o600, flags: 'wx' }));
  const length = Number(response.headers['content-length']);
  if (Number.isFinite(length) && length !== size) throw new Error(`the S3 gateway sent ${size} of the ${length} bytes of ${bucket}/${key}`);
  return { size, md5: hash.digest('hex'), etag: String(response.headers.etag ?? '').replaceAll('"', ''), headers: keptHeaders(response.headers) };
}

/** The file's bytes PUT as the object, with its Content-MD5 (the gateway refuses bytes that do not match it): the ETag it answers. */
export async function putObject(
  access: GatewayAccess,
  bucket: string,
  key: string,
  from: { readonly file: string; readonly size: number; readonly md5: string; readonly headers: Readonly<Record<string, string>> },
): Promise<string> {
  const headers = { ...from.headers, 'Content-Length': String(from.size), 'Content-MD5': Buffer.from(from.md5, 'hex').toString('base64') };
  const response = await send(access, 'PUT', objectPath(bucket, key), headers, createReadStream(from.file));
  if (response.statusCode !== 200) throw await refused(response, `to write ${bucket}/${key}`);
  response.resume();
  return String(response.headers.etag ?? '').replaceAll('"', '');
}

/** The MD5 (hex) and size of a file, read as a stream. */
export async function fileMd5(file: string): Promise<{ md5: string; size: number }> {
  const hash = createHash('md5');
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { md5: hash.digest('hex'), size };
}
