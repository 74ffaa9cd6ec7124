import { basename, resolve } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { resolveHostSettings, type HostSettings, type InstanceSize } from '../host/host-settings.js';
import { Logger } from '../log/logger.js';
import { planDigest } from '../plan/digest.js';
import type { RunPlan } from '../plan/schema.js';
import { assembleEnvironment } from '../env/assemble.js';
import { parsePlan } from '../planning/create-plan.js';
import { planToCarryOut } from '../planning/plan-to-carry-out.js';
import { secretVariables } from './docker-runner.js';
import { buildImage, type ImageOptions } from './image/build-image.js';
import { kubernetesManifests, kubernetesName, type KubernetesManifests } from './kubernetes.js';
import { manifestFiles, writeManifestFiles, type ManifestFile } from './kubernetes-files.js';
import { planHeap } from './plan-memory.js';

export interface KubernetesExportOptions extends Omit<ImageOptions, 'out' | 'oci'> {
  /** Where the manifests are written. */
  readonly outDir: string;
  /** An image already built from this plan; without it, the image is built first (Docker engine at DOCKER_HOST). */
  readonly image?: string;
  readonly namespace?: string;
  readonly replicas?: number;
  /** Default: the application directory's name. */
  readonly appName?: string;
}

export interface KubernetesExport {
  readonly plan: RunPlan;
  readonly image: string;
  readonly host: HostSettings;
  readonly manifests: KubernetesManifests;
  readonly files: readonly ManifestFile[];
}

/**
 * `runplan k8s`: the plan (made now, or the saved one given), its image (the
 * one given, or built), and the manifests written into `outDir`. The Pods get
 * the instance the plan was made for (`host.instance`); a saved plan does not
 * record it, so its heap settings are checked against the memory given.
 */
export async function exportToKubernetes(options: KubernetesExportOptions): Promise<KubernetesExport> {
  // A saved plan is checked before its image is built: the instance is the one given, not the plan's.
  const onPlan = (plan: RunPlan) => {
    if (options.plan !== undefined) assertHeapFits(plan, resolveHostSettings(options.host).instance);
    options.onPlan?.(plan);
  };
  let plan: RunPlan;
  let image: string;
  let carried: Awaited<ReturnType<typeof planToCarryOut>>;
  if (options.image === undefined) {
    const result = await buildImage({ ...options, onPlan });
    carried = result;
    plan = result.plan;
    image = result.tag as string;
  } else {
    carried = await carryOutWithoutSecrets(options);
    plan = carried.plan;
    onPlan(plan);
    image = options.image;
  }
  const { host, environment } = carried;
  assertHeapFits(plan, host.instance);
  const manifests = kubernetesManifests(plan, {
    image,
    appName: options.appName ?? kubernetesName(basename(resolve(options.appDir, plan.app.folder ?? ''))),
    instance: host.instance,
    secretValues: secretVariables(plan, environment),
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(options.replicas ? { replicas: options.replicas } : {}),
  });
  const files = await manifestFiles(manifests, planDigest(plan));
  await writeManifestFiles(options.outDir, files);
  const logger = new Logger(options.sink, environment.redactor);
  for (const f of files) logger.info(`wrote ${f.name}: ${f.object.kind} ${f.object.metadata.name}`);
  for (const w of manifests.warnings) logger.warn(`${w.code}: ${w.message} Fix: ${w.fix}`);
  if (manifests.missingSecrets.length > 0) {
    logger.warn(
      `no value was given for ${manifests.missingSecrets.join(', ')}: secret.yaml does not hold ${manifests.missingSecrets.length === 1 ? 'it' : 'them'}, and the Pods do not start until the Secret does (--env NAME=VALUE, or edit secret.yaml).`,
    );
  }
  return { plan, image, host, manifests, files };
}

/**
 * Like planToCarryOut, except that a saved plan's secret variables may lack
 * their value: nothing is built, and the Secret only names those (the Pods
 * wait for it to hold them).
 */
async function carryOutWithoutSecrets(options: KubernetesExportOptions): ReturnType<typeof planToCarryOut> {
  if (options.plan === undefined) return planToCarryOut(options);
  const plan = parsePlan(options.plan);
  const assembled = assembleEnvironment({ ...options.env, secretNames: [...(options.env?.secretNames ?? []), ...plan.environment.variables.filter((v) => v.secret).map((v) => v.name)] });
  const given = new Set(assembled.list().map((e) => e.name));
  const variables = plan.environment.variables.filter((v) => !v.secret || given.has(v.name));
  // The build's SSH key too: the Pods never get it.
  const { sshKey, ...build } = plan.build;
  const keyGiven = sshKey !== undefined && assembled.withheld(sshKey.variable) !== undefined;
  const carried = await planToCarryOut({ ...options, plan: { ...plan, build: keyGiven ? plan.build : build, environment: { ...plan.environment, variables } } });
  return { ...carried, plan };
}

function assertHeapFits(plan: RunPlan, instance: InstanceSize): void {
  const heap = planHeap(plan);
  if (heap && heap.megabytes >= instance.memoryMb) {
    throw CoreErrors.K8S_MEMORY_BELOW_HEAP.create({
      message: `the plan sets a heap of ${heap.megabytes} MB (${heap.setting}), but its Pods would get ${instance.memoryMb} MiB of memory: they would be killed once the heap fills.`,
      details: { heapMb: heap.megabytes, memoryMb: instance.memoryMb },
    });
  }
}
