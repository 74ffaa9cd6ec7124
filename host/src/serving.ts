import { readFile, writeFile } from 'node:fs/promises';
import { formatIdentity, identifyProcess, isRunning, parseIdentity, processArguments } from 'runplan/process';
import { HostErrors } from './errors.js';
import type { HostPaths } from './paths.js';

/**
 * Two serves on one data folder would fight over its ports and releases; the store is not moved under a serve.
 * serve.pid names serve by its identity (PID, start time, boot): a PID some other process got since a serve
 * was killed never counts. A plain PID (written by an older runplan-host) counts when that process runs serve.
 */
export async function refuseWhileServing(paths: HostPaths): Promise<void> {
  const text = await readFile(paths.servePid, 'utf8').catch(() => '');
  const identity = parseIdentity(text);
  const pid = identity?.pid ?? Number(text.trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return;
  const serving = identity !== undefined ? isRunning(identity) : (processArguments(pid) ?? []).includes('serve');
  if (!serving) return;
  throw HostErrors.HOST_ALREADY_SERVING.create({ message: `runplan-host serve (PID ${pid}) already serves ${paths.root}.`, file: paths.servePid });
}

/** Records this process as the data folder's serve. */
export async function recordServing(paths: HostPaths): Promise<void> {
  const identity = identifyProcess(process.pid);
  await writeFile(paths.servePid, identity === undefined ? `${process.pid}\n` : formatIdentity(identity), { mode: 0o644 });
}
