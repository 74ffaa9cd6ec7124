import { readFileSync } from 'node:fs';
import { type Clock, systemClock } from '../time/clock.js';

/**
 * A process as it can be found again by another program, or by the same program
 * started again: its PID, when it started (in clock ticks since boot, /proc's
 * field 22) and the boot it started in. A PID alone names whichever process
 * has it now; all three name one process, even across a reboot.
 */
export interface ProcessIdentity {
  readonly pid: number;
  readonly startTime: string;
  readonly bootId: string;
}

/** When a process started (field 22 of /proc/<pid>/stat), or undefined without /proc or that process. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: the fields after it follow its last ")".
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

let thisBoot: string | undefined;

/** The kernel's id of this boot: a record made before a reboot names another. */
export function bootId(): string {
  if (thisBoot === undefined) {
    try {
      thisBoot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      thisBoot = 'unknown';
    }
  }
  return thisBoot;
}

/** The identity of the process with that PID now, if there is one. */
export function identifyProcess(pid: number): ProcessIdentity | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const startTime = processStartTime(pid);
  return startTime === undefined ? undefined : { pid, startTime, bootId: bootId() };
}

/** Whether the very process the identity names still runs (a zombie counts as gone). */
export function isRunning(identity: ProcessIdentity): boolean {
  if (identity.bootId !== bootId() || processStartTime(identity.pid) !== identity.startTime) return false;
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${identity.pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** A process's arguments as it was started (its /proc cmdline), or undefined when it is gone. */
export function processArguments(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return text === '' ? undefined : text.replace(/\0$/, '').split('\0');
  } catch {
    return undefined;
  }
}

/**
 * Reads an identity written by `formatIdentity` (a pid file of runplan's or a
 * host's), or undefined for anything else: a file from before identities, one
 * half written, or none.
 */
export function parseIdentity(text: string): ProcessIdentity | undefined {
  try {
    const value = JSON.parse(text) as Partial<ProcessIdentity>;
    if (typeof value.pid !== 'number' || typeof value.startTime !== 'string' || typeof value.bootId !== 'string') return undefined;
    return { pid: value.pid, startTime: value.startTime, bootId: value.bootId };
  } catch {
    return undefined;
  }
}

/** The identity as one line of JSON, for a pid file another program reads. */
export function formatIdentity(identity: ProcessIdentity): string {
  return `${JSON.stringify({ pid: identity.pid, startTime: identity.startTime, bootId: identity.bootId })}\n`;
}

/**
 * Settles once the process is gone: for a process this program did not start
 * (one adopted from an earlier run of it), whose exit no 'exit' event tells.
 * Polled every `intervalMs`; `signal` ends the watch early (it then resolves
 * with false).
 */
export async function watchUntilGone(identity: ProcessIdentity, options: { readonly intervalMs?: number; readonly signal?: AbortSignal; readonly clock?: Clock } = {}): Promise<boolean> {
  const clock = options.clock ?? systemClock;
  for (;;) {
    if (options.signal?.aborted) return false;
    if (!isRunning(identity)) return true;
    await clock.sleep(options.intervalMs ?? 250, options.signal);
  }
}
