import { createHash } from 'node:crypto';
import type { RunPlan } from './schema.js';

/**
 * The identity of a plan: SHA-256 of its compact JSON. `runplan plan` prints it,
 * `build` and `run` print the one they carry out, and images carry it as a label,
 * so anyone can check that what ran is what was planned and reviewed.
 */
export function planDigest(plan: RunPlan): string {
  return `sha256:${createHash('sha256').update(JSON.stringify(plan)).digest('hex')}`;
}
