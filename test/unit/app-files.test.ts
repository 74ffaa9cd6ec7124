import { execFileSync } from 'node:child_process';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { materialiseFiles } from '../../src/process/materialise-files.js';
import { runplanItself } from '../../src/process/app-user.js';
import { UserFiles } from '../../src/process/user-files.js';
import { assembleEnvironment } from '../../src/env/assemble.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { escapeControls, lineExcerpt, quoteExcerpt } from '../../src/errors/excerpt.js';
import { writablePathInside } from '../../src/files/app-path.js';
import { DirectorySource } from '../../src/files/directory-source.js';
import { MAX_APP_FILE_BYTES } from '../../src/files/file-source.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { tempDir } from '../helpers/temp.js';

const SECRET = 'HOST-SECRET-7f3a';

/** An application directory beside a host directory holding a secret file. */
async function appAndHost(): Promise<{ app: string; host: string; secret: string }> {
  const base = await tempDir('runplan-app-files-');
  const app = join(base, 'app');
  const host = join(base, 'host');
  await mkdir(app);
  await mkdir(host);
  const secret = join(host, 'shadow');
  await writeFile(secret, `${SECRET}\nsecond line\n`);
  return { app, host, secret };
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; file?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; file?: string };
  }
  throw new Error('expected a rejection');
}

describe('DirectorySource: only files inside the application', () => {
  it('reads regular files and links that stay inside', async () => {
    const { app } = await appAndHost();
    await mkdir(join(app, 'conf'));
    await writeFile(join(app, 'conf', 'real.txt'), 'inside');
    await symlink('real.txt', join(app, 'conf', 'link.txt'));
    await symlink('conf', join(app, 'conf-link'));
    const files = new DirectorySource(app);
    expect(await files.readText('conf/link.txt')).toBe('inside');
    expect(await files.readText('conf-link/real.txt')).toBe('inside');
    expect(await files.isDirectory('conf-link')).toBe(true);
    expect(await files.list('conf-link')).toEqual(['link.txt', 'real.txt']);
    expect(await files.readText('missing.txt')).toBeUndefined();
    expect(await files.exists('missing.txt')).toBe(false);
    expect(await new DirectorySource(join(app, 'no-such-dir')).readText('package.json')).toBeUndefined();
    // The application's own directory may be reached through a link (a host's "current" release).
    await symlink(app, join(app, '..', 'current'));
    expect(await new DirectorySource(join(app, '..', 'current')).readText('conf/link.txt')).toBe('inside');
  });

  it('refuses a link to a host file, naming the path in the app and never the content or target', async () => {
    const { app, secret } = await appAndHost();
    await mkdir(join(app, 'platform'));
    await symlink(secret, join(app, 'platform', 'play1_version'));
    const files = new DirectorySource(app);
    for (const attempt of [files.readText('platform/play1_version'), files.exists('platform/play1_version'), files.isDirectory('platform/play1_version')]) {
      const error = await rejection(attempt);
      expect(error).toMatchObject({ code: CoreErrors.APP_PATH_OUTSIDE.code, file: 'platform/play1_version' });
      expect(error.message).not.toContain(SECRET);
      expect(error.message).not.toContain(secret);
    }
  });

  it('refuses paths under a directory link leading out, and relative links climbing out', async () => {
    const { app, host } = await appAndHost();
    await symlink(host, join(app, 'pub'));
    await symlink('../host/shadow', join(app, '.ruby-version'));
    const files = new DirectorySource(app);
    await expect(files.readText('pub/shadow')).rejects.toMatchObject({ code: CoreErrors.APP_PATH_OUTSIDE.code, file: 'pub/shadow' });
    await expect(files.isDirectory('pub')).rejects.toMatchObject({ code: CoreErrors.APP_PATH_OUTSIDE.code });
    await expect(files.list('pub')).rejects.toMatchObject({ code: CoreErrors.APP_PATH_OUTSIDE.code });
    await expect(files.readText('.ruby-version')).rejects.toMatchObject({ code: CoreErrors.APP_PATH_OUTSIDE.code });
    await expect(files.readText('../host/shadow')).rejects.toMatchObject({ code: CoreErrors.APP_PATH_OUTSIDE.code });
  });

  it('treats a dangling link as absent and a loop of links as not a file', async () => {
    const { app } = await appAndHost();
    await symlink('/nonexistent/runplan-test', join(app, 'dangling'));
    await symlink('loop-b', join(app, 'loop-a'));
    await symlink('loop-a', join(app, 'loop-b'));
    const files = new DirectorySource(app);
    expect(await files.readText('dangling')).toBeUndefined();
    await expect(files.readText('loop-a')).rejects.toMatchObject({ code: CoreErrors.APP_FILE_NOT_REGULAR.code, file: 'loop-a' });
  });

  it('refuses a directory and a FIFO where a file is expected (a FIFO would block for ever)', async () => {
    const { app } = await appAndHost();
    await mkdir(join(app, 'package.json'));
    execFileSync('mkfifo', [join(app, '.nvmrc')]);
    const files = new DirectorySource(app);
    await expect(files.readText('package.json')).rejects.toMatchObject({ code: CoreErrors.APP_FILE_NOT_REGULAR.code, message: expect.stringContaining('is a directory') });
    await expect(files.readText('.nvmrc')).rejects.toMatchObject({ code: CoreErrors.APP_FILE_NOT_REGULAR.code, message: expect.stringContaining('FIFO') });
  });

  it('reports a path the system cannot read as APP_FILE_UNREADABLE, with the error code only', async () => {
    const { app } = await appAndHost();
    // Inside a folder that exists: a top-level name missing from the application's listing is simply absent.
    await mkdir(join(app, 'sub'));
    const name = `sub/${'n'.repeat(300)}`;
    await expect(new DirectorySource(app).readText(name)).rejects.toMatchObject({ code: CoreErrors.APP_FILE_UNREADABLE.code, message: expect.stringContaining('ENAMETOOLONG') });
  });

  it('bounds the size read, with a larger bound on request (lock files)', async () => {
    const { app } = await appAndHost();
    await writeFile(join(app, 'big'), Buffer.alloc(MAX_APP_FILE_BYTES + 1, 'x'));
    const files = new DirectorySource(app);
    await expect(files.readText('big')).rejects.toMatchObject({ code: CoreErrors.APP_FILE_TOO_LARGE.code, file: 'big' });
    expect(await files.readText('big', { maxBytes: MAX_APP_FILE_BYTES + 1 })).toHaveLength(MAX_APP_FILE_BYTES + 1);
    await expect(new MemorySource({ big: 'x'.repeat(11) }).readText('big', { maxBytes: 10 })).rejects.toMatchObject({ code: CoreErrors.APP_FILE_TOO_LARGE.code });
  });
});

