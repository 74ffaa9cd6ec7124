import { resolve } from 'node:path';
import type { Environment } from '../env/assemble.js';
import { CoreErrors } from '../errors/core-errors.js';
import { resolveHostSettings, type HostSettings } from '../host/host-settings.js';
import type { Inventory } from '../inventory/inventory.js';
import type { RunPlan } from '../plan/schema.js';
import { checkApplicationOnDisk } from './app-folder.js';
import { createPlan, parsePlan, type CreatePlanOptions } from './create-plan.js';
import { environmentForPlan } from './plan-environment.js';
import { instanceToCarryOut } from './resolve-instance.js';

/** A plan ready to be carried out by any executor: validated, with the environment (values included) and the host's settings. */
export interface PlanToCarryOut {
  readonly plan: RunPlan;
  /** The full environment with values (secrets included): keep it in memory, never print it. */
  readonly environment: Environment;
  readonly host: HostSettings;
  /** The inventory planning used or the host gave: where this host keeps the plan's programs. */
  readonly inventory?: Inventory | undefined;
}

/**
 * The plan to carry out: the one given (validated, with the environment it
 * needs), or a new one made from the application's source; with the inventory
 * planning used or the host gave, which says where this host keeps the plan's
 * programs (stack-bindings.ts).
 */
export async function planToCarryOut(options: CreatePlanOptions & { readonly plan?: RunPlan | undefined }): Promise<PlanToCarryOut> {
  if (options.plan === undefined) return createPlan(options);
  const plan = parsePlan(options.plan);
  // Checked again on the files it is carried out with, as planning checks them: since the plan was
  // made, its folder may have become a link out of the repository (to a host folder a build would write into).
  if (options.appDir !== undefined) checkApplicationOnDisk(resolve(options.appDir), plan.app.folder ?? '');
  const port = plan.healthCheck.port;
  if (options.host?.port !== undefined && options.host.port !== port) {
    throw CoreErrors.HOST_INVALID_SETTING.create({ message: `the plan was made for port ${port}, not ${options.host.port}; plan again with that port, or leave the port out.` });
  }
  const instance = instanceToCarryOut(plan, options.host?.instance);
  return {
    plan,
    environment: environmentForPlan(plan, options.env),
    // The build is sized for the build instance the plan records, whatever this host declares.
    host: resolveHostSettings({
      ...options.host,
      port,
      ...(instance ? { instance } : {}),
      ...(plan.buildInstance ? { buildInstance: { cpus: plan.buildInstance.cpus, memoryMb: plan.buildInstance.memoryMb } } : {}),
    }),
    ...(options.inventory ? { inventory: options.inventory } : {}),
  };
}
