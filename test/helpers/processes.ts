import { readdirSync, readlinkSync } from 'node:fs';

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
