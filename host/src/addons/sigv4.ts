import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * AWS Signature Version 4 checked on the server's side, for the storage add-on:
 * s3rver (the S3-compatible server it runs) looks up the access key id of a V4
 * request but never computes its signature, so the secret would prove nothing.
 * npm's aws4 only signs; this verifies, and its tests sign with aws4.
 * Both ways S3 clients sign are read: the Authorization header (SDK calls) and the
 * query string (presigned URLs, as Active Storage redirects to).
 */

export interface SignedRequest {
  readonly method: string;
  /** The request target as received: path and query, still encoded. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** S3's own error codes, so that S3 clients report them as they would S3's. */
export type Verdict = { readonly ok: true } | { readonly ok: false; readonly code: 'AccessDenied' | 'InvalidAccessKeyId' | 'SignatureDoesNotMatch' | 'RequestTimeTooSkewed'; readonly why: string };

/** How far a header-signed request's time may be from the server's (as S3). */
const MAX_SKEW_MS = 15 * 60 * 1000;
const ALGORITHM = 'AWS4-HMAC-SHA256';

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256 = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');

/** RFC 3986 encoding as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
const encode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, '%20'));
  } catch {
    return text;
  }
}

/** A path segment decoded: "+" is a plus sign in a path. */
function decodeSegment(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** YYYYMMDD'T'HHMMSS'Z' → time. */
function amzTime(text: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) : Number.NaN;
}

interface Parsed {
  readonly keyId: string;
  readonly scope: string;
  readonly date: string;
  readonly signedHeaders: string[];
  readonly signature: string;
  readonly time: string;
  readonly payloadHash: string;
  readonly query: [string, string][];
  readonly expiresMs?: number;
}

function parse(request: SignedRequest): Parsed | Verdict {
  const i = request.url.indexOf('?');
  const rawQuery = i < 0 ? '' : request.url.slice(i + 1);
  const query = rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair): [string, string] => {
      const i = pair.indexOf('=');
      return i < 0 ? [decode(pair), ''] : [decode(pair.slice(0, i)), decode(pair.slice(i + 1))];
    });
  const header = (name: string) => {
    const v = request.headers[name];
    return Array.isArray(v) ? v.join(',') : v;
  };
  const auth = header('authorization');
  if (auth !== undefined) {
    const m = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/.exec(auth.trim());
    if (!m) return { ok: false, code: 'AccessDenied', why: 'the Authorization header is not an AWS4-HMAC-SHA256 signature' };
    const [keyId = '', ...scope] = (m[1] as string).split('/');
    return {
      keyId,
      scope: scope.join('/'),
      date: scope[0] ?? '',
      signedHeaders: (m[2] as string).split(';'),
      signature: m[3] as string,
      time: header('x-amz-date') ?? '',
      payloadHash: header('x-amz-content-sha256') ?? sha256(''),
      query,
    };
  }
  const q = new Map(query);
  if (q.get('X-Amz-Algorithm') !== ALGORITHM) return { ok: false, code: 'AccessDenied', why: 'the request is not signed (no Authorization header, no X-Amz-Signature)' };
  const [keyId = '', ...scope] = (q.get('X-Amz-Credential') ?? '').split('/');
  const expires = Number(q.get('X-Amz-Expires'));
  return {
    keyId,
    scope: scope.join('/'),
    date: scope[0] ?? '',
    signedHeaders: (q.get('X-Amz-SignedHeaders') ?? 'host').split(';'),
    signature: q.get('X-Amz-Signature') ?? '',
    time: q.get('X-Amz-Date') ?? '',
    payloadHash: 'UNSIGNED-PAYLOAD',
    query: query.filter(([k]) => k !== 'X-Amz-Signature'),
    expiresMs: Number.isFinite(expires) ? expires * 1000 : 0,
  };
}

/**
 * Whether `request` is signed with `secretFor(keyId)`, at a time near `now`. The
 * payload's hash is the one the client declared (x-amz-content-sha256), as signed.
 */
export function verifySigV4(request: SignedRequest, secretFor: (keyId: string) => string | undefined, now: number): Verdict {
  const p = parse(request);
  if ('ok' in p) return p;
  const secret = secretFor(p.keyId);
  if (secret === undefined) return { ok: false, code: 'InvalidAccessKeyId', why: 'the access key id is not this storage add-on’s' };
  const time = amzTime(p.time);
  if (Number.isNaN(time) || !p.time.startsWith(p.date)) return { ok: false, code: 'AccessDenied', why: 'the request has no valid X-Amz-Date' };
  if (p.expiresMs === undefined ? Math.abs(now - time) > MAX_SKEW_MS : now > time + p.expiresMs || time - now > MAX_SKEW_MS) {
    return {
      ok: false,
      code: p.expiresMs === undefined ? 'RequestTimeTooSkewed' : 'AccessDenied',
      why: p.expiresMs === undefined ? 'the request’s time is too far from the server’s' : 'the presigned URL has expired',
    };
  }
  if (!p.signedHeaders.includes('host')) return { ok: false, code: 'AccessDenied', why: 'the signature does not cover the Host header' };
  // S3's canonical path: each segment decoded, then encoded as RFC 3986 says ("(" as %28), "/" kept, an encoded
  // "/" (%2F) included: S3 signs the key, whichever way its slashes were sent (as aws4 and the SDKs sign).
  const path = (request.url.split('?', 1)[0] || '/')
    .split('/')
    .map((segment) => encode(decodeSegment(segment)).replace(/%2F/g, '/'))
    .join('/');
  const canonicalQuery = p.query
    .map(([k, v]) => [encode(k), encode(v)])
    .sort(([a = '', x = ''], [b = '', y = '']) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const headerValue = (name: string) => {
    const v = request.headers[name];
    return (Array.isArray(v) ? v.join(',') : (v ?? '')).trim().replace(/\s+/g, ' ');
  };
  const canonicalHeaders = p.signedHeaders.map((h) => `${h}:${headerValue(h)}\n`).join('');
  const canonicalRequest = [request.method, path, canonicalQuery, canonicalHeaders, p.signedHeaders.join(';'), p.payloadHash].join('\n');
  const stringToSign = [ALGORITHM, p.time, p.scope, sha256(canonicalRequest)].join('\n');
  const [date = '', region = '', service = '', terminator = ''] = p.scope.split('/');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), terminator);
  const expected = hmac(key, stringToSign);
  const given = Buffer.from(p.signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, code: 'SignatureDoesNotMatch', why: 'the signature does not match this add-on’s secret' };
  return { ok: true };
}
