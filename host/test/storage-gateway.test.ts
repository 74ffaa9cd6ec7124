import { createCipheriv, createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { StorageProvider } from '../src/addons/storage.js';
import { type PartHealth, Supervisor } from '../src/supervision/supervisor.js';
import { presign, s3, s3Stream, type S3StreamBody } from './helpers/s3-client.js';

/**
 * The storage add-ons' gateway (radosgw on a one-node Ceph cluster) as the host runs it,
 * supervised: what it refuses to store, a large multipart upload, what it keeps when a
 * daemon is killed, and what it costs (idle memory, start time, logged for docs/perf.md).
 */

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const md5 = (data: string | Buffer, encoding: 'hex' | 'base64') => createHash('md5').update(data).digest(encoding);
const codeOf = (body: string) => /<Code>([^<]+)<\/Code>/.exec(body)?.[1];
const keysOf = (listing: string) => [...listing.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]);

/** The same bytes at the same offset on every run, without a file or a buffer of the whole: AES-128-CTR's keystream, its counter started at the offset's block. */
function* pseudoRandom(offset: number, length: number): Generator<Buffer> {
  const counter = Buffer.alloc(16);
  counter.writeBigUInt64BE(BigInt(offset / 16), 8);
  const cipher = createCipheriv('aes-128-ctr', Buffer.from('runplan-storage!'), counter);
  const zeros = Buffer.alloc(MiB);
  for (let made = 0; made < length; made += MiB) yield cipher.update(zeros.subarray(0, Math.min(MiB, length - made)));
}

/** The three daemons' resident memory, summed (what the machine gives the storage add-ons). */
function residentMib(pids: readonly number[]): number {
  const kib = pids.map((pid) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]));
  return Math.round(kib.reduce((a, b) => a + b, 0) / 1024);
}

