/**
 * What the proc-receive hook (running as the SSH user, inside git-receive-pack)
 * asks of `runplan-host serve` over the git socket (<data>/run/git.sock, the SSH
 * user's alone): POST /push with this JSON. The answer is text/plain, streamed:
 * each line for the pusher as it comes (git shows it as `remote: …`), and last a
 * line `EXIT_LINE_PREFIX<status>[ <code>]`: 0 when serve moved master to the new
 * commit and its release serves; anything else when master did not move, with
 * the code of the refusal (git's report shows it). A hook that goes away before
 * the answer ends stops the deploy, unless master has moved already.
 */
export interface PushRequest {
  /** The application id, from the repository the push goes to. */
  readonly app: string;
  /** The SSH key the push came with (the forced command's --key). */
  readonly key: string;
  /** One pushed ref: `refs/heads/master`. */
  readonly ref: string;
  /** master when receive-pack began (zeros for the first push): serve moves master only from it. */
  readonly oldCommit: string;
  readonly newCommit: string;
}

export const PUSH_PATH = '/push';
export const EXIT_LINE_PREFIX = '\u0000runplan-host-exit:';
/** The environment variable the forced command gives git-receive-pack (and so its hooks): the pushing key's id. */
export const KEY_VARIABLE = 'RUNPLAN_HOST_KEY';

/**
 * What the forced command asks serve before git-receive-pack runs: GET
 * `/authorize?key=<key id>&app=<app id>` on the git socket. 200: the key may push
 * to the application; 403: it may not, whether the application does not exist or
 * belongs to another organization (the answer never tells which).
 */
export const AUTHORIZE_PATH = '/authorize';
