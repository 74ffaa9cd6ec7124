import type { Decision, RunPlan } from './schema.js';

/** The source of a decision kept from a previous plan. */
export const PREVIOUS_PLAN_SOURCE = 'previous plan';

/**
 * What a previous plan resolved for decision `id` when nothing asked for it
 * there either (the value came from a default, or was itself kept from an
 * earlier plan). Any other value was requested, and is requested again now.
 */
export function previousDefault(previous: RunPlan | undefined, id: string): string | undefined {
  if (previous === undefined) return undefined;
  const d = [...previous.runtimes.map((r) => r.decision), ...previous.decisions].find((x) => x.id === id);
  return d !== undefined && (d.source === 'default' || d.source === PREVIOUS_PLAN_SOURCE) ? d.resolved : undefined;
}

/**
 * `now` (a decision that came from a default) turned into one that keeps `kept`
 * from the previous plan, saying what the default would give now. A default
 * moving under a working application (a new LTS, a new patch release) is how
 * rebuilds break without a change; the buildpack keeps the old value only while
 * it is still available and allowed.
 */
export function keepPrevious(now: Decision, kept: string): Decision {
  return {
    ...now,
    source: PREVIOUS_PLAN_SOURCE,
    resolved: kept,
    reason: `kept from the previous plan (plan --previous), which took it from the default; the default now gives ${now.resolved} (${now.reason})`,
    overridden: [...now.overridden, { source: 'default', value: now.resolved, reason: 'a default does not move under an application planned before; plan without --previous to take it' }],
  };
}
