import type { Decision, OverriddenSource } from './schema.js';

/** A place that may ask for a value: a variable, a file, a field. `value` undefined: it asks for nothing. */
export interface DecisionRequest {
  readonly source: string;
  readonly value: string | null | undefined;
}

/** What decide() is given: the decision, the places that may ask, strongest first, and the default. */
export interface DecideInput {
  /** Stable identifier, e.g. "node.version". */
  readonly id: string;
  /** What is decided, in words. */
  readonly subject: string;
  /**
   * The places that may ask, strongest first. The first that asks wins; every
   * later one that also asks is reported as overridden. None asking: the
   * decision's source is "default".
   */
  readonly requests?: readonly DecisionRequest[];
  /** The source named when no request asks: the rule, file or setting the value follows (default "default"). */
  readonly basis?: string;
  /** What runplan uses, given the winning request (undefined: nothing asked). */
  readonly resolved: string | ((winner: DecisionRequest | undefined) => string);
  /** The rule that turned the request (or its absence) into the resolved value. */
  readonly reason: string | ((winner: DecisionRequest | undefined) => string);
  /** Why a request lost to the winner (default: "<winner> takes precedence"). */
  readonly outranked?: (loser: DecisionRequest, winner: DecisionRequest) => string;
  /** Further sources that lost for reasons of their own (an invalid value, an ignored file), after the outranked ones. */
  readonly lost?: readonly OverriddenSource[];
}

/**
 * One explained decision: who asked (requested, source), what is used
 * (resolved), by which rule (reason), and every source that lost and why.
 */
export function decide(input: DecideInput): Decision {
  const asking = (input.requests ?? []).filter((r) => r.value !== undefined);
  const [winner, ...losers] = asking;
  const outranked = input.outranked ?? ((_loser, w) => `${w.source} takes precedence`);
  const overridden: OverriddenSource[] = winner === undefined ? [] : losers.map((l) => ({ source: l.source, value: l.value ?? null, reason: outranked(l, winner) }));
  return {
    id: input.id,
    subject: input.subject,
    requested: winner?.value ?? null,
    source: winner?.source ?? input.basis ?? 'default',
    resolved: typeof input.resolved === 'function' ? input.resolved(winner) : input.resolved,
    reason: typeof input.reason === 'function' ? input.reason(winner) : input.reason,
    overridden: [...overridden, ...(input.lost ?? [])],
  };
}
