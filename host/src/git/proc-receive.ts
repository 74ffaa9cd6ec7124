import { basename, resolve } from 'node:path';
import { hostPaths } from '../paths.js';
import { isAppId } from './app-id.js';
import { postPush } from './git-socket-client.js';
import { KEY_VARIABLE, type PushRequest } from './hook-protocol.js';
import { oneLine } from './one-line.js';
import { PushError } from './push-error.js';
import { FLUSH_PACKET, PktLineReader, pktLine } from './pkt-line.js';

const DEPLOYED_REF = 'refs/heads/master';
const ZERO = /^0+$/;

export interface RefUpdate {
  readonly oldCommit: string;
  readonly newCommit: string;
  readonly ref: string;
}

/**
 * The pushed commands (`<old> <new> <ref>` lines), checked: only master deploys,
 * so a push of any other ref (a branch, a tag) is refused whole, and so is the
 * deletion of master. Returns the update of master, or the error to show.
 */
export function checkPushedRefs(input: string): { update: RefUpdate } | { error: Error } {
  const updates: RefUpdate[] = [];
  for (const line of input.split('\n')) {
    if (line.trim() === '') continue;
    const [oldCommit = '', newCommit = '', ref = ''] = line.trim().split(' ');
    if (!/^[0-9a-f]{40,64}$/.test(oldCommit) || !/^[0-9a-f]{40,64}$/.test(newCommit) || ref === '') {
      return { error: new Error(`proc-receive: unexpected command from git: ${JSON.stringify(line.slice(0, 100))}`) };
    }
    updates.push({ oldCommit, newCommit, ref });
  }
  const other = updates.find((update) => update.ref !== DEPLOYED_REF);
  if (other !== undefined) {
    const branch = other.ref.startsWith('refs/heads/') ? other.ref.slice('refs/heads/'.length) : undefined;
    const how = branch === undefined ? 'git push <remote> master' : `git push <remote> ${branch}:master`;
    return {
      error: new PushError('PUSH_BRANCH', {
        message: `${other.ref} was not pushed: only the master branch deploys; push to master with ${how}`,
        fix: `Push the master branch: ${how}.`,
      }),
    };
  }
  const update = updates[0];
  if (update === undefined) return { error: new Error('proc-receive: git gave no ref to update') };
  if (ZERO.test(update.newCommit)) {
    return {
      error: new PushError('PUSH_BRANCH', {
        message: 'master cannot be deleted: it is what the host deploys',
        fix: 'Push a commit to master instead (git push <remote> <branch>:master); remove the application to stop it.',
      }),
    };
  }
  return { update };
}

interface ProcReceiveOptions {
  /** The commands receive-pack sends: `<old> <new> <ref>` each. */
  readonly commands: readonly string[];
  readonly appId: string;
  /** The hook's environment: the key (KEY_VARIABLE). */
  readonly env: NodeJS.ProcessEnv;
  readonly socketPath: string;
  /** Each line for the pusher (git shows it as `remote: …`). */
  write(line: string): void;
}

/** How the push ends for git: accepted (serve moved master and the release serves), or refused and why (git's `[remote rejected] … (<why>)`). */
type Outcome = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** The code of a refusal, as git shows it in its report: one word. */
function reasonOf(error: unknown): string {
  return error instanceof PushError ? error.code : 'refused';
}

/** Refuses what does not deploy, else asks serve to deploy, relaying its lines: serve moves master itself, under the application's lock, once the release passed its gate. */
async function decide(options: ProcReceiveOptions): Promise<Outcome> {
  const refuse = (error: unknown): Outcome => {
    options.write(oneLine(error));
    return { ok: false, reason: reasonOf(error) };
  };
  const checked = checkPushedRefs(options.commands.join('\n'));
  if ('error' in checked) return refuse(checked.error);
  const key = options.env[KEY_VARIABLE];
  if (key === undefined) return refuse(new Error(`proc-receive: ${KEY_VARIABLE} is not set; this hook runs only inside a push through runplan-host git-shell`));
  const push: PushRequest = { app: options.appId, key, ref: checked.update.ref, oldCommit: checked.update.oldCommit, newCommit: checked.update.newCommit };
  try {
    const answer = await postPush(options.socketPath, push, options.write);
    return answer.status === 0 ? { ok: true } : { ok: false, reason: answer.code ?? 'not deployed' };
  } catch (error) {
    return refuse(error);
  }
}

export interface ProcReceiveMainOptions {
  /** --data: the host's data folder. */
  readonly data: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** receive-pack's side of the exchange (pkt-lines): standard input and output. */
  readonly stdin?: NodeJS.ReadableStream;
  readonly stdout?: NodeJS.WritableStream;
  readonly stderr?: NodeJS.WritableStream;
}

/**
 * `runplan-host hook proc-receive --data DIR`, run by git-receive-pack in the
 * bare repository for every pushed ref (receive.procReceiveRefs: git's way of
 * letting a hook update the refs itself, githooks(5)). The objects are in the
 * repository already; the ref is moved by serve, under the application's lock,
 * between the health gate and the edge's switch, so git reports accepted
 * exactly the pushes that serve. Resolves with the exit status: 0 once the
 * report is written (whether it accepts or refuses).
 */
export async function procReceiveMain(options: ProcReceiveMainOptions): Promise<number> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const write = (line: string) => stderr.write(`${line}\n`);
  // git runs a bare repository's hooks in the repository, with GIT_DIR=. (or its path).
  const appId = basename(resolve(cwd, env.GIT_DIR ?? '.')).replace(/\.git$/, '');
  if (!isAppId(appId)) {
    write(oneLine(new Error(`proc-receive: ${JSON.stringify(appId)} is not an application's repository`)));
    return 1;
  }
  const reader = new PktLineReader(options.stdin ?? process.stdin);
  const [offered = ''] = await reader.section();
  if (!offered.startsWith('version=1')) {
    write(oneLine(new Error(`proc-receive: git offered ${JSON.stringify(offered.split('\0')[0])}, this hook speaks version=1`)));
    return 1;
  }
  // No push-options asked for: git then sends none.
  stdout.write(pktLine('version=1'));
  stdout.write(FLUSH_PACKET);
  const commands = await reader.section();
  const outcome = await decide({ commands, appId, env, socketPath: hostPaths(options.data).gitSocket, write });
  for (const command of commands) {
    const ref = command.split(' ')[2] ?? '';
    stdout.write(pktLine(outcome.ok ? `ok ${ref}` : `ng ${ref} ${outcome.reason}`));
  }
  stdout.write(FLUSH_PACKET);
  return 0;
}
