// Helpers shared by the bench modules.
import { chmodSync, mkdtempSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const cli = join(root, 'dist', 'cli.js');

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export function percentile(xs, p) {
  return [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
}

export const ms = (x) => `${x.toFixed(3)} ms`;
export const ratio = (a, b) => `${(a / b).toFixed(2)}×`;

/** Wall time of one command, in ms; throws with its output when it fails. */
export function timeCommand(file, args, options = {}) {
  const t = process.hrtime.bigint();
  const r = spawnSync(file, args, { cwd: root, encoding: 'utf8', ...options });
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} failed (${r.status}): ${r.stderr}${r.stdout}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

/** Wall time of an async function, in ms. */
export async function timeAsync(fn) {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

/** mkdtempSync, searchable by others: as root, runplan builds and runs as its unprivileged user, which must reach the work and cache directories. */
export function reachableTemp(prefix) {
  const dir = mkdtempSync(prefix);
  chmodSync(dir, 0o711);
  return dir;
}
