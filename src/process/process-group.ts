import { readdirSync, readFileSync } from 'node:fs';

/** Signals a whole process group (the process and every child it spawned). */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

const HAS_PROC = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

/**
 * Whether any process of the group is still running. Killed children whose
 * parent already exited stay zombies until init reaps them (lazily, in some
 * containers); they run nothing and hold no port, so they do not count.
 */
export function groupAlive(pgid: number): boolean {
  if (!HAS_PROC) return signalGroup(pgid, 0);
  return signalGroup(pgid, 0) && groupMembers(pgid).length > 0;
}

/** The live processes of a group (zombies left out): whom a signal to all but one of them reaches. */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') members.push(Number(name));
  }
  return members;
}
