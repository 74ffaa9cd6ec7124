import { spawnSync } from 'node:child_process';
import { appendFile, chmod, chown, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LayerCache } from '../../src/build/layer-cache.js';
import { assertReachable } from '../../src/process/ownership.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { type AppUser, appUser } from '../../src/process/app-user.js';
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

  it('freezes a saved layer: a build that writes into a restored file cannot change the cached layer', async () => {
    const user = asRoot ? await appUser() : undefined;
    const cache = new LayerCache(await tempDir());
    const build = await tempDir();
    await mkdir(join(build, 'node_modules', 'dep'), { recursive: true });
    await writeFile(join(build, 'node_modules', 'dep', 'index.js'), 'genuine\n');
    // As root, npm ran as the unprivileged user, which owns what it installed.
    if (user) await chown(join(build, 'node_modules', 'dep', 'index.js'), user.uid, user.gid);
    await cache.save('node_modules', 'k1', join(build, 'node_modules'));

    const next = await tempDir();
    await chmod(next, 0o777);
    const restored = join(next, 'node_modules');
    await cache.restore('node_modules', 'k1', restored, user);
    const file = join(restored, 'dep', 'index.js');
    expect((await stat(file)).mode & 0o222).toBe(0);
    if (user) {
      // Directories are the build's (it may add files); the shared files are root's and read-only.
      expect((await stat(join(restored, 'dep'))).uid).toBe(user.uid);
      expect((await stat(file)).uid).toBe(0);
      const attempt = spawnSync('/bin/sh', ['-c', `echo poisoned >> '${file}' || exit 3; chmod 666 '${file}' || exit 4`], { uid: user.uid, gid: user.gid });
      expect(attempt.status).toBe(3);
      const chmodAttempt = spawnSync('/bin/sh', ['-c', `chmod 666 '${file}'`], { uid: user.uid, gid: user.gid });
      expect(chmodAttempt.status).not.toBe(0);
    } else {
      await expect(appendFile(file, 'poisoned\n')).rejects.toMatchObject({ code: 'EACCES' });
    }
    const second = join(await tempDir(), 'node_modules');
    await cache.restore('node_modules', 'k1', second);
    expect(await readFile(join(second, 'dep', 'index.js'), 'utf8')).toBe('genuine\n');
  });
});
