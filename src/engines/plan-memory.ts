import { CoreErrors } from '../errors/core-errors.js';
import type { InstanceSize } from '../host/host-settings.js';
import type { RunPlan } from '../plan/schema.js';

/**
 * The instance an engine gives each instance of the application: the one the
 * plan records it was sized for (`instance`). Its buildpack sized the processes
 * by it — Node.js's heap at three quarters of its memory, the JVM's `-Xmx`,
 * Puma's workers — so a Pod given less memory would see them killed, not
 * slowed. A plan made before plans recorded it says nothing of its size, and
 * the settings it holds are not read back for one: it is planned again.
 */
export function plannedInstance(plan: RunPlan, origin = 'the plan'): InstanceSize {
  if (plan.instance === undefined) {
    throw CoreErrors.PLAN_DOCUMENT_INVALID.create({
      message: `${origin} (made by runplan ${plan.runplanVersion}) does not record the instance it was sized for, which sizes the Pods.`,
      fix: 'Plan the application again with this runplan (runplan plan --json, with --cpus and --memory of the instance the Pods should get), and give that plan.',
      file: origin,
    });
  }
  return { cpus: plan.instance.cpus, memoryMb: plan.instance.memoryMb };
}
