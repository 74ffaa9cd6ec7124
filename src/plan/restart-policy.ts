import type { RestartPolicy } from './schema.js';

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

/** The floor of the restart delay: 100 ms for the second exit in a row, doubling… */
const FLOOR_FIRST_MS = 100;
/** …up to this. */
export const FLOOR_MAX_MS = 10_000;

/**
 * The least delay before a restart, whatever the plan says: none after a lone
 * exit (CC_WORKER_RESTART_DELAY=0 restarts at once), then 100 ms, 200 ms, 400 ms…
 * up to 10 s for exits in a row, each soon after its start. A process that exits
 * at once under a zero delay would otherwise be restarted some two hundred times
 * a second, for ever (1,533 times in 8 s, issue 21).
 */
export function minimumRestartDelay(inARow: number): number {
  if (inARow < 2) return 0;
  return Math.min(FLOOR_MAX_MS, FLOOR_FIRST_MS * 2 ** Math.min(inARow - 2, 30));
}
