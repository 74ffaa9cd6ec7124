import { runAttached } from 'runplan/process/attached';
import { hostPaths, repositoryPath } from '../paths.js';
import { isAppId } from './app-id.js';
import { authorizePush } from './git-socket-client.js';
import { KEY_VARIABLE } from './hook-protocol.js';
import { oneLine } from './one-line.js';
import { PushError } from './push-error.js';

/** What the forced command runs: git-receive-pack of one application's repository. */
export interface GitCommand {
  readonly service: 'git-receive-pack';
  readonly appId: string;
}

/** Why the forced command runs nothing (one sentence for the pusher). */
export interface Refusal {
  readonly refused: string;
}

const PUSH_ONLY = 'pushing (git push <remote> master) is the only operation the host offers';

/**
 * SSH_ORIGINAL_COMMAND, read. git 2.39 pushing to git+ssh://git@host/app_….git
 * sends `git-receive-pack '/app_….git'`: quotes and leading slash included.
 * Accepted: that, without the slash, or without the quotes, for an application
 * id (app_ and a lower-case UUID), with or without `.git`. Everything else is
 * refused: no command (an interactive shell), git-upload-pack and
 * git-upload-archive (fetch, clone, archive), any other program, `~` paths,
 * other folders, odd quoting.
 */
export function parseGitCommand(original: string | undefined): GitCommand | Refusal {
  if (original === undefined || original.trim() === '') return { refused: `the host gives no shell: ${PUSH_ONLY}` };
  const match = /^(git[- ][a-z-]+) +(.*)$/.exec(original);
  const program = match?.[1]?.replace(' ', '-');
  if (program === 'git-upload-pack' || program === 'git-upload-archive') {
    return { refused: `fetching and cloning are not offered: ${PUSH_ONLY} (the host keeps each deployed commit, but serves no copy back)` };
  }
  if (program !== 'git-receive-pack' || match === null) return { refused: `the host runs no command over SSH: ${PUSH_ONLY}` };
  const argument = match[2] as string;
  const path = /^'([^'\\]*)'$/.exec(argument)?.[1] ?? (/^[A-Za-z0-9_./-]+$/.test(argument) ? argument : undefined);
  if (path === undefined) return { refused: 'the repository path is quoted in a way git does not send: use the remote URL that runplan-host create printed' };
  const name = path.replace(/^\//, '').replace(/\.git$/, '');
  if (!isAppId(name)) {
    return { refused: `no repository ${JSON.stringify(path.slice(0, 80))} here: the remote URL is git+ssh://<user>@<host>/<app id>.git, as runplan-host create printed it` };
  }
  return { service: 'git-receive-pack', appId: name };
}

interface GitShellOptions {
  /** SSH_ORIGINAL_COMMAND. */
  readonly original: string | undefined;
  /** The key the SSH session authenticated with (the forced command's --key). */
  readonly keyId: string;
  authorize(keyId: string, appId: string): Promise<boolean>;
  repositoryPath(appId: string): string;
  /** Where refusals go (one line each); the process's stderr by default. */
  readonly stderr?: NodeJS.WritableStream;
  /** The environment git-receive-pack inherits (the process's by default). */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * The forced command: checks what the client asked and whether its key may push
 * to that application, then runs git-receive-pack on the repository with the
 * session's stdio, the key id in KEY_VARIABLE for the hook. Resolves with the
 * exit status (1 for a refusal, after one line on stderr).
 */
async function runGitShell(options: GitShellOptions): Promise<number> {
  const stderr = options.stderr ?? process.stderr;
  const refuse = (error: unknown) => {
    stderr.write(`${oneLine(error)}\n`);
    return 1;
  };
  const command = parseGitCommand(options.original);
  if ('refused' in command) return refuse(new PushError('SSH_COMMAND_REFUSED', { message: command.refused }));
  let allowed: boolean;
  try {
    allowed = await options.authorize(options.keyId, command.appId);
  } catch (error) {
    return refuse(error);
  }
  // The same words whether the application does not exist or is another organization's.
  if (!allowed) return refuse(new PushError('PUSH_DENIED', { message: `the key ${options.keyId} may not push to ${command.appId}` }));
  // The session's own streams, byte for byte; left to finish a push if this process is ended first.
  const outcome = await runAttached('git-receive-pack', [options.repositoryPath(command.appId)], { ...(options.env ?? process.env), [KEY_VARIABLE]: options.keyId });
  if ('startError' in outcome) {
    return refuse(
      new PushError('HOST_PART_FAILED', {
        message: `git-receive-pack could not start: spawn git-receive-pack ${outcome.startError}`,
        fix: 'Install git on the host (apt-get install git).',
      }),
    );
  }
  return outcome.status;
}

export interface GitShellMainOptions {
  /** --key: the key id authorized_keys gave this forced command. */
  readonly key: string;
  /** --data: the host's data folder. */
  readonly data: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly stderr?: NodeJS.WritableStream;
}

/** `runplan-host git-shell --key <id> --data DIR`, the forced command of every key: resolves with the exit status. */
export function gitShellMain(options: GitShellMainOptions): Promise<number> {
  const env = options.env ?? process.env;
  const paths = hostPaths(options.data);
  return runGitShell({
    original: env.SSH_ORIGINAL_COMMAND,
    keyId: options.key,
    authorize: (keyId, appId) => authorizePush(paths.gitSocket, keyId, appId),
    repositoryPath: (appId) => repositoryPath(paths, appId),
    env,
    ...(options.stderr === undefined ? {} : { stderr: options.stderr }),
  });
}
