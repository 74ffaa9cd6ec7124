import { access } from 'node:fs/promises';
import { CoreErrors } from '../errors/core-errors.js';

/** s6's programs as Debian's `s6` package installs them. */
export const S6 = {
  svscan: '/usr/bin/s6-svscan',
  svscanctl: '/usr/bin/s6-svscanctl',
  svlink: '/usr/bin/s6-svlink',
  svunlink: '/usr/bin/s6-svunlink',
  svc: '/usr/bin/s6-svc',
  svstat: '/usr/bin/s6-svstat',
  svok: '/usr/bin/s6-svok',
  log: '/usr/bin/s6-log',
} as const;

/** Throws RUNPLAN_E_HOST_SUPERVISOR_UNAVAILABLE when one of s6's programs is missing (`programs`: another set, for a test). */
export async function checkS6(programs: Readonly<Record<string, string>> = S6): Promise<void> {
  const missing: string[] = [];
  for (const program of Object.values(programs)) {
    await access(program, 1).catch(() => missing.push(program));
  }
  if (missing.length > 0) {
    throw CoreErrors.HOST_SUPERVISOR_UNAVAILABLE.create({
      message: `the applications' processes cannot be kept running apart from runplan: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing.`,
    });
  }
}
