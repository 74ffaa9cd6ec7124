import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, copyFile, lstat, mkdir, readdir, readFile, readlink, realpath, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carryOutInstall } from '../../src/building/install/install-step.js';
import type { NpmRunner } from '../../src/building/install/npm-tarball.js';
import { ensureTree, treeCacheEntry } from '../../src/building/install/tree-cache.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { InstallSchema, type Install, type PackageSource } from '../../src/plan/schema.js';
import { InstantClock } from '../../src/time/clock.js';
import { freePort } from '../helpers/ports.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The shared tree cache and install steps: the real download, digest, unpack,
 * cache and link code against a local HTTP server and small synthetic archives
 * shaped like a Play distribution (no JVM needed here).
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

/** Serves `bytes` at a fresh path; the archive source of it. */
function serve(name: string, bytes: Buffer): PackageSource & { type: 'archive' } {
  served.set(`/${name}`, bytes);
  return { type: 'archive', url: `${base}/${name}`, sha256: sha(bytes) };
}

const archiveEntries = (cache: string) => readdir(join(cache, 'trees', 'archive')).catch(() => [] as string[]);

beforeAll(async () => {
  root = await tempDir('runplan-tree-cache-');
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
  return tempDir('runplan-tree-cache-dir-');
}

describe('shared tree cache (archive sources)', () => {
  it('downloads, verifies and unpacks a zip once, keeping its execute bits, read-only, and removing its top directory; later builds reuse it', async () => {
    await distribution('good', LAYOUT);
    const source = serve('good.zip', await zipOf('good'));
    const cache = await cacheDir();
    const lines: string[] = [];
    const first = await ensureTree(cache, source, { log: (l) => lines.push(l) });
    expect(first).toEqual({ dir: treeCacheEntry(cache, source), cached: false });
    expect(first.dir).toBe(join(cache, 'trees', 'archive', source.sha256.slice(0, 24)));
    // Frozen as it enters the cache: builds share the entry itself (docs/security.md).
    expect((await stat(join(first.dir, 'play'))).mode & 0o777).toBe(0o555);
    expect((await stat(join(first.dir, 'framework/src/play/version'))).mode & 0o777).toBe(0o444);
    expect((await stat(join(first.dir, 'framework'))).mode & 0o777).toBe(0o555);
    expect(await readFile(join(first.dir, 'framework/src/play/version'), 'utf8')).toBe('9.9.9\n');
    expect(lines).toEqual([
      `downloading ${source.url} into the shared cache`,
      `downloading ${source.url} (1 kB)`,
      `verified SHA-256 ${source.sha256.slice(0, 16)}…`,
      expect.stringMatching(/^cached \S+ \(\d+ k?B unpacked\) in \d+(\.\d+)? s$/),
    ]);
    expect(await ensureTree(cache, source)).toEqual({ dir: first.dir, cached: true });
    expect(hits.get('/good.zip')).toBe(1);
    // Nothing but the entry: the work directory is gone.
    expect(await archiveEntries(cache)).toEqual([source.sha256.slice(0, 24)]);
  });

  it('unpacks a tar.gz the same way', async () => {
    await distribution('tgz', LAYOUT);
    const file = join(root, 'tgz.tar.gz');
    await tar.c({ gzip: true, file, cwd: join(root, 'src', 'tgz') }, ['play-9.9.9']);
    const { dir, cached } = await ensureTree(await cacheDir(), serve('tgz.tar.gz', await readFile(file)));
    expect(cached).toBe(false);
    expect(await readdir(dir)).toEqual(expect.arrayContaining(['play', 'framework']));
    expect((await stat(join(dir, 'play'))).mode & 0o777).toBe(0o555);
  });

  it('keeps an archive with several top-level entries as it is', async () => {
    await distribution('flat', { 'bin/tool': { text: 'x', mode: 0o755 }, README: { text: 'r' } });
    const { dir } = await ensureTree(await cacheDir(), serve('flat.zip', await zipOf('flat')));
    expect((await readdir(dir)).sort()).toEqual(['README', 'bin']);
  });

  it('reads a file: mirror on the host itself', async () => {
    await distribution('local', LAYOUT);
    const zip = await zipOf('local');
    const { dir, cached } = await ensureTree(await cacheDir(), { type: 'archive', url: pathToFileURL(join(root, 'local.zip')).href, sha256: sha(zip) });
    expect(cached).toBe(false);
    expect(await readFile(join(dir, 'play'), 'utf8')).toBe('#!/bin/sh\necho play\n');
    await expect(ensureTree(await cacheDir(), { type: 'archive', url: pathToFileURL(join(root, 'absent.zip')).href, sha256: sha(zip) })).rejects.toMatchObject({
      code: CoreErrors.BUILD_DOWNLOAD_FAILED.code,
      message: expect.stringContaining('cannot be read: ENOENT'),
    });
  });

  it('fails cleanly on a digest mismatch, caches nothing, and installs the genuine archive later', async () => {
    await distribution('bad', LAYOUT);
    const zip = await zipOf('bad');
    const corrupt = Buffer.from(zip);
    corrupt.writeUInt8(corrupt.readUInt8(100) ^ 0xff, 100);
    served.set('/bad.zip', corrupt);
    const cache = await cacheDir();
    const source: PackageSource = { type: 'archive', url: `${base}/bad.zip`, sha256: sha(zip) };
    const clock = new InstantClock();
    await expect(ensureTree(cache, source, { clock })).rejects.toMatchObject({
      code: CoreErrors.BUILD_DIGEST_MISMATCH.code,
      message: expect.stringContaining(`has SHA-256 ${sha(corrupt)}, but the plan expects ${sha(zip)}; the download was discarded and nothing was cached`),
      details: { url: source.url, expected: sha(zip), actual: sha(corrupt) },
    });
    // The mirror would serve the same bytes again: no retry.
    expect(hits.get('/bad.zip')).toBe(1);
    expect(clock.sleeps).toEqual([]);
    expect(await archiveEntries(cache)).toEqual([]);
    served.set('/bad.zip', zip);
    expect((await ensureTree(cache, source)).cached).toBe(false);
    expect(await archiveEntries(cache)).toEqual([sha(zip).slice(0, 24)]);
  });

  it('retries transient failures after a doubling pause on the injected clock', async () => {
    await distribution('flaky', LAYOUT);
    const zip = await zipOf('flaky');
    served.set('/flaky.zip', (n) => (n === 1 ? { status: 503 } : { status: 200, body: zip }));
    const clock = new InstantClock();
    const lines: string[] = [];
    const flaky: PackageSource = { type: 'archive', url: `${base}/flaky.zip`, sha256: sha(zip) };
    expect((await ensureTree(await cacheDir(), flaky, { clock, log: (l) => lines.push(l) })).cached).toBe(false);
    expect(clock.sleeps).toEqual([1000]);
    expect(hits.get('/flaky.zip')).toBe(2);
    expect(lines[1]).toBe(`download of ${base}/flaky.zip failed (HTTP 503 Service Unavailable); attempt 2 of 3 in 1 s`);

    served.set('/down.zip', () => ({ status: 502 }));
    const again = new InstantClock();
    const cache = await cacheDir();
    await expect(ensureTree(cache, { type: 'archive', url: `${base}/down.zip`, sha256: sha(zip) }, { clock: again })).rejects.toMatchObject({
      code: CoreErrors.BUILD_DOWNLOAD_FAILED.code,
      message: `RUNPLAN_E_BUILD_DOWNLOAD_FAILED: ${base}/down.zip could not be downloaded after 3 attempts: HTTP 502 Bad Gateway.`,
    });
    expect(again.sleeps).toEqual([1000, 2000]);
    expect(hits.get('/down.zip')).toBe(3);
    expect(await archiveEntries(cache)).toEqual([]);

    served.set('/slow.zip', () => ({ status: 429 }));
    const custom = new InstantClock();
    await expect(ensureTree(await cacheDir(), { type: 'archive', url: `${base}/slow.zip`, sha256: sha(zip) }, { clock: custom, attempts: 4, retryDelayMs: 50 })).rejects.toMatchObject({
      message: expect.stringContaining('after 4 attempts: HTTP 429'),
    });
    expect(custom.sleeps).toEqual([50, 100, 200]);
  });

  it('does not retry what cannot change (404), and counts a refused connection as transient', async () => {
    const clock404 = new InstantClock();
    await expect(ensureTree(await cacheDir(), { type: 'archive', url: `${base}/missing.zip`, sha256: 'a'.repeat(64) }, { clock: clock404 })).rejects.toMatchObject({
      code: CoreErrors.BUILD_DOWNLOAD_FAILED.code,
      message: expect.stringContaining('answered HTTP 404'),
      details: { url: `${base}/missing.zip`, status: 404 },
    });
    expect(hits.get('/missing.zip')).toBe(1);
    expect(clock404.sleeps).toEqual([]);
    const closed = `http://127.0.0.1:${await freePort()}/x.zip`;
    const clock = new InstantClock();
    await expect(ensureTree(await cacheDir(), { type: 'archive', url: closed, sha256: 'a'.repeat(64) }, { clock })).rejects.toMatchObject({
      code: CoreErrors.BUILD_DOWNLOAD_FAILED.code,
      message: expect.stringContaining('ECONNREFUSED'),
    });
    expect(clock.sleeps).toHaveLength(2);
  });

  it.each([
    ['not an archive', async () => Buffer.from('<html>a login page</html>'), /neither a zip nor a tar archive/],
    ['an entry outside the root', async () => zipOf('evil', "  z.writestr('play-9.9.9/play', 'x')\n  z.writestr('../evil', 'x')\n"), /cannot be unpacked as zip|outside/],
    [
      'a symbolic link',
      async () => zipOf('link', "  i = zipfile.ZipInfo('play-9.9.9/framework/link'); i.create_system = 3; i.external_attr = 0o120777 << 16\n  z.writestr(i, '/etc/passwd')\n"),
      /symbolic link/,
    ],
    [
      'a tar entry outside the root',
      async () => {
        await mkdir(join(root, 'tar-evil', 'inner'), { recursive: true });
        await writeFile(join(root, 'tar-evil', 'evil'), 'x');
        const file = join(root, 'tar-evil.tar.gz');
        await tar.c({ gzip: true, file, cwd: join(root, 'tar-evil', 'inner'), preservePaths: true }, ['../evil']);
        return readFile(file);
      },
      /cannot be unpacked as tar.gz.*\.\./,
    ],
    ['a truncated zip', async () => (await zipOf('truncated-src-less', "  z.writestr('play-9.9.9/play', 'x' * 5000)\n")).subarray(0, 200), /cannot be unpacked as zip/],
  ])('refuses an archive with %s, and caches nothing', async (_name, make, message) => {
    const bytes = await make();
    const source = serve(`${createHash('md5').update(bytes).digest('hex')}.bin`, bytes);
    const cache = await cacheDir();
    await expect(ensureTree(cache, source)).rejects.toMatchObject({ code: CoreErrors.BUILD_ARCHIVE_INVALID.code, message });
    expect(await archiveEntries(cache)).toEqual([]);
    expect(await readdir(root)).not.toContain('evil');
    expect(await readdir(join(root, '..'))).not.toContain('evil');
  });

  it('lets concurrent builds install the same archive: one entry, every build served', async () => {
    await distribution('busy', LAYOUT);
    const source = serve('busy.zip', await zipOf('busy'));
    const cache = await cacheDir();
    const results = await Promise.all([1, 2, 3].map(() => ensureTree(cache, source)));
    expect(new Set(results.map((r) => r.dir))).toEqual(new Set([treeCacheEntry(cache, source)]));
    expect(await archiveEntries(cache)).toEqual([source.sha256.slice(0, 24)]);
    expect(await readFile(join(treeCacheEntry(cache, source), 'framework/src/play/version'), 'utf8')).toBe('9.9.9\n');
  });

  it('removes temporary directories a killed build left more than a day ago, and only those', async () => {
    await distribution('leftovers', LAYOUT);
    const source = serve('leftovers.zip', await zipOf('leftovers'));
    const cache = await cacheDir();
    const parent = join(cache, 'trees', 'archive');
    await mkdir(join(parent, '.tmp-abandoned', 'unpacked'), { recursive: true });
    await mkdir(join(parent, '.tmp-in-use'), { recursive: true });
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    await utimes(join(parent, '.tmp-abandoned'), twoDaysAgo, twoDaysAgo);
    await ensureTree(cache, source);
    expect((await readdir(parent)).sort()).toEqual(['.tmp-in-use', source.sha256.slice(0, 24)]);
  });
});

describe('shared tree cache (npm sources)', () => {
  /** A package tarball as the registry serves it (files under package/), and its integrity. */
  async function npmTarball(name: string): Promise<{ file: string; integrity: string }> {
    const dir = join(root, 'npm', name);
    await mkdir(join(dir, 'package', 'bin'), { recursive: true });
    await writeFile(join(dir, 'package', 'package.json'), JSON.stringify({ name, version: '1.2.3' }));
    await writeFile(join(dir, 'package', 'bin', 'tool'), '#!/bin/sh\necho tool\n', { mode: 0o755 });
    const file = join(root, 'npm', `${name.replace('/', '-')}.tgz`);
    await tar.c({ gzip: true, file, cwd: dir, portable: true }, ['package']);
    return {
      file,
      integrity: `sha512-${createHash('sha512')
        .update(await readFile(file))
        .digest('base64')}`,
    };
  }

  /** Stands for the host's npm: `npm pack <spec> --pack-destination <dir>` writes the tarball there. */
  function packer(file: string, calls: (readonly string[])[] = []): NpmRunner {
    return async (args) => {
      calls.push(args);
      const dest = args[args.indexOf('--pack-destination') + 1] as string;
      await copyFile(file, join(dest, 'scope-tool-1.2.3.tgz'));
      return 'scope-tool-1.2.3.tgz\n';
    };
  }

  it('fetches a package with npm pack, verifies its integrity and removes its package/ prefix', async () => {
    const { file, integrity } = await npmTarball('@scope/tool');
    const cache = await cacheDir();
    const source: PackageSource = { type: 'npm', name: '@scope/tool', version: '1.2.3', integrity };
    const calls: (readonly string[])[] = [];
    const { dir, cached } = await ensureTree(cache, source, { npm: packer(file, calls) });
    expect(cached).toBe(false);
    expect(dir).toBe(join(cache, 'trees', 'npm', `@scope+tool@1.2.3-${createHash('sha256').update(integrity).digest('hex').slice(0, 12)}`));
    expect((await readdir(dir)).sort()).toEqual(['bin', 'package.json']);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.slice(0, 2)).toEqual(['pack', '@scope/tool@1.2.3']);
    expect(await ensureTree(cache, source, { npm: packer(file, calls) })).toEqual({ dir, cached: true });
    expect(calls).toHaveLength(1);
  });

  it('refuses a tarball whose integrity differs, and reports npm failures as download failures; nothing is cached', async () => {
    const { file, integrity } = await npmTarball('tool');
    const cache = await cacheDir();
    const wrong = `sha512-${Buffer.alloc(64, 1).toString('base64')}`;
    await expect(ensureTree(cache, { type: 'npm', name: 'tool', version: '1.2.3', integrity: wrong }, { npm: packer(file) })).rejects.toMatchObject({
      code: CoreErrors.BUILD_DIGEST_MISMATCH.code,
      message: expect.stringContaining(`tool@1.2.3 has integrity ${integrity}, but the plan expects ${wrong}`),
    });
    const failing: NpmRunner = async () => {
      throw new Error('npm pack tool@1.2.3 failed: 404 Not Found');
    };
    await expect(ensureTree(cache, { type: 'npm', name: 'tool', version: '1.2.3', integrity }, { npm: failing })).rejects.toMatchObject({
      code: CoreErrors.BUILD_DOWNLOAD_FAILED.code,
      message: expect.stringContaining('404 Not Found'),
    });
    expect(await readdir(join(cache, 'trees', 'npm'))).toEqual([]);
  });
});

