import type { RestartPolicy } from '../plan/schema.js';

/** Delay before restart number `restart` (1-based): initial × 2^(restart-1), capped. */
export function restartDelay(policy: RestartPolicy, restart: number): number {
  const exponent = Math.max(0, restart - 1);
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(exponent, 30));
}

export const DEFAULT_RESTART: RestartPolicy = {
  policy: 'always',
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  resetAfterMs: 30_000,
};

export const DEFAULT_STOP_GRACE_MS = 10_000;
