import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** PIDs of live processes whose working directory is inside `dir` (Linux /proc). */
export function processesUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cwd = readlinkSync(`/proc/${name}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) pids.push(Number(name));
    } catch {
      // Gone already, or not ours to inspect.
    }
  }
  return pids;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * PIDs of live processes (zombies excluded) with `marker` among their arguments,
 * found by walking the whole process table: unlike processesUnder, this finds
 * a daemon that changed directory and left its session.
 */
export function processesWithArgument(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (!args.includes(marker)) continue;
      const stat = statFields(Number(name));
      if (stat && stat.state !== 'Z' && stat.state !== 'X') pids.push(Number(name));
    } catch {
      // Gone already.
    }
  }
  return pids;
}

/** State, process group and session of a process, from /proc/<pid>/stat. */
export function statFields(pid: number): { state: string; pgid: number; session: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] as string, pgid: Number(fields[2]), session: Number(fields[3]) };
  } catch {
    return undefined;
  }
}

/**
 * A shell script that starts a tree whose every process has `marker` as an
 * argument: a child, a grandchild (through another shell), and a daemon that
 * double-forks into its own session (setsid), moves to /, ignores SIGTERM and
 * keeps the inherited output open. Each writes "<role> <pid>" to $TREE_PIDS.
 */
export function processTreeScript(marker: string): string {
  const node = JSON.stringify(process.execPath);
  const idle = (role: string, extra = '') => `require('fs').appendFileSync(process.env.TREE_PIDS, '${role} ' + process.pid + '\\n'); ${extra} setInterval(() => {}, 1000)`;
  const daemon = `process.chdir('/'); process.on('SIGTERM', () => {});${idle('daemon')}`;
  // The middle process spawns the daemon detached (setsid) and exits at once: a double fork.
  const launcher = `require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(daemon)}, '${marker}'], { detached: true, stdio: ['ignore', 'inherit', 'inherit'] }).unref()`;
  return [
    `${node} -e ${shellQuote(idle('child'))} ${marker} &`,
    `/bin/sh -c '${node} -e "$0" ${marker} & wait' ${shellQuote(idle('grandchild'))} &`,
    `${node} -e ${shellQuote(launcher)} ${marker}`,
    'wait',
  ].join('\n');
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** SIGKILL to each pid (cleanup after a failed assertion, so a test never leaves processes behind). */
export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

/** Live processes whose working directory is inside `dir`, with their name and effective uid (Linux /proc). */
export function processOwnersUnder(dir: string): { pid: number; name: string; uid: number }[] {
  const out: { pid: number; name: string; uid: number }[] = [];
  for (const pid of processesUnder(dir)) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const name = /^Name:\s*(.*)$/m.exec(status)?.[1] ?? '';
      // Uid: real, effective, saved, file system.
      const uid = Number(/^Uid:\s*\d+\s+(\d+)/m.exec(status)?.[1]);
      out.push({ pid, name, uid });
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}
