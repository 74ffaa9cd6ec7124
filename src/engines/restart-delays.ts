import { CoreWarnings } from '../errors/core-warnings.js';
import { formatSeconds } from '../health/probes.js';
import type { PlanWarning, RestartPolicy, RunPlan } from '../plan/schema.js';

/**
 * The workers whose restart delay (CC_WORKER_RESTART_DELAY) an engine does not
 * wait: Docker and podman restart a container with their own back-off, a
 * Kubernetes Deployment with its own. Said before the processes start (the
 * contract's `unhonoured`), one warning naming each such worker; a worker that
 * is never restarted has no delay to honour. `policies`: the workers to name
 * (a Kubernetes engine names those whose policy it does honour: the others have
 * RUNPLAN_W_K8S_WORKER_RESTART, which says the back-off already).
 */
export function unhonouredRestartDelays(plan: RunPlan, engine: string, backOff: string, policies: readonly RestartPolicy['policy'][] = ['always', 'on-failure']): PlanWarning[] {
  const restarted = plan.processes.filter((p) => p.role === 'worker' && policies.includes(p.restart.policy));
  if (restarted.length === 0) return [];
  const delays = restarted.map((p) => `${p.name} (${formatSeconds(p.restart.initialDelayMs)})`).join(', ');
  return [
    CoreWarnings.ENGINE_RESTART_DELAY.create({
      message: `${engine} restarts a worker that exits with ${backOff}, not after the plan's restart delay: ${delays}.`,
      variable: 'CC_WORKER_RESTART_DELAY',
    }),
  ];
}