describe('the storage gateway (radosgw on a supervised one-node Ceph cluster)', () => {
  let dir: string;
  const lines: string[] = [];
  let supervisor: Supervisor;
  let provider: StorageProvider;
  let v: Record<string, string>;

  beforeAll(async () => {
    dir = join(await tempDir('runplan-host-storage-gateway-'), 'data', 'addons', 'storage');
    supervisor = new Supervisor({ log: (line) => lines.push(line) });
    provider = new StorageProvider({ dir, osdMb: 4096, supervisor });
    const started = Date.now();
    await provider.start();
    console.log(`runplan-host measured: the storage add-ons' cluster made and started in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    v = (await provider.create({ id: `addon_${randomUUID()}`, name: 'files' })).variables;
    expect(await s3(v, 'PUT', '/files')).toMatchObject({ status: 200 });
  }, 180_000);

  afterAll(async () => {
    await provider?.stop();
  }, 120_000);

  it('refuses a corrupted upload: a body not matching its Content-MD5 (BadDigest) or its signed SHA-256 (XAmzContentSHA256Mismatch), storing nothing', async () => {
    const sent = 'the body the client meant to send';
    const corrupted = 'the body the client meant to s3nd';
    expect(await s3(v, 'PUT', '/files/kept.txt', sent, { headers: { 'Content-MD5': md5(sent, 'base64') } })).toMatchObject({ status: 200 });
    for (const key of ['new.txt', 'kept.txt']) {
      const byMd5 = await s3(v, 'PUT', `/files/${key}`, corrupted, { headers: { 'Content-MD5': md5(sent, 'base64') } });
      expect({ key, status: byMd5.status, code: codeOf(byMd5.body) }).toEqual({ key, status: 400, code: 'BadDigest' });
      // The signature covers the declared hash, so it verifies: only the body's own hash can tell.
      const bySha = await s3(v, 'PUT', `/files/${key}`, corrupted, { headers: { 'x-amz-content-sha256': sha256(sent) } });
      expect({ key, status: bySha.status, code: codeOf(bySha.body) }).toEqual({ key, status: 400, code: 'XAmzContentSHA256Mismatch' });
    }
    // Neither made the new object nor replaced the one that was there.
    expect(await s3(v, 'GET', '/files/new.txt')).toMatchObject({ status: 404, body: expect.stringContaining('<Code>NoSuchKey</Code>') });
    expect(await s3(v, 'GET', '/files/kept.txt')).toEqual({ status: 200, body: sent });
    // A part of a multipart upload is checked the same way: the upload lists no part after it.
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec((await s3(v, 'POST', '/files/parts.bin?uploads')).body)?.[1] ?? '';
    const part = await s3(v, 'PUT', `/files/parts.bin?partNumber=1&uploadId=${uploadId}`, corrupted, { headers: { 'x-amz-content-sha256': sha256(sent) } });
    expect({ status: part.status, code: codeOf(part.body) }).toEqual({ status: 400, code: 'XAmzContentSHA256Mismatch' });
    expect((await s3(v, 'GET', `/files/parts.bin?uploadId=${uploadId}`)).body).not.toContain('<Part>');
    expect(await s3(v, 'DELETE', `/files/parts.bin?uploadId=${uploadId}`)).toMatchObject({ status: 204 });
    expect(keysOf((await s3(v, 'GET', '/files?list-type=2')).body)).toEqual(['kept.txt']);
  });

  it('round-trips a 100 MiB multipart upload of 10 MiB parts, streamed both ways: each part’s ETag, the whole’s, and its SHA-256', async () => {
    const size = 100 * MiB;
    const partSize = 10 * MiB;
    const whole = createHash('sha256');
    const partMd5s: Buffer[] = [];
    const started = Date.now();
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec((await s3(v, 'POST', '/files/large.bin?uploads')).body)?.[1] ?? '';
    expect(uploadId).not.toBe('');
    const etags: string[] = [];
    for (let n = 1; n * partSize <= size; n++) {
      const chunks = () => pseudoRandom((n - 1) * partSize, partSize);
      const hash = createHash('sha256');
      const partMd5 = createHash('md5');
      for (const chunk of chunks()) {
        hash.update(chunk);
        partMd5.update(chunk);
        whole.update(chunk);
      }
      partMd5s.push(partMd5.digest());
      const body: S3StreamBody = { chunks, length: partSize, sha256: hash.digest('hex') };
      const answer = await s3Stream(v, 'PUT', `/files/large.bin?partNumber=${n}&uploadId=${uploadId}`, body);
      answer.resume();
      expect(answer.statusCode, `part ${n}`).toBe(200);
      // S3's ETag of a part is its MD5: the gateway got these bytes, not others of the same length.
      expect(answer.headers.etag, `part ${n}`).toBe(`"${partMd5s[n - 1]?.toString('hex')}"`);
      etags.push(answer.headers.etag as string);
    }
    const complete = `<CompleteMultipartUpload>${etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${etag}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
    const completed = await s3(v, 'POST', `/files/large.bin?uploadId=${uploadId}`, complete);
    expect(completed.status).toBe(200);
    expect(completed.body).toContain('<Key>large.bin</Key>');
    // Ceph 16 answers the completion with an empty <ETag></ETag> (Red Hat bug 2266579): the object's own is asked for.
    const head = await s3Stream(v, 'HEAD', '/files/large.bin');
    head.resume();
    expect(head.headers.etag).toBe(`"${md5(Buffer.concat(partMd5s), 'hex')}-${etags.length}"`);
    const uploaded = Date.now();

    const answer = await s3Stream(v, 'GET', '/files/large.bin');
    expect(answer.statusCode).toBe(200);
    expect(Number(answer.headers['content-length'])).toBe(size);
    const read = createHash('sha256');
    let length = 0;
    for await (const chunk of answer as AsyncIterable<Buffer>) {
      read.update(chunk);
      length += chunk.length;
    }
    expect(length).toBe(size);
    expect(read.digest('hex')).toBe(whole.digest('hex'));
    console.log(`runplan-host measured: 100 MiB multipart upload (10 parts) in ${((uploaded - started) / 1000).toFixed(1)} s, read back in ${((Date.now() - uploaded) / 1000).toFixed(1)} s`);
  }, 300_000);

  /** PUTs from four clients at once until stopped: each object the gateway acknowledged (200), with its body. */
  function keepWriting(prefix: string) {
    const acknowledged = new Map<string, string>();
    let stopping = false;
    const loops = [0, 1, 2, 3].map(async (client) => {
      for (let n = 0; !stopping; n++) {
        const key = `${prefix}/${client}-${n}`;
        const body = `${key} ${randomUUID()}`;
        // Refused, reset or answered with an error while a daemon is down: not acknowledged, so nothing is expected of it.
        const answer = await s3(v, 'PUT', `/files/${key}`, body).catch(() => undefined);
        if (answer?.status === 200) acknowledged.set(key, body);
        else await sleep(100);
      }
    });
    return {
      acknowledged,
      stop: async () => {
        stopping = true;
        await Promise.all(loops);
      },
    };
  }

  const healthOf = async (name: string): Promise<PartHealth | undefined> => (await supervisor.health()).find((p) => p.name === name);

  async function untilLogged(pattern: RegExp, ms: number): Promise<RegExpExecArray> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = lines.map((line) => pattern.exec(line)).find((m) => m !== null);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no line of the host's log matches ${pattern} within ${ms} ms; it has:\n${lines.join('\n')}`);
      await sleep(50);
    }
  }

  /**
   * Kills the daemon (kill -9) while four clients write, and waits for the supervisor to start it again:
   * its check is false in between, the log has both lines, and every object acknowledged before,
   * during and after reads back.
   */
  async function killWhileWriting(index: number, name: string) {
    const killed = provider.cluster.pids[index] as number;
    const writing = keepWriting(name.replaceAll(' ', '-'));
    while (writing.acknowledged.size < 40) await sleep(20);
    process.kill(killed, 'SIGKILL');
    const killedAt = Date.now();
    const acknowledgedBefore = writing.acknowledged.size;
    await untilLogged(new RegExp(`^${name} was killed by SIGKILL after [\\d.]+ s; starting it again in 1\\.0 s \\(restart 1\\)$`), 30_000);
    // Asked while it waits out its back-off: the check a client would make finds nothing serving.
    expect(await healthOf(name)).toMatchObject({ up: false, pid: null, lastExit: 'was killed by SIGKILL' });
    const again = await untilLogged(new RegExp(`^${name} serves again \\(PID (\\d+), ([\\d.]+) s after it stopped\\)$`), 120_000);
    const downMs = Date.now() - killedAt;
    expect(Number(again[1])).not.toBe(killed);
    expect(provider.cluster.pids[index]).toBe(Number(again[1]));
    // The back-off was waited out before the start.
    expect(Number(again[2])).toBeGreaterThanOrEqual(1);
    expect(await healthOf(name)).toMatchObject({ up: true, restarts: 1 });
    const afterRestart = writing.acknowledged.size;
    while (writing.acknowledged.size < afterRestart + 40) await sleep(20);
    await writing.stop();
    for (const [key, body] of writing.acknowledged) expect(await s3(v, 'GET', `/files/${key}`), key).toEqual({ status: 200, body });
    console.log(
      `runplan-host measured: ${name} killed (kill -9) and serving again after ${(downMs / 1000).toFixed(1)} s (${again[2]} s by the host's log); ${writing.acknowledged.size} acknowledged PUTs read back (${acknowledgedBefore} of them before the kill)`,
    );
    return writing.acknowledged;
  }

  it('kill -9 of the OSD: the supervisor starts it again after its back-off, saying so; its check is false meanwhile; every acknowledged object reads back', async () => {
    const written = await killWhileWriting(1, 'Ceph OSD');
    expect(written.size).toBeGreaterThanOrEqual(80);
    expect(lines.join('\n')).not.toMatch(/Ceph (monitor|S3 gateway) (was|exited)/);
  }, 240_000);

  it('kill -9 of the gateway: the same, and what the OSD test wrote is still there', async () => {
    const before = keysOf((await s3(v, 'GET', '/files?list-type=2&prefix=Ceph-OSD/')).body);
    const written = await killWhileWriting(2, 'Ceph S3 gateway');
    expect(written.size).toBeGreaterThanOrEqual(80);
    expect(keysOf((await s3(v, 'GET', '/files?list-type=2&prefix=Ceph-OSD/')).body)).toEqual(before);
  }, 240_000);

  it('start time of the made cluster and idle memory of its three daemons (logged for docs/perf.md)', async () => {
    await provider.stop();
    supervisor = new Supervisor({ log: (line) => lines.push(line) });
    provider = new StorageProvider({ dir, osdMb: 4096, supervisor });
    const started = Date.now();
    await provider.start();
    const startMs = Date.now() - started;
    // Serving means the objects too, not an answer of the gateway alone.
    const url = presign(v, 'GET', '/files/kept.txt');
    expect(await s3(v, 'GET', url, undefined, { sign: false })).toEqual({ status: 200, body: 'the body the client meant to send' });
    expect((await supervisor.health()).map((p) => [p.name, p.up])).toEqual([
      ['Ceph monitor', true],
      ['Ceph OSD', true],
      ['Ceph S3 gateway', true],
    ]);
    const afterStart = residentMib(provider.cluster.pids);
    await sleep(20_000);
    const idle = residentMib(provider.cluster.pids);
    console.log(
      `runplan-host measured: the made cluster serves ${(startMs / 1000).toFixed(1)} s after provider.start(); resident memory of ceph-mon + ceph-osd + radosgw: ${afterStart} MiB once serving, ${idle} MiB after 20 s idle (${provider.cluster.pids.map((pid) => `${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()} ${residentMib([pid])}`).join(', ')} MiB)`,
    );
  }, 180_000);
});
