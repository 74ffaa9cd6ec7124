import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startProgram } from 'runplan/process';
import { HostErrors } from '../errors.js';

const MASTER = 'refs/heads/master';
const ZERO = /^0+$/;

/** An application's bare repository, and the account that owns it (the SSH user): serve, root, runs git there as that account, so every file git writes stays its own. */
export interface Repository {
  readonly path: string;
  readonly owner: { readonly uid: number; readonly gid: number };
}

/** The reflog message of the move that made `release` (what `putBackInterruptedMove` looks for). */
function moveMessage(release: number): string {
  return `runplan-host: release ${release}`;
}

async function git(repository: Repository, args: readonly string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const { ok, stdout, stderr } = await startProgram('git', ['--git-dir', repository.path, ...args], {
    cwd: repository.path,
    uid: repository.owner.uid,
    gid: repository.owner.gid,
    // Nothing of root's configuration or home (unreadable to the owner): the repository's own config only.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_COMMITTER_NAME: 'runplan-host', GIT_COMMITTER_EMAIL: 'runplan-host@localhost' },
    timeoutMs: 60_000,
  }).done;
  return { ok, stdout, stderr };
}

/** master's commit, or undefined before the first push. */
export async function readMaster(repository: Repository): Promise<string | undefined> {
  const result = await git(repository, ['rev-parse', '--verify', '-q', MASTER]);
  return result.ok ? result.stdout.trim() : undefined;
}

/**
 * Moves master from `from` (zeros: master must not exist yet) to `to`, as one
 * `git update-ref` with the old value: git's own compare-and-swap under its ref
 * lock, so a master that moved meanwhile, or a ref another git process holds,
 * refuses it (PUSH_REF_UPDATE) and nothing moves. Resolves with the move back.
 */
export async function moveMaster(repository: Repository, move: { from: string; to: string; release: number }): Promise<{ back(): Promise<void> }> {
  const moved = await git(repository, ['update-ref', '-m', moveMessage(move.release), MASTER, move.to, move.from]);
  if (!moved.ok) {
    throw HostErrors.PUSH_REF_UPDATE.create({
      message: `git could not move master to ${move.to.slice(0, 12)}: ${gitSays(moved.stderr)}`,
      file: repository.path,
    });
  }
  return { back: () => putBack(repository, { from: move.to, to: move.from, why: `release ${move.release} did not serve` }) };
}

/** master from `from` back to `to` (zeros: deleted, as before a first push). */
async function putBack(repository: Repository, move: { from: string; to: string; why: string }): Promise<void> {
  const args = ZERO.test(move.to) ? ['update-ref', '-m', `runplan-host: ${move.why}`, '-d', MASTER, move.from] : ['update-ref', '-m', `runplan-host: ${move.why}`, MASTER, move.to, move.from];
  const result = await git(repository, args);
  if (!result.ok) {
    throw HostErrors.PUSH_REF_UPDATE.create({ message: `git could not put master back to ${move.to.slice(0, 12)} (${move.why}): ${gitSays(result.stderr)}`, file: repository.path });
  }
}

/**
 * When serve stopped between moving master for `release` and switching to it
 * (a few milliseconds), master is that release's commit while the release was
 * never current: put master back where it was, so that the release that serves
 * is master's again. Only a move this host made for that very release (its
 * reflog message) is put back; resolves with the commit master is at after.
 */
export async function putBackInterruptedMove(repository: Repository, release: { number: number; commit: string }): Promise<string | undefined> {
  // git's reflog: one line per move, `<old> <new> <who> <when>\t<message>` (core.logAllRefUpdates is on).
  const log = await readFile(join(repository.path, 'logs', MASTER), 'utf8').catch(() => '');
  const last = log.trimEnd().split('\n').at(-1) ?? '';
  const [head = '', message] = last.split('\t');
  const [from = '', to = ''] = head.split(' ');
  if (to !== release.commit || message !== moveMessage(release.number)) return undefined;
  await putBack(repository, { from: to, to: from, why: `release ${release.number} was interrupted before it served` });
  return from;
}

/** What git said: its `fatal:` or `error:` line (the rest is advice), else its last line. */
function gitSays(stderr: string): string {
  const lines = stderr
    .trim()
    .split('\n')
    .filter((line) => line.trim() !== '');
  const said = lines.find((line) => /^(fatal|error): /.test(line)) ?? lines.at(-1) ?? 'no message';
  return said.replace(/^(fatal|error): /, '');
}
