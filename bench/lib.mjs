// Helpers shared by the bench modules.
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// What npm's bin link runs (package.json "bin"): the cold CLI is timed as a user starts it.
export const cli = join(root, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).bin.runplan);

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export function percentile(xs, p) {
  return [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
}

/**
 * The moment a deployment is healthy: its health check passed. runplan accepts it
 * ("deployment healthy") once the web process has also stayed up the stability
 * window (3 s by default, docs/service.md): a wait by design, not a cost of the
 * runner, so the benches stop the clock at the check (with a window of 0, at
 * "deployment healthy", which then follows at once).
 */
export const HEALTHY = /health check passed; the deployment is accepted once|==> deployment healthy/;

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

/**
 * The targets, measured by the modules as they run and printed together at
 * the end by run.mjs: what was measured, against what, the ratio and whether it is met.
 */
export const targets = [];
export function target({ what, runplan, against, limit, met, note = '' }) {
  targets.push({ what, runplan, against, limit, met, note });
}

/** A TCP port nothing listens on right now. */
export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resident set size of a process, in MB (VmRSS of /proc/<pid>/status). */
export function rssMb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

export const spread = (xs) => `${percentile(xs, 10).toFixed(1)}–${percentile(xs, 90).toFixed(1)}`;
