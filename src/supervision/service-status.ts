import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A supervised process as s6-supervise records it (`supervise/status`, 35 bytes:
 * its own format, stable since s6 2.10): whether it runs, its PID, how its last
 * run ended, and whether s6 wants it up.
 */
export interface ServiceStatus {
  /** A run is alive (its PID is known). */
  readonly up: boolean;
  readonly pid: number | undefined;
  /** How the last run ended, while down: its exit code, or the signal that killed it. */
  readonly exitCode: number | undefined;
  readonly signal: number | undefined;
  /** s6 starts it again when it dies (no `s6-svc -O`/`-d`, no finish exit 125). */
  readonly wantUp: boolean;
  /** Its finish script runs now. */
  readonly finishing: boolean;
  /** When it last went up or down: TAI64N seconds, comparable with each other only. */
  readonly since: number;
}

/** The layout of `supervise/status` (s6's s6_svstatus_pack): two TAI64N stamps, the PID, the wait status, the flags. */
const STATUS_SIZE = 35;
const TAI_OFFSET = 2n ** 62n;

/** Reads the status bytes; undefined for anything that is not one (a supervisor that never ran writes none). */
export function parseServiceStatus(bytes: Buffer): ServiceStatus | undefined {
  if (bytes.length < STATUS_SIZE) return undefined;
  const seconds = Number(bytes.readBigUInt64BE(0) - TAI_OFFSET);
  const nanoseconds = bytes.readUInt32BE(8);
  const pid = Number(bytes.readBigUInt64BE(24));
  const wstat = bytes.readUInt16BE(32);
  const flags = bytes[34] ?? 0;
  const up = pid > 0;
  // A wait status: the signal in its low 7 bits, else the exit code in its second byte.
  const termsig = wstat & 0x7f;
  return {
    up,
    pid: up ? pid : undefined,
    exitCode: up || termsig !== 0 ? undefined : (wstat >> 8) & 0xff,
    signal: up || termsig === 0 ? undefined : termsig,
    wantUp: (flags & 0b100) !== 0,
    finishing: (flags & 0b10) !== 0,
    since: seconds + nanoseconds / 1e9,
  };
}

/** The status of the service in `serviceDir` now, or undefined when no supervisor wrote one. */
export async function readServiceStatus(serviceDir: string): Promise<ServiceStatus | undefined> {
  const bytes = await readFile(join(serviceDir, 'supervise', 'status')).catch(() => undefined);
  return bytes === undefined ? undefined : parseServiceStatus(bytes);
}

/**
 * Of the status kept and one just read, the later: a read that began before
 * another may end after it, and must not put an older status back (a process
 * up, seen down until the next change). s6 stamps every change of up or down.
 */
export function latestStatus(kept: ServiceStatus | undefined, read: ServiceStatus | undefined): ServiceStatus | undefined {
  if (read === undefined) return kept;
  return kept === undefined || read.since >= kept.since ? read : kept;
}
