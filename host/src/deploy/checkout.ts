import { mkdir, rm } from 'node:fs/promises';
import { runProgram } from 'runplan/process';

/** Where git reads the commit: the application's repository (a push's objects are in it when its hook runs). */
export interface CommitSource {
  readonly repository: string;
  readonly commit: string;
}

const COMMIT = /^[0-9a-f]{40}$/;

/**
 * Puts the commit's files in `dir` (emptied first): `git archive` of the commit,
 * unpacked by tar, as Dokku does. The repository is the SSH user's: root reads it
 * with safe.directory set for this one call. A link in the commit that points out
 * of it stays a link here, and runplan's copy of the source refuses it.
 */
export async function checkOutCommit(source: CommitSource, dir: string): Promise<void> {
  if (!COMMIT.test(source.commit)) throw new Error(`not a commit id: ${JSON.stringify(source.commit)}`);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_DIR: source.repository };
  const script = 'git -c safe.directory="$GIT_DIR" archive --format=tar "$1" | tar -x --no-same-owner -C "$2" -f -';
  const result = await runProgram('/bin/bash', ['-o', 'pipefail', '-c', script, 'checkout', source.commit, dir], { env, timeoutMs: 300_000 });
  if (!result?.ok) throw new Error(`git archive of ${source.commit} failed: ${result ? result.stderr.trim().split('\n').slice(-3).join(' ') : 'bash not found'}`);
}
