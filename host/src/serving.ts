import { readFile } from 'node:fs/promises';
import { HostErrors } from './errors.js';
import type { HostPaths } from './paths.js';

/** Two serves on one data folder would fight over its ports and releases; the store is not moved under a serve. */
export async function refuseWhileServing(paths: HostPaths): Promise<void> {
  const pid = Number((await readFile(paths.servePid, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return;
  try {
    process.kill(pid, 0);
  } catch {
    return;
  }
  throw HostErrors.HOST_ALREADY_SERVING.create({ message: `runplan-host serve (PID ${pid}) already serves ${paths.root}.`, file: paths.servePid });
}
