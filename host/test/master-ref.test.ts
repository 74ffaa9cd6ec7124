import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { HostErrors } from '../src/errors.js';
import { moveMaster, putBackInterruptedMove, readMaster, type Repository } from '../src/git/master-ref.js';

const run = promisify(execFile);
const ZERO = '0'.repeat(40);
const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 'dev', GIT_AUTHOR_EMAIL: 'dev@example.invalid', GIT_COMMITTER_NAME: 'dev', GIT_COMMITTER_EMAIL: 'dev@example.invalid' };

/** master of a real bare repository, moved and put back as serve does it (host/src/git/master-ref.ts), by git update-ref. */
describe('master of an application repository', () => {
  let repository: Repository;
  const commits: string[] = [];

  beforeAll(async () => {
    const dir = await tempDir('runplan-host-master-');
    const path = join(dir, 'app.git');
    await run('git', ['init', '-q', '--bare', '--template=', '--initial-branch=master', path]);
    await run('git', ['config', '--file', join(path, 'config'), 'core.logAllRefUpdates', 'true']);
    const work = join(dir, 'work');
    await run('git', ['init', '-q', '-b', 'master', work]);
    for (const name of ['one', 'two', 'three']) {
      await writeFile(join(work, name), `${name}\n`);
      await run('git', ['add', '-A'], { cwd: work });
      await run('git', ['commit', '-q', '-m', name], { cwd: work, env: GIT_ENV });
      commits.push((await run('git', ['rev-parse', 'HEAD'], { cwd: work })).stdout.trim());
    }
    // The objects, as a push brings them; no ref.
    await run('git', ['push', '-q', path, 'master:refs/heads/incoming'], { cwd: work });
    await run('git', ['--git-dir', path, 'update-ref', '-d', 'refs/heads/incoming']);
    repository = { path, owner: { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 } };
  });

  it('moves master only from the value it was at, and puts it back', async () => {
    const [one, two] = commits as [string, string];
    expect(await readMaster(repository)).toBeUndefined();
    await moveMaster(repository, { from: ZERO, to: one, release: 1 });
    expect(await readMaster(repository)).toBe(one);
    // From a value master is no longer at: git refuses, and nothing moves.
    const stale = await moveMaster(repository, { from: ZERO, to: two, release: 2 }).catch((error: unknown) => error);
    expect(HostErrors.PUSH_REF_UPDATE.is(stale), String(stale)).toBe(true);
    expect((stale as Error).message).toContain('git could not move master to');
    expect(await readMaster(repository)).toBe(one);
    const moved = await moveMaster(repository, { from: one, to: two, release: 2 });
    expect(await readMaster(repository)).toBe(two);
    await moved.back();
    expect(await readMaster(repository)).toBe(one);
  });

  it('puts back the move of a release interrupted before it served, and nothing else', async () => {
    const [one, , three] = commits as [string, string, string];
    await moveMaster(repository, { from: one, to: three, release: 4 });
    // Another release's number, or another commit: not this host's move for it.
    expect(await putBackInterruptedMove(repository, { number: 3, commit: three })).toBeUndefined();
    expect(await putBackInterruptedMove(repository, { number: 4, commit: one })).toBeUndefined();
    expect(await readMaster(repository)).toBe(three);
    expect(await putBackInterruptedMove(repository, { number: 4, commit: three })).toBe(one);
    expect(await readMaster(repository)).toBe(one);
    // Put back once: the last move is now the putting back.
    expect(await putBackInterruptedMove(repository, { number: 4, commit: three })).toBeUndefined();
  });

  it('deletes master again when the interrupted release was the first push', async () => {
    const fresh = join(await tempDir('runplan-host-master-'), 'first.git');
    await run('git', ['clone', '-q', '--bare', repository.path, fresh]);
    await run('git', ['--git-dir', fresh, 'update-ref', '-d', 'refs/heads/master']);
    await run('git', ['config', '--file', join(fresh, 'config'), 'core.logAllRefUpdates', 'true']);
    const first = { ...repository, path: fresh };
    const [one] = commits as [string];
    await moveMaster(first, { from: ZERO, to: one, release: 1 });
    expect(await putBackInterruptedMove(first, { number: 1, commit: one })).toBe(ZERO);
    expect(await readMaster(first)).toBeUndefined();
  });
});
