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
  if (!signalGroup(pgid, 0)) return false;
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the parenthesised command: state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

const GROUP_POLL_MS = 50;

/** Resolves once no process of the group runs, or after `ms`. */
export async function waitGroupGone(pgid: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (groupAlive(pgid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, GROUP_POLL_MS));
}

/**
 * SIGTERM to the group, up to `graceMs` for it to exit, then SIGKILL. Returns
 * whether SIGKILL was needed.
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<boolean> {
  if (!groupAlive(pgid)) return false;
  signalGroup(pgid, 'SIGTERM');
  await waitGroupGone(pgid, graceMs);
  if (!groupAlive(pgid)) return false;
  signalGroup(pgid, 'SIGKILL');
  await waitGroupGone(pgid, 5_000);
  return true;
}
