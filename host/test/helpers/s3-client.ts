import { type IncomingMessage, request as httpRequest } from 'node:http';
import aws4 from 'aws4';

export interface S3Options {
  /** False: sent unsigned. */
  readonly sign?: boolean;
  /** More headers, signed with the rest (x-amz-copy-source…). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The Host header to send and sign, when it is not STORAGE_ADDON_HOST (the connection still goes there). */
  readonly host?: string;
}

const credentials = (v: Record<string, string>) => ({ accessKeyId: v.STORAGE_ADDON_KEY_ID ?? '', secretAccessKey: v.STORAGE_ADDON_KEY_SECRET ?? '' });

/**
 * An S3 request as an app's SDK makes it, signed with a storage add-on's variables (or told not to sign).
 * The path is sent as given, byte for byte: a hostile client's `..` and percent-encodings reach the server as written.
 */
export async function s3(v: Record<string, string>, method: string, path: string, body?: string, options: S3Options = {}): Promise<{ status: number; body: string }> {
  const answer = await s3Bytes(v, method, path, body, options);
  return { status: answer.status, body: answer.bytes.toString() };
}

/** The same request, its answer kept as bytes with its headers: an object read back byte for byte, with its Content-Type. */
export function s3Bytes(
  v: Record<string, string>,
  method: string,
  path: string,
  body?: string,
  { sign = true, headers = {}, host: hostHeader }: S3Options = {},
): Promise<{ status: number; bytes: Buffer; headers: Record<string, string | string[] | undefined> }> {
  const [host = '', port = ''] = (v.STORAGE_ADDON_HOST ?? '').split(':');
  const signed = sign
    ? (aws4.sign({ host: hostHeader ?? v.STORAGE_ADDON_HOST, service: 's3', region: 'us-east-1', method, path, body, headers: { ...headers } }, credentials(v)) as {
        path: string;
        headers: Record<string, string>;
      })
    : { path, headers: { ...headers, ...(hostHeader ? { Host: hostHeader } : {}) } };
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host, port: Number(port), method, path: signed.path, headers: signed.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A presigned URL's path and query (SigV4 in the query, as SDKs' getSignedUrl make it): anyone holding it sends it unsigned. */
export function presign(v: Record<string, string>, method: string, path: string): string {
  return (aws4.sign({ host: v.STORAGE_ADDON_HOST, service: 's3', region: 'us-east-1', method, path, signQuery: true }, credentials(v)) as { path: string }).path;
}

/** A body sent in pieces: made again for each read (once to hash it, once to send it), never held whole. */
export interface S3StreamBody {
  readonly chunks: () => Iterable<Buffer>;
  readonly length: number;
  /** Its SHA-256 in hex: the signed x-amz-content-sha256. */
  readonly sha256: string;
}

/** A signed request whose body is streamed and whose answer is handed back unread (a large GET is hashed as it arrives). */
export function s3Stream(v: Record<string, string>, method: string, path: string, body?: S3StreamBody, { timeoutMs = 120_000 } = {}): Promise<IncomingMessage> {
  const [host = '', port = ''] = (v.STORAGE_ADDON_HOST ?? '').split(':');
  const headers: Record<string, string> = body ? { 'Content-Length': String(body.length), 'x-amz-content-sha256': body.sha256 } : {};
  const signed = aws4.sign({ host: v.STORAGE_ADDON_HOST, service: 's3', region: 'us-east-1', method, path, headers }, credentials(v)) as { path: string; headers: Record<string, string> };
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host, port: Number(port), method, path: signed.path, headers: signed.headers, timeout: timeoutMs }, resolve);
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    void (async () => {
      for (const chunk of body?.chunks() ?? []) {
        if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })().catch(reject);
  });
}

/** A key as a path-style request names it: each segment percent-encoded as SigV4 wants it (any key, `..` and `%2F` included). */
export function keyPath(bucket: string, key: string): string {
  const encode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `/${encode(bucket)}/${key.split('/').map(encode).join('/')}`;
}
