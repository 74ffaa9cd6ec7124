import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { groupAlive, signalGroup } from './process-group.js';

/**
 * Everything a build step or a process started, including what left its process
 * group: a program that double-forks and calls setsid() (a daemon) is in a new
 * session and group, which a signal to the group no longer reaches.
 *
 * Each tree gets a random tag in this variable of the environment of the
 * process runplan spawns; children inherit it, daemons included, so walking
 * /proc for it finds them wherever they moved. A process that clears its own
 * environment before exec (`env -i`) escapes this; only a cgroup (what the
 * service's containers give) holds such a process, and runplan does not
 * require one.
 */
const TREE_TAG_VARIABLE = 'RUNPLAN_PROCESS_TREE';

/**
 * Carries the build's lock token into every step's processes: when runplan is
 * killed with SIGKILL mid-build, the next build of the application, taking the
 * stale lock over, finds what that build's steps left running by it.
 */
export const BUILD_TAG_VARIABLE = 'RUNPLAN_BUILD_TREE';

export interface ProcessTree {
  /** The process group of the process runplan spawned (its pid). */
  readonly pgid: number;
  /** The value of TREE_TAG_VARIABLE in its environment. */
  readonly tag: string;
}

/** A fresh tag, and the variable that carries it into a process's environment. */
export function newTreeTag(): { tag: string; env: Record<string, string> } {
  const tag = randomBytes(8).toString('hex');
  return { tag, env: { [TREE_TAG_VARIABLE]: tag } };
}

const HAS_PROC = (() => {
  try {
    readFileSync('/proc/self/environ');
    return true;
  } catch {
    return false;
  }
})();

/**
 * Live processes (not zombies) carrying `tag` in their environment. Processes
 * of other users cannot be read and are not ours anyway; runplan itself never
 * counts.
 */
function taggedProcesses(tag: string, variable: string = TREE_TAG_VARIABLE): number[] {
  if (!HAS_PROC) return [];
  const needle = Buffer.from(`\0${variable}=${tag}\0`);
  const first = Buffer.from(`${variable}=${tag}\0`);
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${name}/environ`);
    } catch {
      continue;
    }
    if (!(environ.subarray(0, first.length).equals(first) || environ.includes(needle))) continue;
    if (isZombie(name)) continue;
    pids.push(pid);
  }
  return pids;
}

function isZombie(pid: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    // Gone since the directory was listed.
    return true;
  }
}

/**
 * The trees whose process group was seen empty. An empty group never gains a
 * member again, but its number does come back: once the kernel hands the PID out
 * again (pid_max is 32768 on a small machine, reached within minutes of builds),
 * a signal to the old group would reach a stranger's new one — another
 * application's process. So a group seen empty is never looked at again; only
 * the tag finds what is left of the tree.
 */
const emptied = new WeakSet<ProcessTree>();

function groupRuns(tree: ProcessTree): boolean {
  if (emptied.has(tree)) return false;
  if (groupAlive(tree.pgid)) return true;
  emptied.add(tree);
  return false;
}

/** Whether any process of the tree (its group, or a tagged process elsewhere) still runs. */
export function treeAlive(tree: ProcessTree): boolean {
  return groupRuns(tree) || taggedProcesses(tree.tag).length > 0;
}

/** Sends `signal` to the group (while it has members) and to every tagged process outside it. Returns whether any was signalled. */
export function signalTree(tree: ProcessTree, signal: NodeJS.Signals): boolean {
  let any = groupRuns(tree) && signalGroup(tree.pgid, signal);
  for (const pid of taggedProcesses(tree.tag)) {
    try {
      process.kill(pid, signal);
      any = true;
    } catch {
      // Exited meanwhile.
    }
  }
  return any;
}

const TREE_POLL_MS = 50;

/** Resolves once no process of the tree runs, or after `ms`. */
export async function waitTreeGone(tree: ProcessTree, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (treeAlive(tree) && Date.now() < deadline) await new Promise((r) => setTimeout(r, TREE_POLL_MS));
}

/**
 * SIGTERM to the whole tree, up to `graceMs` for it to exit, then SIGKILL.
 * Returns whether SIGKILL was needed.
 */
export async function terminateTree(tree: ProcessTree, graceMs: number): Promise<boolean> {
  if (!treeAlive(tree)) return false;
  signalTree(tree, 'SIGTERM');
  await waitTreeGone(tree, graceMs);
  if (!treeAlive(tree)) return false;
  signalTree(tree, 'SIGKILL');
  await waitTreeGone(tree, 5_000);
  return true;
}

/**
 * SIGTERM to every process carrying `variable=tag`, up to `graceMs` for them to
 * exit, then SIGKILL. Returns how many there were.
 */
export async function terminateTagged(variable: string, tag: string, graceMs: number): Promise<number> {
  const found = taggedProcesses(tag, variable);
  const signal = (pids: readonly number[], name: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, name);
      } catch {
        // Exited meanwhile.
      }
    }
  };
  signal(found, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (taggedProcesses(tag, variable).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, TREE_POLL_MS));
  signal(taggedProcesses(tag, variable), 'SIGKILL');
  return found.length;
}
