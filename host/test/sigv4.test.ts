import aws4 from 'aws4';
import { describe, expect, it } from 'vitest';
import { verifySigV4 } from '../src/addons/sigv4.js';

/**
 * The storage add-on's signature check against requests signed by npm's aws4 (the
 * signer S3 clients' algorithm is specified by), as headers and as presigned URLs.
 */

const KEY = { accessKeyId: 'STORAGEKEY0123456789', secretAccessKey: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0' };
const secretFor = (id: string) => (id === KEY.accessKeyId ? KEY.secretAccessKey : undefined);
const HOST = '127.0.0.1:45123';

/** What the server receives for a request aws4 signed: lower-case headers, the path as sent. */
function signed(options: { method?: string; path: string; body?: string; headers?: Record<string, string>; signQuery?: boolean }, key = KEY) {
  const req = aws4.sign(
    { host: HOST, service: 's3', region: 'us-east-1', method: options.method ?? 'GET', path: options.path, body: options.body, headers: options.headers ?? {}, signQuery: options.signQuery },
    key,
  ) as { method: string; path: string; headers: Record<string, string | number> };
  const headers: Record<string, string> = { host: HOST };
  for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = String(v);
  return { method: req.method, url: req.path, headers };
}

describe('SigV4 verification (storage add-on)', () => {
  const now = Date.now();

  it('accepts header-signed requests: a listing with a query, an upload with its payload hash, a key that needs encoding', () => {
    expect(verifySigV4(signed({ path: '/bucket?list-type=2&prefix=a%20b&max-keys=10' }), secretFor, now)).toEqual({ ok: true });
    expect(verifySigV4(signed({ method: 'PUT', path: '/bucket/notes.txt', body: 'hello', headers: { 'Content-Type': 'text/plain' } }), secretFor, now)).toEqual({ ok: true });
    expect(verifySigV4(signed({ path: '/bucket/a%20file%20(1)%21.txt' }), secretFor, now)).toEqual({ ok: true });
  });

  it('accepts a presigned URL until it expires', () => {
    const url = signed({ path: '/bucket/photo.png?X-Amz-Expires=300', signQuery: true });
    expect(verifySigV4(url, secretFor, now)).toEqual({ ok: true });
    expect(verifySigV4(url, secretFor, now + 301_000)).toMatchObject({ ok: false, code: 'AccessDenied', why: expect.stringContaining('expired') });
  });

  it('refuses another secret, another key id, an unsigned request, a changed path or method, and an old request', () => {
    const wrong = signed({ path: '/bucket/x' }, { ...KEY, secretAccessKey: 'not-the-secret' });
    expect(verifySigV4(wrong, secretFor, now)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
    expect(verifySigV4(signed({ path: '/bucket/x' }, { ...KEY, accessKeyId: 'OTHERKEY' }), secretFor, now)).toMatchObject({ ok: false, code: 'InvalidAccessKeyId' });
    expect(verifySigV4({ method: 'GET', url: '/bucket/x', headers: { host: HOST } }, secretFor, now)).toMatchObject({ ok: false, code: 'AccessDenied' });
    const good = signed({ path: '/bucket/x' });
    expect(verifySigV4({ ...good, url: '/bucket/y' }, secretFor, now)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
    expect(verifySigV4({ ...good, method: 'DELETE' }, secretFor, now)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
    expect(verifySigV4(good, secretFor, now + 16 * 60_000)).toMatchObject({ ok: false, code: 'RequestTimeTooSkewed' });
  });
});
