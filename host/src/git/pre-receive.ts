import { basename, resolve } from 'node:path';
import { HostErrors } from '../errors.js';
import { hostPaths } from '../paths.js';
import { isAppId } from './app-id.js';
import { postPush } from './git-socket-client.js';
import { KEY_VARIABLE, type PushRequest } from './hook-protocol.js';
import { oneLine } from './one-line.js';

const DEPLOYED_REF = 'refs/heads/master';
const ZERO = /^0+$/;

export interface RefUpdate {
  readonly oldCommit: string;
  readonly newCommit: string;
  readonly ref: string;
}

/**
 * The hook's input (`<old> <new> <ref>` lines), checked: only master deploys,
 * so a push of any other ref (a branch, a tag) is refused whole, and so is the
 * deletion of master. Returns the update of master, or the error to show.
 */
export function checkPushedRefs(input: string): { update: RefUpdate } | { error: Error } {
  const updates: RefUpdate[] = [];
  for (const line of input.split('\n')) {
    if (line.trim() === '') continue;
    const [oldCommit = '', newCommit = '', ref = ''] = line.trim().split(' ');
    if (!/^[0-9a-f]{40,64}$/.test(oldCommit) || !/^[0-9a-f]{40,64}$/.test(newCommit) || ref === '') {
      return { error: new Error(`pre-receive: unexpected input line from git: ${JSON.stringify(line.slice(0, 100))}`) };
    }
    updates.push({ oldCommit, newCommit, ref });
  }
  const other = updates.find((update) => update.ref !== DEPLOYED_REF);
  if (other !== undefined) {
    const branch = other.ref.startsWith('refs/heads/') ? other.ref.slice('refs/heads/'.length) : undefined;
    const how = branch === undefined ? 'git push <remote> master' : `git push <remote> ${branch}:master`;
    return {
      error: HostErrors.PUSH_BRANCH.create({
        message: `${other.ref} was not pushed: only the master branch deploys; push to master with ${how}`,
        fix: `Push the master branch: ${how}.`,
      }),
    };
  }
  const update = updates[0];
  if (update === undefined) return { error: new Error('pre-receive: git gave no ref to update') };
  if (ZERO.test(update.newCommit)) {
    return {
      error: HostErrors.PUSH_BRANCH.create({
        message: 'master cannot be deleted: it is what the host deploys',
        fix: 'Push a commit to master instead (git push <remote> <branch>:master); remove the application to stop it.',
      }),
    };
  }
  return { update };
}

interface PreReceiveOptions {
  /** All of the hook's standard input. */
  readonly input: string;
  readonly appId: string;
  /** The hook's environment: the key (KEY_VARIABLE) and git's quarantine. */
  readonly env: NodeJS.ProcessEnv;
  /** The folder the hook runs in (the bare repository), against which git's paths are resolved. */
  readonly cwd: string;
  readonly socketPath: string;
  /** Each line for the pusher (git shows it as `remote: …`). */
  write(line: string): void;
}

/** The pre-receive hook: refuses what does not deploy, else asks serve to deploy and relays its lines; resolves with the exit status. */
async function runPreReceive(options: PreReceiveOptions): Promise<number> {
  const checked = checkPushedRefs(options.input);
  if ('error' in checked) {
    options.write(oneLine(checked.error));
    return 1;
  }
  const key = options.env[KEY_VARIABLE];
  const objectDirectory = options.env.GIT_OBJECT_DIRECTORY;
  if (key === undefined || objectDirectory === undefined) {
    options.write(oneLine(new Error(`pre-receive: ${key === undefined ? KEY_VARIABLE : 'GIT_OBJECT_DIRECTORY'} is not set; this hook runs only inside a push through runplan-host git-shell`)));
    return 1;
  }
  const push: PushRequest = {
    app: options.appId,
    key,
    ref: checked.update.ref,
    oldCommit: checked.update.oldCommit,
    newCommit: checked.update.newCommit,
    objectDirectory: resolve(options.cwd, objectDirectory),
    alternateObjectDirectories: options.env.GIT_ALTERNATE_OBJECT_DIRECTORIES ?? '',
  };
  try {
    return await postPush(options.socketPath, push, options.write);
  } catch (error) {
    options.write(oneLine(error));
    return 1;
  }
}

export interface PreReceiveMainOptions {
  /** --data: the host's data folder. */
  readonly data: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly stdin?: NodeJS.ReadableStream;
  readonly stderr?: NodeJS.WritableStream;
}

/** `runplan-host hook pre-receive --data DIR`, run by git-receive-pack in the bare repository: resolves with the exit status. */
export async function preReceiveMain(options: PreReceiveMainOptions): Promise<number> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const stderr = options.stderr ?? process.stderr;
  const write = (line: string) => stderr.write(`${line}\n`);
  // git runs a bare repository's hooks in the repository, with GIT_DIR=. (or its path).
  const appId = basename(resolve(cwd, env.GIT_DIR ?? '.')).replace(/\.git$/, '');
  if (!isAppId(appId)) {
    write(oneLine(new Error(`pre-receive: ${JSON.stringify(appId)} is not an application's repository`)));
    return 1;
  }
  let input = '';
  for await (const chunk of options.stdin ?? process.stdin) input += chunk.toString();
  return runPreReceive({ input, appId, env, cwd, socketPath: hostPaths(options.data).gitSocket, write });
}
