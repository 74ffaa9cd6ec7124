import type { HostSettings, InstanceSize } from '../host/host-settings.js';
import { Logger, type LogSink } from '../log/logger.js';
import { planDigest } from '../plan/digest.js';
import type { RunPlan } from '../plan/schema.js';
import type { LoweredPlan } from '../lowering/lower.js';
import { lowerForImage } from './image/scripts.js';
import { assembleEnvironment } from '../env/assemble.js';
import { parsePlan } from '../planning/create-plan.js';
import { planToCarryOut, type PlanToCarryOut } from '../planning/plan-to-carry-out.js';
import { secretVariables } from './docker-runner.js';
import { buildImage, type ImageOptions } from './image/build-image.js';
import { manifestsOfLowered, type KubernetesManifests } from './kubernetes.js';
import { appName } from './app-name.js';
import { manifestFiles, writeManifestFiles, type ManifestFile } from './kubernetes-files.js';
import { plannedInstance } from './plan-memory.js';

export interface KubernetesExportOptions extends Omit<ImageOptions, 'out' | 'oci'> {
  /** Where the export's lines go (and its image build's). */
  readonly sink: LogSink;
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
 * `runplan k8s`: the plan (the one carried, else made now or the saved one
 * given), its image (the one given, or built), and the manifests written into `outDir`. The Pods get
 * the instance the plan records it was sized for; a host that declares another
 * is refused (planToCarryOut), so a saved plan needs no --cpus nor --memory.
 * A carried plan (`toCarryOut`) is used as it is; without one, a saved plan
 * exported for an image already built may lack its secret values.
 */
export async function exportToKubernetes(options: KubernetesExportOptions, toCarryOut?: PlanToCarryOut): Promise<KubernetesExport> {
  // Before its image is built: a saved plan that does not say its size cannot size the Pods.
  const onPlan = (plan: RunPlan) => {
    plannedInstance(plan);
    options.onPlan?.(plan);
  };
  let plan: RunPlan;
  let image: string;
  let carried: Awaited<ReturnType<typeof planToCarryOut>>;
  let lowered: LoweredPlan;
  if (options.image === undefined) {
    const result = await buildImage({ ...options, onPlan }, toCarryOut);
    carried = result;
    plan = result.plan;
    lowered = result.lowered;
    image = result.tag as string;
  } else {
    carried = toCarryOut ?? (await carryOutWithoutSecrets(options));
    plan = carried.plan;
    // No image is built here: the manifests' plan is lowered as the image that was built lowered it.
    lowered = lowerForImage(plan);
    onPlan(plan);
    image = options.image;
  }
  const { host, environment } = carried;
  const manifests = planManifests({ lowered, environment }, image, { ...options, instance: plannedInstance(plan) });
  const files = await manifestFiles(manifests, planDigest(plan));
  await writeManifestFiles(options.outDir, files);
  const logger = new Logger(options.sink, environment.redactor);
  for (const f of files) logger.info(`wrote ${f.name}: ${f.object.kind} ${f.object.metadata.name}`);
  warnOfUnhonoured(manifests, logger);
  if (manifests.missingSecrets.length > 0) {
    logger.warn(
      `no value was given for ${manifests.missingSecrets.join(', ')}: secret.yaml does not hold ${manifests.missingSecrets.length === 1 ? 'it' : 'them'}, and the Pods do not start until the Secret does (--env NAME with the value in runplan's environment, --app-env-file FILE, or edit secret.yaml).`,
    );
  }
  return { plan, image, host, manifests, files };
}

/** The manifests of a carried plan and its image, named after the application's directory unless named otherwise. */
export function planManifests(
  carried: Pick<PlanToCarryOut, 'environment'> & { readonly lowered: LoweredPlan },
  image: string,
  options: Pick<KubernetesExportOptions, 'appDir' | 'appName' | 'namespace' | 'replicas'> & { readonly instance: InstanceSize },
): KubernetesManifests {
  const { lowered, environment } = carried;
  const { plan } = lowered;
  return manifestsOfLowered(lowered, {
    image,
    appName: options.appName ?? appName(options.appDir, plan.app.folder),
    instance: options.instance,
    secretValues: secretVariables(plan, environment),
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(options.replicas ? { replicas: options.replicas } : {}),
  });
}

/** What the manifests cannot honour of the plan, said as warnings (never silently different). */
function warnOfUnhonoured(manifests: KubernetesManifests, logger: Logger): void {
  for (const w of manifests.warnings) logger.warn(`${w.code}: ${w.message} Fix: ${w.fix}`);
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
