import { spawnSync } from 'node:child_process';
import { chmod, lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LayerCache } from '../../src/building/layer-cache.js';
import { ReadyLayers } from '../../src/building/ready-layers.js';
import { assertReachable } from '../../src/process/ownership.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { type AppUser, appUser, spawnIdentity } from '../../src/process/app-user.js';
import { UserFiles } from '../../src/process/user-files.js';
import { ensureRunDirParent, localRunDir } from '../../src/process/run-dir.js';
import { tempDir } from '../helpers/temp.js';

const asRoot = process.getuid?.() === 0;
const someoneElse: AppUser = { name: 'someone', uid: 54_321, gid: 54_321, dropped: true };

describe('what the unprivileged user can reach and write', () => {
  const savedTmp = process.env.TMPDIR;
  afterEach(() => {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
  });

  it('refuses a build directory the user cannot reach, naming the directory in the way', async () => {
    const root = await tempDir();
    const closed = join(root, 'closed');
    await mkdir(join(closed, 'builds', 'b1'), { recursive: true });
    await chmod(join(closed, 'builds'), 0o711);
    await chmod(closed, 0o700);
    await expect(assertReachable(join(closed, 'builds', 'b1'), someoneElse, 'build directory')).rejects.toMatchObject({
      code: CoreErrors.HOST_APP_USER.code,
      message: expect.stringContaining(`${closed} is mode 700`),
    });
    await chmod(closed, 0o711);
    await expect(assertReachable(join(closed, 'builds', 'b1'), someoneElse, 'build directory')).resolves.toBeUndefined();
  });

  it("keeps run directories (Puma's socket) in a private directory of runplan's user, and refuses one that others can write or that is a symlink", async () => {
    process.env.TMPDIR = await tempDir();
    const runDir = localRunDir('/srv/app/builds/1');
    await ensureRunDirParent(runDir);
    const parent = join(runDir, '..');
    expect((await stat(parent)).mode & 0o777).toBe(asRoot ? 0o711 : 0o700);
    await chmod(parent, 0o777);
    await expect(ensureRunDirParent(runDir)).rejects.toMatchObject({ code: CoreErrors.HOST_INVALID_SETTING.code });

    process.env.TMPDIR = await tempDir();
    const elsewhere = await tempDir();
    await symlink(elsewhere, join(localRunDir('/srv/app/builds/1'), '..'));
    await expect(ensureRunDirParent(localRunDir('/srv/app/builds/1'))).rejects.toMatchObject({ code: CoreErrors.HOST_INVALID_SETTING.code });
  });

  it("seals a saved layer: a restored layer is the build's own writable copy, and writing it changes nothing cached", async () => {
    const user = await appUser();
    const files = new UserFiles(user);
    const cacheRoot = await tempDir();
    const cache = new LayerCache(join(cacheRoot, 'layers', 'app'));
    const build = await tempDir();
    await chmod(build, 0o777);
    // As root, npm ran as the unprivileged user, which owns what it installed.
    await files.write(join(build, 'node_modules', 'dep', 'index.js'), 'genuine\n', 0o644);
    await cache.save('node_modules', 'k1', join(build, 'node_modules'), files);
    // Nobody but runplan reads the cache, not even the application it belongs to.
    expect((await stat(join(cacheRoot, 'layers', 'app'))).mode & 0o777).toBe(0o700);

    const next = await tempDir();
    await chmod(next, 0o777);
    const restored = join(next, 'node_modules');
    await cache.restore('node_modules', 'k1', restored, files);
    const file = join(restored, 'dep', 'index.js');
    expect((await stat(file)).uid).toBe(user.uid);
    expect((await stat(file)).mode & 0o777).toBe(0o644);
    // A framework build that rewrites a file of node_modules (or a copy of one) may: the copy is the build's.
    const rewrite = spawnSync('/bin/sh', ['-c', `echo rewritten > '${file}' && cp '${file}' '${file}.copy' && echo again >> '${file}.copy'`], spawnIdentity(user));
    expect(rewrite.status).toBe(0);
    const other = await tempDir();
    await chmod(other, 0o777);
    const second = join(other, 'node_modules');
    await cache.restore('node_modules', 'k1', second, files);
    expect(await readFile(join(second, 'dep', 'index.js'), 'utf8')).toBe('genuine\n');
  });

  it("restores a layer made ready ahead (ReadyLayers) as the same writable copy: the user's, unreachable before, never matched to an entry saved again", async () => {
    const user = await appUser();
    const files = new UserFiles(user);
    const cacheRoot = await tempDir();
    const cache = new LayerCache(join(cacheRoot, 'layers', 'app'));
    const workspace = await tempDir();
    await chmod(workspace, 0o711);
    const ready = new ReadyLayers(workspace, user);
    const build = await tempDir();
    await chmod(build, 0o777);
    await files.write(join(build, 'node_modules', 'dep', 'index.js'), 'genuine\n', 0o644);
    await cache.save('node_modules', 'k1', join(build, 'node_modules'), files);
    // Nothing to take before a copy is prepared: the caller restores as usual.
    const next = await tempDir();
    await chmod(next, 0o777);
    expect(await ready.take(cache, 'node_modules', 'k1', join(next, 'node_modules'), files)).toBe(false);

    await ready.prepare(cache, 'node_modules', 'k1', files);
    // Waiting for the next build, the copy is out of every application's reach.
    expect((await stat(join(workspace, 'layers-ready'))).mode & 0o777).toBe(0o700);
    const notYet = spawnSync('/bin/sh', ['-c', `ls '${join(workspace, 'layers-ready')}'`], spawnIdentity(user));
    if (user.dropped) expect(notYet.status).not.toBe(0);

    await files.write(join(next, 'node_modules', 'stale.js'), 'left over\n', 0o644);
    expect(await ready.take(cache, 'node_modules', 'k1', join(next, 'node_modules'), files)).toBe(true);
    const file = join(next, 'node_modules', 'dep', 'index.js');
    expect((await stat(file)).uid).toBe(user.uid);
    expect((await stat(file)).mode & 0o777).toBe(0o644);
    expect(await readdir(join(next, 'node_modules'))).toEqual(['dep']);
    const rewrite = spawnSync('/bin/sh', ['-c', `echo rewritten > '${file}'`], spawnIdentity(user));
    expect(rewrite.status).toBe(0);
    // Taken once: the next build restores from the sealed entry, which the rewrite did not reach.
    expect(await ready.take(cache, 'node_modules', 'k1', join(next, 'again'), files)).toBe(false);
    const other = await tempDir();
    await chmod(other, 0o777);
    await cache.restore('node_modules', 'k1', join(other, 'node_modules'), files);
    expect(await readFile(join(other, 'node_modules', 'dep', 'index.js'), 'utf8')).toBe('genuine\n');

    // A copy prepared for an entry that is then saved again under the same key is not the new entry's.
    await ready.prepare(cache, 'node_modules', 'k1', files);
    await files.write(join(build, 'node_modules', 'dep', 'index.js'), 'saved again\n', 0o644);
    await cache.save('node_modules', 'k1', join(build, 'node_modules'), files);
    const third = await tempDir();
    await chmod(third, 0o777);
    expect(await ready.take(cache, 'node_modules', 'k1', join(third, 'node_modules'), files)).toBe(false);
  });

  it('drops set-id bits and special files from a saved layer', async () => {
    const user = await appUser();
    const files = new UserFiles(user);
    const cacheRoot = await tempDir();
    const cache = new LayerCache(join(cacheRoot, 'app'));
    const build = await tempDir();
    await chmod(build, 0o777);
    const made = spawnSync('/bin/sh', ['-c', `mkdir -p '${build}/deps' && cd '${build}/deps' && echo x > tool && chmod 6755 tool && mkfifo pipe && ln -s /etc/passwd link`], spawnIdentity(user));
    expect(made.status).toBe(0);
    await cache.save('deps', 'k', join(build, 'deps'), files);
    const entry = join(cacheRoot, 'app', 'deps', 'k');
    expect((await stat(join(entry, 'tool'))).mode & 0o7777).toBe(0o755);
    expect((await readdir(entry)).sort()).toEqual(['link', 'tool']);
    expect((await lstat(join(entry, 'link'))).isSymbolicLink()).toBe(true);
  });

  it('makes every change in a build as its user: a link the application made to a root-only folder is refused by the kernel (RUNPLAN_E_BUILD_TREE_CHANGED)', async () => {
    const user = await appUser();
    const files = new UserFiles(user);
    const build = await tempDir();
    await chmod(build, 0o777);
    const host = await tempDir();
    await writeFile(join(host, 'secret'), 'root only\n', { mode: 0o600 });
    await chmod(host, 0o700);
    await symlink(host, join(build, '.runplan'));
    await expect(files.write(join(build, '.runplan', 'npmrc'), 'token\n', 0o600)).rejects.toMatchObject({ code: CoreErrors.BUILD_TREE_CHANGED.code });
    await expect(files.apply([{ kind: 'symlink', target: '/nowhere', path: join(build, '.runplan', 'node') }])).rejects.toMatchObject({
      code: CoreErrors.BUILD_TREE_CHANGED.code,
    });
    // Removing follows nothing: the link goes, the folder it pointed to stays as it was.
    await files.remove(join(build, '.runplan'));
    expect(await readdir(host)).toEqual(['secret']);
    expect((await stat(join(host, 'secret'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(host, 'secret'))).uid).toBe(process.getuid?.());
  });
});
