import type { Planner } from './contract.js';

/** The planners of runplan's built-in buildpacks, as the composition layer made them (src/compose/default-registry.ts). */
const own = new WeakSet<Planner>();

/**
 * Marks a built-in buildpack's planner: what it returns is held to the contract
 * by runplan's own tests (the golden plans among them), so createPlan does not
 * check it again with the contribution's schema, ≈ a quarter of planning a new
 * application. The plan it goes into is still checked whole (RunPlanSchema).
 * A host's buildpack, or a built-in given another planner, is checked as before.
 */
export function markOwnPlanner(planner: Planner): void {
  // Frozen: a planner swapped in on the built-in's object afterwards would be trusted too.
  own.add(Object.freeze(planner));
}

export function isOwnPlanner(planner: Planner): boolean {
  return own.has(planner);
}
