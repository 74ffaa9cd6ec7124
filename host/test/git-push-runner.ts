/**
 * The two entry points the host's CLI will wire (`runplan-host git-shell --key
 * <id> --data DIR`, `runplan-host hook proc-receive --data DIR`), as a program of
 * their own for git-push.test.ts, which bundles it with esbuild into its
 * temporary folder (the SSH user runs it with node).
 */
import { gitShellMain } from '../src/git/git-shell.js';
import { procReceiveMain } from '../src/git/proc-receive.js';

const args = process.argv.slice(2);
const option = (name: string): string => {
  const value = args[args.indexOf(name) + 1];
  if (!args.includes(name) || value === undefined) throw new Error(`git-push-runner: ${name} is missing`);
  return value;
};

let status = 2;
if (args[0] === 'git-shell') status = await gitShellMain({ key: option('--key'), data: option('--data') });
else if (args[0] === 'hook' && args[1] === 'proc-receive') status = await procReceiveMain({ data: option('--data') });
else process.stderr.write('usage: git-push-runner git-shell --key <id> --data DIR | hook proc-receive --data DIR\n');
process.exitCode = status;
