import { CoreErrors } from '../errors/core-errors.js';
import type { InstanceSize } from '../host/host-settings.js';
import { decide } from '../plan/decide.js';
import type { PlanInstance, RunPlan } from '../plan/schema.js';

/** "2 CPUs, 2048 MiB" */
function describeInstance(instance: InstanceSize): string {
  return `${instance.cpus} CPU${instance.cpus === 1 ? '' : 's'}, ${instance.memoryMb} MiB`;
}

/**
 * The instance a plan is sized for, as data with its decision: the one the host
 * declares, else this machine's size as the inventory recorded it. Buildpacks
 * size from it, and executors read it back (a Kubernetes Pod is one instance)
 * instead of guessing it from the settings it produced.
 */
export function planInstance(instance: InstanceSize, declared: InstanceSize | undefined): PlanInstance {
  return {
    cpus: instance.cpus,
    memoryMb: instance.memoryMb,
    decision: decide({
      id: 'instance',
      subject: 'Instance the plan is sized for',
      requests: [{ source: 'host settings', value: declared === undefined ? undefined : describeInstance(declared) }],
      resolved: describeInstance(instance),
      reason: (winner) =>
        `${winner ? 'the host declares it (HostSettings.instance; the command line: --cpus, --memory)' : "the host declares none (--cpus, --memory): this machine's size, as the inventory recorded it (host.instance)"}; the buildpack sizes the processes by it, and an executor gives each instance of the application this much`,
    }),
  };
}

/** The dedicated build instance the host declared, as data with its decision. */
export function planBuildInstance(instance: InstanceSize, runInstance: InstanceSize): PlanInstance {
  return {
    cpus: instance.cpus,
    memoryMb: instance.memoryMb,
    decision: decide({
      id: 'build-instance',
      subject: 'Instance the build is sized for',
      requests: [{ source: 'host settings', value: describeInstance(instance) }],
      resolved: describeInstance(instance),
      reason: `the host gives this application a dedicated build instance (HostSettings.buildInstance; the command line: --build-cpus, --build-memory): the build's steps are sized for it, and the processes for the instance of ${describeInstance(runInstance)}`,
    }),
  };
}

/**
 * The instance a saved plan is carried out on: the one it was sized for. A host
 * that declares another is refused, as another port is — its processes were
 * sized for the plan's (a heap of three quarters of its memory, Puma workers by
 * its CPUs), so a changed size means planning again. A plan made before plans
 * recorded their instance takes the host's.
 */
export function instanceToCarryOut(plan: RunPlan, declared: InstanceSize | undefined): InstanceSize | undefined {
  if (plan.instance === undefined) return declared;
  const planned = { cpus: plan.instance.cpus, memoryMb: plan.instance.memoryMb };
  if (declared !== undefined && (declared.cpus !== planned.cpus || declared.memoryMb !== planned.memoryMb)) {
    throw CoreErrors.HOST_INVALID_SETTING.create({
      message: `the plan was sized for an instance of ${describeInstance(planned)} (${plan.instance.decision.source === 'default' ? 'the size of the machine that planned it' : 'declared by the host that planned it'}), not ${describeInstance(declared)}: its processes would be sized for another instance than they get.`,
      fix: `Plan again with the size the instance should have (--cpus ${declared.cpus} --memory ${declared.memoryMb}M), or leave --cpus and --memory out to carry the plan out on the instance it was sized for.`,
    });
  }
  return planned;
}
