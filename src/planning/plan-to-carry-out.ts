import type { Environment } from '../env/assemble.js';
import { CoreErrors } from '../errors/core-errors.js';
import { resolveHostSettings, type HostSettings } from '../host/host-settings.js';
import type { RunPlan } from '../plan/schema.js';
import { createPlan, parsePlan, type CreatePlanOptions } from './create-plan.js';
import { environmentForPlan } from './plan-environment.js';

/**
 * The plan to carry out: the one given (validated, with the environment it
 * needs), or a new one made from the application's source.
 */
export async function planToCarryOut(options: CreatePlanOptions & { readonly plan?: RunPlan | undefined }): Promise<{ plan: RunPlan; environment: Environment; host: HostSettings }> {
  if (options.plan === undefined) return createPlan(options);
  const plan = parsePlan(options.plan);
  const port = plan.healthCheck.port;
  if (options.host?.port !== undefined && options.host.port !== port) {
    throw CoreErrors.HOST_INVALID_SETTING.create({ message: `the plan was made for port ${port}, not ${options.host.port}; plan again with that port, or leave the port out.` });
  }
  return { plan, environment: environmentForPlan(plan, options.env), host: resolveHostSettings({ ...options.host, port }) };
}
