import { existsSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HostErrors } from '../errors.js';
import { isAppId } from './app-id.js';
import { runChecked } from '../programs.js';

/**
 * The bare repository of an application, `<gitDir>/<appId>.git`, made once and
 * checked at each call: default branch master, and every pushed ref handed to
 * the proc-receive hook (receive.procReceiveRefs = refs), which execs `hook` (a
 * shell command line). git then moves no ref itself: the hook asks serve to
 * deploy, serve moves master under the application's lock once the release
 * passed its gate, and the hook reports each ref accepted or rejected — so the
 * release that serves is always master's (proc-receive.ts).
 *
 * Ownership: the repository is the SSH user's and 0700 (git-receive-pack writes
 * objects and refs as that user; no other account — the app user runplan builds
 * and runs as included — can read or write it), under a root-owned gitDir that
 * others may only search (0711). Its config and hooks/ stay root's: the SSH user
 * can read them but cannot change what runs on push or how.
 *
 * Force pushes are allowed (receive.denyNonFastForwards false): a force push to
 * master deploys like any push, as on the service; every release's commit stays
 * in the store and can be rolled back to. Deleting master is refused by the
 * hook (receive.denyDeletes too, for any ref git would update itself).
 */
export async function ensureRepository(gitDir: string, appId: string, hook: string, owner: { uid: number; gid: number }): Promise<string> {
  if (!isAppId(appId)) throw HostErrors.APP_NOT_FOUND.create({ message: `${JSON.stringify(appId)} is not an application id (app_ and a UUID)` });
  if (/[\u0000-\u001f\u007f]/.test(hook)) throw new Error('ensureRepository: the hook command holds a control character');
  await mkdir(gitDir, { recursive: true, mode: 0o711 });
  await chmod(gitDir, 0o711);
  const repository = join(gitDir, `${appId}.git`);
  const fresh = !existsSync(repository);
  if (fresh) {
    // An empty template: no sample hooks, no description; hooks/ is made below.
    await git('init', '-q', '--bare', '--template=', '--initial-branch=master', repository);
  }
  // --file: no repository discovery, so no safe.directory refusal of a repository root does not own.
  const config = (key: string, value: string) => git('config', '--file', join(repository, 'config'), key, value);
  await config('receive.denyNonFastForwards', 'false');
  await config('receive.denyDeletes', 'true');
  await config('receive.denyDeleteCurrent', 'true');
  // Malformed objects are refused before the hook runs.
  await config('receive.fsckObjects', 'true');
  await config('core.logAllRefUpdates', 'true');
  // Every ref to the hook, which moves none but master (receive.procReceiveRefs matches by prefix).
  await config('receive.procReceiveRefs', 'refs');

  if (fresh) await chownTree(repository, owner);
  await chown(repository, owner.uid, owner.gid);
  await chmod(repository, 0o700);

  const hooks = join(repository, 'hooks');
  await mkdir(hooks, { recursive: true });
  await chown(hooks, 0, 0);
  await chmod(hooks, 0o755);
  // The hook of earlier versions, which deployed before git moved master.
  await rm(join(hooks, 'pre-receive'), { force: true });
  const script = join(hooks, 'proc-receive');
  const temporary = `${script}.${process.pid}.tmp`;
  await writeFile(temporary, `#!/bin/sh\n# Written by runplan-host: asks serve to deploy the push; serve moves master once the release passed its gate.\nexec ${hook}\n`, { mode: 0o755 });
  await chown(temporary, 0, 0);
  await chmod(temporary, 0o755);
  await rename(temporary, script);
  const configFile = join(repository, 'config');
  await chown(configFile, 0, 0);
  await chmod(configFile, 0o644);
  return repository;
}

async function git(...args: string[]): Promise<void> {
  try {
    await runChecked('git', args, { timeoutMs: 0 });
  } catch (cause) {
    const output = String((cause as { stderr?: string }).stderr ?? '').trim();
    throw HostErrors.HOST_PART_FAILED.create({
      message: `git ${args.join(' ')} failed: ${output.split('\n').slice(-3).join(' | ')}`,
      fix: 'Install git (apt-get install git) and check the data folder is writable by root.',
      cause,
    });
  }
}

/** chown -R, without following links (a new repository holds none). */
async function chownTree(path: string, owner: { uid: number; gid: number }): Promise<void> {
  const stat = await lstat(path);
  if (stat.isSymbolicLink()) return;
  await chown(path, owner.uid, owner.gid);
  if (stat.isDirectory()) {
    for (const entry of await readdir(path)) await chownTree(join(path, entry), owner);
  }
}