describe('install steps (carryOutInstall)', () => {
  const install = (source: PackageSource, extra: Partial<Install> = {}): Install =>
    InstallSchema.parse({ kind: 'install', source, target: '.runplan/play-9.9.9', executables: ['play'], links: [{ path: '.runplan/bin/play', target: 'play' }], ...extra });

  it('makes the target a symlink to the read-only cache entry, with its executables and links; a second application reuses the cache', async () => {
    await distribution('linked', LAYOUT);
    const source = serve('linked.zip', await zipOf('linked'));
    const cache = await cacheDir();
    const app = await tempDir('runplan-tree-cache-app-');
    // Whatever was at the target goes.
    await mkdir(join(app, '.runplan/play-9.9.9'), { recursive: true });
    await writeFile(join(app, '.runplan/play-9.9.9/stale'), 'old');
    const lines: string[] = [];
    await carryOutInstall(install(source), app, cache, { log: (l) => lines.push(l) });
    expect(await readdir(join(app, '.runplan/play-9.9.9'))).not.toContain('stale');
    // One symlink, nothing linked file by file; no file of the cache can be written through it.
    expect(await readlink(join(app, '.runplan/play-9.9.9'))).toBe(await realpath(treeCacheEntry(cache, source)));
    const linked = await stat(join(app, '.runplan/play-9.9.9/play'));
    expect(linked.mode & 0o777).toBe(0o555);
    expect((await stat(join(app, '.runplan/play-9.9.9/framework/src/play/version'))).mode & 0o222).toBe(0);
    expect((await lstat(join(app, '.runplan/bin/play'))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(app, '.runplan/bin/play'))).toBe('../play-9.9.9/play');
    expect(execFileSync(join(app, '.runplan/bin/play'), { encoding: 'utf8' })).toBe('play\n');
    expect(lines.at(-1)).toBe(`${source.url} in .runplan/play-9.9.9`);

    const other = await tempDir('runplan-tree-cache-app-');
    const again: string[] = [];
    await carryOutInstall(install(source), other, cache, { log: (l) => again.push(l) });
    expect(again).toEqual([`${source.url} in .runplan/play-9.9.9 (from the shared cache)`]);
    expect(hits.get('/linked.zip')).toBe(1);
    expect((await stat(join(other, '.runplan/play-9.9.9/play'))).ino).toBe(linked.ino);
  });

  it('installs a tree inside an earlier one without writing into the cache (npm inside Node.js)', async () => {
    await distribution('outer', LAYOUT);
    await distribution('inner', { 'tool/bin/tool': { text: '#!/bin/sh\necho tool\n', mode: 0o755 } });
    const outer = serve('outer.zip', await zipOf('outer'));
    const inner = serve('inner.zip', await zipOf('inner'));
    const cache = await cacheDir();
    const app = await tempDir('runplan-tree-cache-app-');
    await carryOutInstall(install(outer), app, cache);
    await carryOutInstall(install(inner, { target: '.runplan/play-9.9.9/framework/tools/tool', executables: ['bin/tool'], links: [{ path: '.runplan/bin/tool', target: 'bin/tool' }] }), app, cache);
    // The outer target became a directory of symlinks down to the inner one's parent; the cache entry has no new file.
    expect((await lstat(join(app, '.runplan/play-9.9.9'))).isDirectory()).toBe(true);
    expect((await lstat(join(app, '.runplan/play-9.9.9/play'))).isSymbolicLink()).toBe(true);
    expect((await lstat(join(app, '.runplan/play-9.9.9/framework/src'))).isSymbolicLink()).toBe(true);
    expect(await readdir(join(treeCacheEntry(cache, outer), 'framework'))).toEqual(['src']);
    expect(execFileSync(join(app, '.runplan/bin/tool'), { encoding: 'utf8' })).toBe('tool\n');
    expect(execFileSync(join(app, '.runplan/bin/play'), { encoding: 'utf8' })).toBe('play\n');
  });

  it('writes a real copy for a directory that leaves the host (an image context)', async () => {
    await distribution('copied', LAYOUT);
    const source = serve('copied.zip', await zipOf('copied'));
    const cache = await cacheDir();
    const context = await tempDir('runplan-tree-cache-context-');
    await carryOutInstall(install(source), context, cache, { mode: 'copy' });
    const copy = await lstat(join(context, '.runplan/play-9.9.9/play'));
    expect(copy.isFile()).toBe(true);
    expect(copy.ino).not.toBe((await stat(join(treeCacheEntry(cache, source), 'play'))).ino);
    expect(copy.mode & 0o777).toBe(0o555);
    expect(execFileSync(join(context, '.runplan/bin/play'), { encoding: 'utf8' })).toBe('play\n');
  });

  it('gives back an execute bit a distribution lost', async () => {
    await distribution('noexec', { ...LAYOUT, 'play-9.9.9/play': { text: '#!/bin/sh\necho play\n', mode: 0o644 } });
    const file = join(root, 'noexec.tar.gz');
    await tar.c({ gzip: true, file, cwd: join(root, 'src', 'noexec') }, ['play-9.9.9']);
    const app = await tempDir('runplan-tree-cache-app-');
    await carryOutInstall(install(serve('noexec.tar.gz', await readFile(file)), { links: [] }), app, await cacheDir());
    expect((await stat(join(app, '.runplan/play-9.9.9/play'))).mode & 0o777).toBe(0o555);
  });

  it('refuses a tree without an executable the step names', async () => {
    await distribution('nolauncher', { 'play-9.9.9/framework/x': { text: 'x' } });
    const source = serve('nolauncher.zip', await zipOf('nolauncher'));
    await expect(carryOutInstall(install(source), await tempDir('runplan-tree-cache-app-'), await cacheDir())).rejects.toMatchObject({
      code: CoreErrors.BUILD_ARCHIVE_INVALID.code,
      message: expect.stringContaining(`${source.url} has no file play, which this step needs`),
    });
  });

  it('refuses targets and links that leave the application or the tree', async () => {
    await distribution('escape', LAYOUT);
    const source = serve('escape.zip', await zipOf('escape'));
    const cache = await cacheDir();
    const app = await tempDir('runplan-tree-cache-app-');
    // Plans are validated against the schema, but an executor must not trust that they were.
    const unchecked = (extra: Partial<Install>): Install => ({ ...install(source), ...extra });
    for (const step of [
      unchecked({ target: '../outside' }),
      unchecked({ links: [{ path: '../outside-link', target: 'play' }] }),
      unchecked({ links: [{ path: '.runplan/bin/passwd', target: '../../../../etc/passwd' }] }),
      unchecked({ executables: ['../../escape'] }),
    ]) {
      await expect(carryOutInstall(step, app, cache)).rejects.toMatchObject({ code: CoreErrors.BUILD_FILE_ESCAPES_APP.code });
    }
    expect(await readdir(join(app, '..'))).not.toContain('outside');
    expect(await readdir(join(app, '..'))).not.toContain('outside-link');
    expect(() => install(source, { target: '../outside' })).toThrow();
  });

  it('refuses a target under a link the application committed, leaving the folder it points to untouched (issue 11)', async () => {
    await distribution('linked', LAYOUT);
    const source = serve('linked.zip', await zipOf('linked'));
    const cache = await cacheDir();
    const app = await tempDir('runplan-tree-cache-app-');
    const outside = await tempDir('runplan-tree-cache-outside-');
    await writeFile(join(outside, 'keep.txt'), 'host file');
    await symlink(outside, join(app, '.runplan'));
    await expect(carryOutInstall({ ...install(source), target: '.runplan/play' }, app, cache)).rejects.toMatchObject({
      code: CoreErrors.BUILD_FILE_ESCAPES_APP.code,
      // The committed link in the target's way, not a path of the host.
      file: '.runplan',
    });
    expect(await readdir(outside)).toEqual(['keep.txt']);
  });
});
