import { describe, expect, it } from 'vitest';
import { bucketNameProblem, s3RequestProblem } from '../src/addons/s3-names.js';

/** The storage server's front check on its own: what passes to s3rver, and what S3 error the rest gets. */
const check = (url: string, headers: Record<string, string> = {}, method = 'GET') => s3RequestProblem({ method, url, headers: { host: '127.0.0.1:9000', ...headers } })?.code;

describe('the storage add-on’s names check (s3-names.ts)', () => {
  it('passes what applications name: nested keys, dots inside names, spaces, unicode, presigned queries, uploads', () => {
    for (const url of [
      '/',
      '/photos',
      '/photos/',
      '/photos?list-type=2&prefix=2024/&delimiter=/',
      '/photos/2024/cat.jpg',
      '/photos/v1.2/notes..txt',
      '/photos/a%20b+c.txt',
      '/photos/%C3%A9t%C3%A9.txt',
      '/photos/.hidden',
      '/photos/a/.../b',
      '/my.bucket-1/x?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=a%2Fb',
      `/photos/big.bin?partNumber=10000&uploadId=${'0a'.repeat(16)}`,
    ])
      expect(check(url), url).toBeUndefined();
    expect(check('/photos/x', { host: 'localhost:9000' })).toBeUndefined();
    expect(check('/photos/x', { host: '[::1]:9000' })).toBeUndefined();
    expect(check('/photos/copy', { 'x-amz-copy-source': '/photos/2024/cat.jpg?versionId=null' }, 'PUT')).toBeUndefined();
  });

  it('refuses every way out of a folder with S3’s codes', () => {
    expect(check('/bkt/../x')).toBe('InvalidArgument');
    expect(check('/bkt/./x')).toBe('InvalidArgument');
    expect(check('/bkt/x/..')).toBe('InvalidArgument');
    expect(check('/bkt/..%2Fx')).toBe('InvalidArgument');
    expect(check('/bkt/%2e%2e/x')).toBe('InvalidArgument');
    expect(check('/bkt/%2E%2E%2fx')).toBe('InvalidArgument');
    expect(check('/bkt/%252e%252e%252fx')).toBe('InvalidArgument');
    expect(check('/bkt/..%5Cx')).toBe('InvalidArgument');
    expect(check('/bkt/a\\b')).toBe('InvalidArgument');
    expect(check('/bkt/..%00/x')).toBe('InvalidArgument');
    expect(check('/bkt/a%0Ab')).toBe('InvalidArgument');
    expect(check('/../x')).toBe('InvalidBucketName');
    expect(check('/%2e%2e/x')).toBe('InvalidBucketName');
    expect(check('/..%2Fother%2Fobjects%2Fb/x')).toBe('InvalidBucketName');
    expect(check('//x')).toBe('InvalidBucketName');
    expect(check('/bkt/%E0%A4%A')).toBe('InvalidURI');
    expect(check(`/bkt/${'k'.repeat(1025)}`)).toBe('KeyTooLongError');
    expect(check(`/bkt/${'é'.repeat(513)}`)).toBe('KeyTooLongError');
    expect(check(`/bkt/${'k'.repeat(1024)}`)).toBeUndefined();
  });

  it('refuses an upload id or part number that is no such thing, and a copy source that breaks the same rules', () => {
    expect(check('/bkt/x?partNumber=1&uploadId=..%2F..%2Fother')).toBe('InvalidArgument');
    expect(check(`/bkt/x?partNumber=0&uploadId=${'0'.repeat(32)}`)).toBe('InvalidArgument');
    expect(check(`/bkt/x?partNumber=10001&uploadId=${'0'.repeat(32)}`)).toBe('InvalidArgument');
    expect(check(`/bkt/x?partNumber=..%2F1&uploadId=${'0'.repeat(32)}`)).toBe('InvalidArgument');
    expect(check('/bucket/x', { 'x-amz-copy-source': '/bucket/../../other/objects/b/x' }, 'PUT')).toBe('InvalidArgument');
    expect(check('/bucket/x', { 'x-amz-copy-source': 'bucket/..%2F..%2Fother' }, 'PUT')).toBe('InvalidArgument');
    expect(check('/bucket/x', { 'x-amz-copy-source': '/../x' }, 'PUT')).toBe('InvalidBucketName');
    expect(check('/bucket/x', { 'x-amz-copy-source': 'nokey' }, 'PUT')).toBe('InvalidArgument');
  });

  it('refuses a Host that is not an address: s3rver would read it as a bucket', () => {
    for (const host of ['..', 'bucket.s3.amazonaws.com', 'example.test:9000', '']) expect(check('/x', { host }), host).toBe('InvalidArgument');
  });

  it('knows S3’s bucket rules', () => {
    for (const name of ['abc', 'my-bucket', 'my.bucket', 'a1b', 'a'.repeat(63)]) expect(bucketNameProblem(name), name).toBeUndefined();
    for (const name of ['ab', 'a'.repeat(64), 'My-Bucket', 'my_bucket', '-abc', 'abc-', 'a..b', '192.168.1.1', '..', 'a/b']) expect(bucketNameProblem(name), name).toBeDefined();
  });
});
