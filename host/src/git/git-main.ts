import { gitShellMain } from './git-shell.js';
import { procReceiveMain } from './proc-receive.js';

/**
 * The program sshd's forced command and git's proc-receive hook run, as the SSH
 * account: `git-shell --key K --data D` and `hook proc-receive --data D`. Built
 * as one file with everything it imports (dist/git-program.cjs), which serve
 * copies into the data folder (bin/, 0755): the SSH account reads it there,
 * wherever the host's own files are (a checkout under /root is closed to it).
 */
export async function gitMain(argv: readonly string[], stderr: NodeJS.WritableStream = process.stderr): Promise<number> {
  const option = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const data = option('--data');
  if (data !== undefined && argv[0] === 'git-shell') return gitShellMain({ key: option('--key') ?? '', data, env: process.env, stderr });
  if (data !== undefined && argv[0] === 'hook' && argv[1] === 'proc-receive') return procReceiveMain({ data, env: process.env, stdin: process.stdin, stdout: process.stdout, stderr });
  stderr.write('usage: git-program (git-shell --key <id> | hook proc-receive) --data <dir>\n');
  return 2;
}

if (process.argv[1] && /git-program\.c?js$/.test(process.argv[1])) {
  gitMain(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`internal error: ${String((error as Error)?.message ?? error)}\n`);
      process.exitCode = 70;
    },
  );
}
