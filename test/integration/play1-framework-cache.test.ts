import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Play1Errors } from '../../buildpacks/play1/errors.js';
import { ensureFramework, frameworkCacheEntry } from '../../buildpacks/play1/framework-cache.js';
import { installFrameworkAction } from '../../buildpacks/play1/install-framework.js';
import { assembleEnvironment } from '../../src/env/assemble.js';
import { resolveHostSettings } from '../../src/host/host-settings.js';
import { InstantClock } from '../../src/time/clock.js';
import { freePort } from '../helpers/ports.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The real download, checksum, unpack and cache code against a local HTTP
 * server and small synthetic distributions (no JVM needed here).
 */
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
let root: string;
let server: Server;
let base: string;
const served = new Map<string, Buffer | ((count: number) => { status: number; body?: Buffer })>();
const hits = new Map<string, number>();

async function distribution(name: string, files: Record<string, { text: string; mode?: number }>): Promise<string> {
  const dir = join(root, 'src', name);
  for (const [path, { text, mode }] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
    await chmod(join(dir, path), mode ?? 0o644);
  }
  return dir;
}
const LAYOUT = { 'play-9.9.9/play': { text: '#!/bin/sh\necho play\n', mode: 0o755 }, 'play-9.9.9/framework/src/play/version': { text: '9.9.9\n' } };

async function zipOf(name: string, entries?: string): Promise<Buffer> {
  const out = join(root, `${name}.zip`);
  // Python's zipfile keeps Unix modes, like Play's own archives; `entries` writes raw names (e.g. "../evil").
  const script = entries
    ? `import zipfile,sys\nwith zipfile.ZipFile(sys.argv[1],'w') as z:\n${entries}`
    : 'import zipfile,sys,os\nwith zipfile.ZipFile(sys.argv[1],"w") as z:\n  for d,_,fs in os.walk(sys.argv[2]):\n    for f in fs: z.write(os.path.join(d,f), os.path.relpath(os.path.join(d,f), sys.argv[2]))';
  execFileSync('python3', ['-c', script, out, join(root, 'src', name)]);
  return readFile(out);
}

