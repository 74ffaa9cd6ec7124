/**
 * Git remotes reached over SSH, as package managers write them:
 * `ssh://[user@]host[:port]/path`, npm's `git+ssh://…` (also with the scp-like
 * `host:path` after it), and git's scp-like `user@host:path`.
 */
export interface SshRemote {
  readonly host: string;
  readonly port: number | undefined;
  /** The repository's path on the server, without a leading "/" or a "#ref". */
  readonly path: string;
}

/** Longer is no git URL anyone writes; a hostile one stays out of plans and messages. */
const MAX_URL_LENGTH = 1024;

/** The host and port of a git URL reached over SSH (`git+ssh://…`, `ssh://…`, `git@host:path`), or undefined for any other URL. */
export function sshRemote(url: string): SshRemote | undefined {
  const text = url.trim().replace(/#.*$/, '');
  if (text.length > MAX_URL_LENGTH || /[^\x21-\x7e]/.test(text)) return undefined;
  const scheme = /^(?:git\+)?ssh:\/\/(?:[^@/\s]+@)?(\[[^\]\s]+\]|[^:/\s]+)(?::(\d+))?(\/\S*)$/.exec(text);
  if (scheme) return remote(scheme[1] as string, scheme[2], scheme[3] as string);
  // npm accepts `git+ssh://git@host:team/repo.git`: the scp-like form after the scheme.
  const scpInUrl = /^(?:git\+)?ssh:\/\/(?:[^@/\s]+@)?([^:/\s]+):(?!\d+(?:\/|$))(\S+)$/.exec(text);
  if (scpInUrl) return remote(scpInUrl[1] as string, undefined, scpInUrl[2] as string);
  const scp = /^[A-Za-z0-9._-]+@([^:/\s]+):(?!\/\/)(\S+)$/.exec(text);
  if (scp) return remote(scp[1] as string, undefined, scp[2] as string);
  return undefined;
}

function remote(host: string, port: string | undefined, path: string): SshRemote | undefined {
  const trimmed = path.replace(/^\/+/, '');
  if (trimmed === '' || host === '') return undefined;
  return { host: host.replace(/^\[|\]$/g, ''), port: port === undefined ? undefined : Number(port), path: trimmed };
}

/** The repository's name: the last part of its path, without ".git". */
function repositoryName(remote: SshRemote): string {
  const last = remote.path.replace(/\/+$/, '').split('/').pop() ?? remote.path;
  return last.replace(/\.git$/, '') || remote.path;
}

/** `url` without a password (`user:password@` becomes `user@`), for messages. */
export function displayUrl(url: string): string {
  return url.replace(/^([a-z+]+:\/\/[^:@/\s]+):[^@/\s]*@/i, '$1@');
}

/**
 * A pattern for the output lines that name this remote: npm, Yarn, pnpm and
 * bundler print the git command or URL they ran (normalised: npm turns
 * `git+ssh://git@host:team/repo` into `ssh://git@host/team/repo`), so the host
 * and the repository's name, in that order on one line, are what they share.
 */
export function remotePattern(remote: SshRemote): string {
  const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return `${literal(remote.host)}\\S*${literal(repositoryName(remote))}`;
}
