import { CoreErrors } from '../errors/core-errors.js';
import { quoteExcerpt } from '../errors/excerpt.js';
import { isRunplanError } from '../errors/runplan-error.js';
import { type Clock, systemClock } from '../time/clock.js';

/** The places runplan calls a buildpack's code. */
export type BuildpackPhase = 'import' | 'factory' | 'detect' | 'gather' | 'schema' | 'plan' | 'stack';

const PHASE_WORDS: Readonly<Record<BuildpackPhase, string>> = {
  import: 'loading its module',
  factory: 'its factory function',
  detect: 'detect()',
  gather: "its inventory provider's gather()",
  schema: "its inventory provider's schema",
  plan: 'plan()',
  stack: 'stack()',
};

export interface CallLimit {
  /** How long the call may take. */
  readonly timeoutMs: number;
  /** Measures the limit (tests pass one that does not sleep). */
  readonly clock?: Clock;
  /** Stops waiting at once (Ctrl-C, SIGTERM): RUNPLAN_E_BUILD_INTERRUPTED. */
  readonly signal?: AbortSignal;
}

/** Who is called: a buildpack's id, or the --buildpack module while it has none yet. */
export type Callee = string;

/** Why a call's timer is cancelled: it settled. A reason of its own spares abort() making a DOMException (and its stack) on every call. */
const SETTLED = 'the buildpack call settled';

// An error's own text, as much as a message may hold of it; the rest is in no output.
const CAUSE_MAX_CHARS = 1_000;

/**
 * Calls into a buildpack's code (a host's, or runplan's own) with a time limit,
 * turning what it may do wrong into coded errors that name the buildpack and the
 * phase: a call that never settles (a pending promise does not keep Node.js
 * alive: the CLI would end as if it had succeeded) becomes
 * RUNPLAN_E_BUILDPACK_TIMEOUT; anything thrown that is not a coded error
 * becomes RUNPLAN_E_BUILDPACK_FAILED, the thrown error kept as its cause and,
 * as data, in `details.cause`. A coded error the buildpack raises on purpose
 * (its application is broken) passes unchanged.
 *
 * The abandoned call is not stopped (JavaScript cannot stop a promise): a host
 * that goes on after a timeout should not reuse that buildpack. Code that never
 * yields (a loop without await) cannot be bounded from the same thread.
 */
export async function callBuildpack<T>(callee: Callee, phase: BuildpackPhase, limit: CallLimit, call: () => T | PromiseLike<T>): Promise<T> {
  const expiry = expire(limit, () => timedOut(callee, phase, limit.timeoutMs));
  let onAbort = (): void => undefined;
  const stopped = new Promise<never>((_, reject) => {
    onAbort = () => reject(CoreErrors.BUILD_INTERRUPTED.create({ message: `interrupted while buildpack ${quoteExcerpt(callee)} ran ${PHASE_WORDS[phase]}.`, details: { buildpack: callee, phase } }));
  });
  if (limit.signal?.aborted) onAbort();
  limit.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // Called inside the race: a call that throws at once is reported like one that rejects.
    return await Promise.race([Promise.resolve().then(call), expiry.expired, stopped]);
  } catch (error) {
    if (isRunplanError(error)) throw error;
    throw buildpackFailed(callee, phase, error);
  } finally {
    // The timer too: a pending one would keep the CLI alive for the whole limit after the call returned.
    expiry.cancel();
    limit.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * A promise rejected with `error()` once the limit is over, and what cancels it.
 * On the real clock a plain timer: an AbortController and its listener for each
 * of a plan's four calls were a measurable share of planning a new application.
 */
function expire(limit: CallLimit, error: () => Error): { expired: Promise<never>; cancel: () => void } {
  if (limit.clock === undefined || limit.clock === systemClock) {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(error()), limit.timeoutMs);
    });
    return { expired, cancel: () => clearTimeout(timer) };
  }
  const done = new AbortController();
  const expired = limit.clock.sleep(limit.timeoutMs, done.signal).then(() => {
    if (!done.signal.aborted) throw error();
    return undefined as never;
  });
  return { expired, cancel: () => done.abort(SETTLED) };
}

function timedOut(callee: Callee, phase: BuildpackPhase, timeoutMs: number) {
  return CoreErrors.BUILDPACK_TIMEOUT.create({
    message: `buildpack ${quoteExcerpt(callee)} did not finish ${PHASE_WORDS[phase]} within ${formatLimit(timeoutMs)}; runplan stopped waiting for it.`,
    details: { buildpack: callee, phase, timeoutMs },
  });
}

/** RUNPLAN_E_BUILDPACK_FAILED for what a buildpack's code threw (not a coded error), naming it and the phase. */
export function buildpackFailed(callee: Callee, phase: BuildpackPhase, error: unknown) {
  const cause = describeThrown(error);
  return CoreErrors.BUILDPACK_FAILED.create({
    message: `buildpack ${quoteExcerpt(callee)} failed in ${PHASE_WORDS[phase]}: ${cause.name}: ${quoteExcerpt(cause.message)}.`,
    details: { buildpack: callee, phase, cause },
    cause: error,
  });
}

/** What was thrown, as data: any value may be thrown, and reading it may throw again. */
export function describeThrown(error: unknown): { name: string; message: string } {
  try {
    if (error instanceof Error) return { name: bounded(String(error.name)), message: bounded(String(error.message)) };
    return { name: typeof error, message: bounded(String(error)) };
  } catch {
    return { name: typeof error, message: '(the thrown value cannot be read)' };
  }
}

function bounded(text: string): string {
  return text.length > CAUSE_MAX_CHARS ? `${text.slice(0, CAUSE_MAX_CHARS)}…` : text;
}

function formatLimit(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
