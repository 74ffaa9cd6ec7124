import { assembleEnvironment, Environment, type EnvironmentInput } from '../env/assemble.js';
import { CoreErrors } from '../errors/core-errors.js';
import type { RunPlan } from '../plan/schema.js';

/**
 * The environment to carry out a saved plan with: the plan's variables, and the
 * values of its secret variables from `given` (plans never hold them). Any other
 * variable given must be in the plan with the same value: a saved plan is
 * carried out as made, and a changed variable means planning again.
 */
export function environmentForPlan(plan: RunPlan, given: EnvironmentInput = {}): Environment {
  const planned = new Map(plan.environment.variables.map((v) => [v.name, v]));
  // A variable the plan records as hidden by a stronger source (an application's PORT under the service's) changes nothing.
  const hidden = new Set(plan.environment.shadowed.map((s) => s.name));
  const secrets: Record<string, string> = {};
  // Secret in the plan, secret when given, whichever buildpack declared it so.
  const assembled = assembleEnvironment({ ...given, secretNames: [...(given.secretNames ?? []), ...plan.environment.variables.filter((v) => v.secret).map((v) => v.name)] });
  // CC_SSH_PRIVATE_KEY is in no plan's environment: build.sshKey names it.
  const withheld = assembled.withheldList();
  const needed = plan.build.sshKey?.variable;
  for (const e of withheld) {
    if (e.name !== needed) {
      throw CoreErrors.PLAN_ENV_MISMATCH.create({
        message: `${e.name} (${e.origin}) is given, but the plan uses no SSH key; the plan is carried out as it was made (plan again with it).`,
        variable: e.name,
      });
    }
  }
  if (needed !== undefined && !withheld.some((e) => e.name === needed)) {
    throw CoreErrors.PLAN_SECRET_MISSING.create({ message: `the plan needs the value of ${needed} (the SSH key of its build), which plans never hold.`, variable: needed });
  }
  for (const e of assembled.list()) {
    const v = planned.get(e.name);
    if (v?.secret) {
      secrets[e.name] = e.value;
    } else if (hidden.has(e.name) && v?.source !== e.source) {
    } else if (v === undefined || v.value !== e.value) {
      throw CoreErrors.PLAN_ENV_MISMATCH.create({
        message: `${e.name} (${e.origin}) ${v === undefined ? 'is not a variable of the plan' : 'has another value than in the plan'}; the plan is carried out as it was made.`,
        variable: e.name,
      });
    }
  }
  return Environment.fromPlan(plan.environment, secrets, withheld);
}