beforeAll(async () => {
  root = await tempDir('runplan-play1-cache-');
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    const count = (hits.get(path) ?? 0) + 1;
    hits.set(path, count);
    const entry = served.get(path);
    if (entry === undefined) return void res.writeHead(404).end();
    const answer = typeof entry === 'function' ? entry(count) : { status: 200, body: entry };
    res.writeHead(answer.status, answer.body ? { 'content-length': answer.body.length } : {}).end(answer.body);
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  base = `http://127.0.0.1:${port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function cacheDir() {
  return tempDir('runplan-play1-cache-dir-');
}

describe('Play framework download and shared cache', () => {
  it('downloads, verifies and unpacks a zip once, keeping the launcher executable; later builds reuse it', async () => {
    await distribution('good', LAYOUT);
    const zip = await zipOf('good');
    served.set('/good.zip', zip);
    const cache = await cacheDir();
    const lines: string[] = [];
    const release = { version: '9.9.9', url: `${base}/good.zip`, sha256: sha(zip) };
    const first = await ensureFramework(cache, release, { log: (l) => lines.push(l) });
    expect(first).toEqual({ dir: frameworkCacheEntry(cache, release), cached: false });
    expect((await stat(join(first.dir, 'play'))).mode & 0o777).toBe(0o755);
    expect(await readFile(join(first.dir, 'framework/src/play/version'), 'utf8')).toBe('9.9.9\n');
    expect(lines).toEqual([`downloading ${base}/good.zip (1 kB)`, `verified SHA-256 ${release.sha256.slice(0, 16)}…`, 'unpacked Play 9.9.9 (zip) into the shared cache']);
    expect(await ensureFramework(cache, release)).toEqual({ dir: first.dir, cached: true });
    expect(hits.get('/good.zip')).toBe(1);
    expect(await readdir(join(cache, 'play1'))).toEqual([`9.9.9-${release.sha256.slice(0, 16)}`]);
  });

  it('unpacks a tar.gz the same way, and gives back an execute bit a distribution lost', async () => {
    await distribution('tgz', { ...LAYOUT, 'play-9.9.9/play': { text: '#!/bin/sh\n', mode: 0o644 } });
    const file = join(root, 'tgz.tar.gz');
    await tar.c({ gzip: true, file, cwd: join(root, 'src', 'tgz') }, ['play-9.9.9']);
    const bytes = await readFile(file);
    served.set('/tgz.tar.gz', bytes);
    const { dir } = await ensureFramework(await cacheDir(), { version: '9.9.9', url: `${base}/tgz.tar.gz`, sha256: sha(bytes) });
    expect((await stat(join(dir, 'play'))).mode & 0o777).toBe(0o755);
  });

  it('reads a file: mirror on the host itself', async () => {
    await distribution('local', LAYOUT);
    const zip = await zipOf('local');
    const { cached } = await ensureFramework(await cacheDir(), { version: '9.9.9', url: pathToFileURL(join(root, 'local.zip')).href, sha256: sha(zip) });
    expect(cached).toBe(false);
  });

  it('fails cleanly on a checksum mismatch, caches nothing, and installs the genuine archive later', async () => {
    await distribution('bad', LAYOUT);
    const zip = await zipOf('bad');
    const corrupt = Buffer.from(zip);
    corrupt.writeUInt8(corrupt.readUInt8(100) ^ 0xff, 100);
    served.set('/bad.zip', corrupt);
    const cache = await cacheDir();
    const release = { version: '9.9.9', url: `${base}/bad.zip`, sha256: sha(zip) };
    await expect(ensureFramework(cache, release)).rejects.toMatchObject({
      code: Play1Errors.PLAY1_CHECKSUM_MISMATCH.code,
      message: expect.stringContaining(`has SHA-256 ${sha(corrupt)}, but the checksum table expects ${sha(zip)}`),
    });
    expect(await readdir(join(cache, 'play1'))).toEqual([]);
    served.set('/bad.zip', zip);
    expect((await ensureFramework(cache, release)).cached).toBe(false);
  });

  it('retries transient failures after a doubling pause on the injected clock', async () => {
    await distribution('flaky', LAYOUT);
    const zip = await zipOf('flaky');
    served.set('/flaky.zip', (n) => (n === 1 ? { status: 503 } : { status: 200, body: zip }));
    const clock = new InstantClock();
    const lines: string[] = [];
    await ensureFramework(await cacheDir(), { version: '9.9.9', url: `${base}/flaky.zip`, sha256: sha(zip) }, { clock, log: (l) => lines.push(l) });
    expect(clock.sleeps).toEqual([1000]);
    expect(lines[0]).toBe(`download of ${base}/flaky.zip failed (HTTP 503 Service Unavailable); attempt 2 of 3 in 1 s`);

    served.set('/down.zip', () => ({ status: 502 }));
    const again = new InstantClock();
    await expect(ensureFramework(await cacheDir(), { version: '9.9.9', url: `${base}/down.zip`, sha256: sha(zip) }, { clock: again })).rejects.toMatchObject({
      code: Play1Errors.PLAY1_DOWNLOAD_FAILED.code,
      message: `RUNPLAN_E_PLAY1_DOWNLOAD_FAILED: ${base}/down.zip could not be downloaded after 3 attempts: HTTP 502 Bad Gateway.`,
    });
    expect(again.sleeps).toEqual([1000, 2000]);
  });

  it('does not retry what cannot change (404), and counts a refused connection as transient', async () => {
    await expect(ensureFramework(await cacheDir(), { version: '9.9.9', url: `${base}/missing.zip`, sha256: 'a'.repeat(64) }, { clock: new InstantClock() })).rejects.toMatchObject({
      code: Play1Errors.PLAY1_DOWNLOAD_FAILED.code,
      message: expect.stringContaining('answered HTTP 404'),
    });
    expect(hits.get('/missing.zip')).toBe(1);
    const closed = `http://127.0.0.1:${await freePort()}/x.zip`;
    const clock = new InstantClock();
    await expect(ensureFramework(await cacheDir(), { version: '9.9.9', url: closed, sha256: 'a'.repeat(64) }, { clock })).rejects.toMatchObject({ message: expect.stringContaining('ECONNREFUSED') });
    expect(clock.sleeps).toHaveLength(2);
  });

  it.each([
    ['not an archive', async () => Buffer.from('<html>a login page</html>'), /neither a zip nor a tar archive/],
    ['no play launcher', async () => { await distribution('nolauncher', { 'play-9.9.9/framework/x': { text: 'x' } }); return zipOf('nolauncher'); }, /no play launcher with a framework\/ directory/],
    ['an entry outside the root', async () => zipOf('evil', "  z.writestr('play-9.9.9/play', 'x')\n  z.writestr('../evil', 'x')\n"), /cannot be unpacked as zip|outside/],
    ['a symbolic link', async () => zipOf('link', "  i = zipfile.ZipInfo('play-9.9.9/framework/link'); i.create_system = 3; i.external_attr = 0o120777 << 16\n  z.writestr(i, '/etc/passwd')\n"), /symbolic link/],
  ])('refuses an archive with %s, and caches nothing', async (_name, make, message) => {
    const bytes = await make();
    const path = `/${createHash('md5').update(bytes).digest('hex')}.bin`;
    served.set(path, bytes);
    const cache = await cacheDir();
    await expect(ensureFramework(cache, { version: '9.9.9', url: `${base}${path}`, sha256: sha(bytes) })).rejects.toMatchObject({ code: Play1Errors.PLAY1_ARCHIVE_INVALID.code, message });
    expect(await readdir(join(cache, 'play1'))).toEqual([]);
    expect(await readdir(root)).not.toContain('evil');
  });

  it('lets concurrent builds install the same release: one entry, every build served', async () => {
    await distribution('busy', LAYOUT);
    const zip = await zipOf('busy');
    served.set('/busy.zip', zip);
    const cache = await cacheDir();
    const release = { version: '9.9.9', url: `${base}/busy.zip`, sha256: sha(zip) };
    const results = await Promise.all([1, 2, 3].map(() => ensureFramework(cache, release)));
    expect(new Set(results.map((r) => r.dir)).size).toBe(1);
    expect(await readdir(join(cache, 'play1'))).toHaveLength(1);
  });

  it('removes temporary directories a killed build left more than a day ago, and only those', async () => {
    await distribution('leftovers', LAYOUT);
    const zip = await zipOf('leftovers');
    served.set('/leftovers.zip', zip);
    const cache = await cacheDir();
    await mkdir(join(cache, 'play1', '.tmp-abandoned'), { recursive: true });
    await mkdir(join(cache, 'play1', '.tmp-in-use'), { recursive: true });
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    await utimes(join(cache, 'play1', '.tmp-abandoned'), twoDaysAgo, twoDaysAgo);
    await ensureFramework(cache, { version: '9.9.9', url: `${base}/leftovers.zip`, sha256: sha(zip) });
    expect((await readdir(join(cache, 'play1'))).filter((n) => n.startsWith('.tmp-'))).toEqual(['.tmp-in-use']);
  });

  it('links the cached distribution into the build (action play1/install-framework)', async () => {
    await distribution('linked', LAYOUT);
    const zip = await zipOf('linked');
    served.set('/linked.zip', zip);
    const app = await tempDir('runplan-play1-app-');
    const host = resolveHostSettings({ cacheDir: await cacheDir(), instance: { cpus: 1, memoryMb: 512 } });
    const lines: string[] = [];
    await installFrameworkAction({})({ version: '9.9.9', url: `${base}/linked.zip`, sha256: sha(zip), dest: '.runplan/play-9.9.9' }, { appDir: app, env: assembleEnvironment({}), host, log: (l) => lines.push(l) });
    const linked = await stat(join(app, '.runplan/play-9.9.9/play'));
    const cached = await stat(join(frameworkCacheEntry(host.cacheDir, { version: '9.9.9', sha256: sha(zip) }), 'play'));
    expect(linked.ino).toBe(cached.ino);
    expect(lines.at(-1)).toMatch(/^Play 9\.9\.9 installed \(.+\), linked into \.runplan\/play-9\.9\.9 in \d+ ms$/);
  });
});
