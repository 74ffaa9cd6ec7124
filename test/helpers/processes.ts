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
