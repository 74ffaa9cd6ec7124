import { chmod, lstat, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const EXPRESS = join(ROOT, 'fixtures', 'node', 'express');

/** The one code-cache file of `dir` (src/cli/code-cache.ts names it after Node.js, the bundle and Node's options). */
async function cacheFile(dir: string): Promise<string> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.v8'));
  expect(names).toHaveLength(1);
  return join(dir, names[0] as string);
}

/**
 * The CLI runs its bundle from V8's code cache (src/cli/entry.ts, src/cli/code-cache.ts):
 * the first start keeps what V8 compiled, later starts hand it back.
 */
describe("the CLI's code cache", () => {
  it('is written by the first start, private, then used as it is; import() works from it', async () => {
    const dir = await tempDir('runplan-code-cache-');
    const env = { NODE_COMPILE_CACHE: dir };
    expect((await runCli(['plan', EXPRESS, '--json'], env)).code).toBe(0);
    const file = await cacheFile(dir);
    const first = await stat(file);
    expect(first.mode & 0o777).toBe(0o600);
    // Started from the cache: the file is left as it was, and the bundle's import() (yaml, for the manifests) loads.
    const out = await tempDir('runplan-k8s-');
    const k8s = await runCli(['k8s', EXPRESS, '--out', out, '--image', 'registry.example/app:1'], env);
    expect(k8s.code, k8s.output).toBe(0);
    expect(k8s.stderr).not.toMatch(/Warning|ERR_VM/);
    expect((await readdir(out)).some((n) => n.endsWith('.yaml'))).toBe(true);
    expect((await stat(file)).mtimeMs).toBe(first.mtimeMs);
  });

  it('is never read from a file others can write or through a link, and a damaged one is compiled afresh and replaced', async () => {
    const dir = await tempDir('runplan-code-cache-');
    const env = { NODE_COMPILE_CACHE: dir };
    expect((await runCli(['--version'], env)).code).toBe(0);
    const file = await cacheFile(dir);

    // Damaged: V8 refuses it, the CLI still answers, and the cache is written again.
    await writeFile(file, Buffer.alloc(4096, 7), { mode: 0o600 });
    expect((await runCli(['plan', EXPRESS, '--json'], env)).code).toBe(0);
    expect((await readFile(file)).equals(Buffer.alloc(4096, 7))).toBe(false);

    // Writable by the group: not read, and replaced by the CLI's own.
    await chmod(file, 0o620);
    expect((await runCli(['--version'], env)).code).toBe(0);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    // A link where the cache was, to a valid cache: not followed (it would be used and left in place), so the
    // link is replaced by a file of the CLI's own and its target is untouched.
    const target = join(await tempDir('runplan-elsewhere-'), 'target');
    const valid = await readFile(file);
    await writeFile(target, valid, { mode: 0o600 });
    await rm(file);
    await symlink(target, file);
    expect((await runCli(['--version'], env)).code).toBe(0);
    expect((await lstat(file)).isFile()).toBe(true);
    expect((await readFile(target)).equals(valid)).toBe(true);
  });

  it("goes into runplan's cache directory only once a command made it: nothing is created for it", async () => {
    const home = await tempDir('runplan-code-cache-home-');
    const cacheDir = join(home, 'cache');
    expect((await runCli(['plan', EXPRESS, '--json', '--inventory', join(ROOT, 'test', 'golden', 'inventory.json')], { RUNPLAN_CACHE_DIR: cacheDir })).code).toBe(0);
    expect((await runCli(['--version'], { RUNPLAN_CACHE_DIR: cacheDir })).code).toBe(0);
    expect(await readdir(home)).toEqual([]);
    await mkdir(cacheDir);
    expect((await runCli(['--version'], { RUNPLAN_CACHE_DIR: cacheDir })).code).toBe(0);
    expect(await readdir(join(cacheDir, 'node-compile-cache'))).toHaveLength(1);
  });

  it('is off with NODE_DISABLE_COMPILE_CACHE', async () => {
    const dir = await tempDir('runplan-code-cache-');
    expect((await runCli(['--version'], { NODE_COMPILE_CACHE: dir, NODE_DISABLE_COMPILE_CACHE: '1' })).code).toBe(0);
    expect(await readdir(dir)).toEqual([]);
  });
});