describe('writes into a build directory stay inside it', () => {
  it('refuses to write through a committed link leading out, and through a dangling link', async () => {
    const { app, host } = await appAndHost();
    await symlink(host, join(app, '.yarn'));
    await symlink(join(host, 'not-yet'), join(app, '.npmrc'));
    await expect(writablePathInside(app, '.yarn/releases/yarn-4.9.2.cjs', 'planned file')).rejects.toMatchObject({
      code: CoreErrors.BUILD_FILE_ESCAPES_APP.code,
      file: '.yarn/releases/yarn-4.9.2.cjs',
    });
    await expect(writablePathInside(app, '.npmrc', 'planned file')).rejects.toMatchObject({ code: CoreErrors.BUILD_FILE_ESCAPES_APP.code });
    await expect(writablePathInside(app, '../elsewhere', 'planned file')).rejects.toMatchObject({ code: CoreErrors.BUILD_FILE_ESCAPES_APP.code });
    expect(await writablePathInside(app, 'new/dir/file', 'planned file')).toMatch(/new\/dir\/file$/);
    // A loop of links leaves the place unknown: refused with the code, not a raw ELOOP.
    await symlink('loop-b', join(app, 'loop-a'));
    await symlink('loop-a', join(app, 'loop-b'));
    await expect(writablePathInside(app, 'loop-a/file', 'planned file')).rejects.toMatchObject({ code: CoreErrors.BUILD_FILE_ESCAPES_APP.code, message: expect.stringContaining('ELOOP') });
  });

  it('materialiseFiles writes nothing outside when .yarn is a link out of the app', async () => {
    const { app, host } = await appAndHost();
    await symlink(host, join(app, '.yarn'));
    const env = assembleEnvironment({});
    const file = { path: '.yarn/releases/yarn.cjs', phase: 'build' as const, mode: 0o644, secret: false, content: [{ text: 'x' }], reason: 'test' };
    await expect(materialiseFiles([file], 'build', app, env, new UserFiles(runplanItself()))).rejects.toMatchObject({ code: CoreErrors.BUILD_FILE_ESCAPES_APP.code });
    expect(await readdir(host)).toEqual(['shadow']);
  });
});

describe('excerpts of app content in messages', () => {
  it('escapes terminal escapes, NUL, C1 controls and direction overrides', () => {
    expect(escapeControls('a\u001b[31mb\u0000c\u009bd\u202ee\n')).toBe('a\\u001b[31mb\\u0000c\\u009bd\\u202ee\\n');
    expect(quoteExcerpt('1.4"\\')).toBe('"1.4\\"\\\\"');
  });

  it('quotes plain short values as JSON.stringify does', () => {
    for (const value of ['14', 'abc def', '>=22 <23', 'é']) expect(quoteExcerpt(value)).toBe(JSON.stringify(value));
  });

  it('bounds long values and says how much was left out', () => {
    const quoted = quoteExcerpt('x'.repeat(5_000_000));
    expect(quoted.length).toBeLessThan(200);
    expect(quoted).toContain('(and 4999880 more characters)');
    expect(lineExcerpt('y'.repeat(1000), 10)).toBe(`${'y'.repeat(10)}…`);
  });

  it('never splits a surrogate pair', () => {
    expect(quoteExcerpt(`${'a'.repeat(119)}😀tail`)).toMatch(/^"a{119}…"/);
  });
});
