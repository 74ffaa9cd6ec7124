import type { LoweredProcess } from '../lowering/lower.js';
import { formatSeconds } from '../health/probes.js';
import { CoreWarnings } from '../errors/core-warnings.js';
import { FLOOR_MAX_MS } from '../plan/restart-policy.js';
import { CRASH_LOOP_EXITS } from '../executor/web-watch.js';
import type { LimitStrike } from '../sandbox/limit-strike.js';

/** How one run of a process ended, and what its supervisor does next. */
export interface ExitFacts {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Why it could not be started at all. */
  readonly error?: string;
  readonly ranMs: number;
  readonly willRestart: boolean;
  readonly delayMs: number;
  /** Its restarts, this one included when it is restarted. */
  readonly restarts: number;
  readonly inARow: number;
  readonly strike: LimitStrike | undefined;
}

/**
 * The lines an exit is told in, whoever supervises the process (runplan's own
 * SupervisedProcess, or s6 for a lasting run): the limit that ended it, the
 * exit and the restart, and, once per loop, that it is crash-looping.
 */
export function exitNotice(spec: LoweredProcess, facts: ExitFacts): string[] {
  const how = facts.error
    ? `could not start: ${facts.error}`
    : facts.strike?.resource === 'memory'
      ? facts.strike.how
      : facts.signal
        ? `was killed by ${facts.signal}`
        : `exited with code ${facts.code}`;
  const lines: string[] = [];
  if (facts.strike) lines.push(facts.strike.warning(spec.name));
  if (!facts.willRestart) {
    lines.push(`${spec.name} ${how} after ${formatSeconds(facts.ranMs)}; not restarted (policy ${spec.restart.policy})`);
    return lines;
  }
  lines.push(`${spec.name} ${how} after ${formatSeconds(facts.ranMs)}; restarting in ${formatSeconds(facts.delayMs)} (restart ${facts.restarts})`);
  // Once per loop: from here on it is a crash loop, not a hiccup.
  if (facts.inARow === CRASH_LOOP_EXITS) {
    const spacing = Math.max(spec.restart.maxDelayMs, FLOOR_MAX_MS);
    lines.push(
      `${CoreWarnings.RUN_CRASH_LOOP.code}: ${spec.name} is crash-looping: ${facts.inARow} exits in a row, each within ${formatSeconds(spec.restart.resetAfterMs)} of starting (last: ${how}); restarts are spaced out up to ${formatSeconds(spacing)} apart until it stays up ${formatSeconds(spec.restart.resetAfterMs)}`,
    );
  }
  return lines;
}
