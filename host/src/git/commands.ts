/**
 * The command lines sshd and git run as the SSH user: the forced command of
 * each key (authorized_keys) and the proc-receive hook of each repository. Both
 * go through /bin/sh, so every word that comes from a path is single-quoted.
 * `program` is how to start the host's CLI, e.g. [process.execPath, '<…>/dist/cli.js'].
 */

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** `runplan-host git-shell --key <id> --data DIR`, the forced command of key `keyId`. */
export function gitShellCommand(program: readonly string[], keyId: string, data: string): string {
  return [...program.map(shellQuote), 'git-shell', '--key', shellQuote(keyId), '--data', shellQuote(data)].join(' ');
}

/** `runplan-host hook proc-receive --data DIR`, what each repository's hooks/proc-receive execs. */
export function procReceiveHookCommand(program: readonly string[], data: string): string {
  return [...program.map(shellQuote), 'hook', 'proc-receive', '--data', shellQuote(data)].join(' ');
}
