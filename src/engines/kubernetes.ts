import { createHash } from 'node:crypto';
import type { InstanceSize } from '../host/host-settings.js';
import { planDigest } from '../plan/digest.js';
import type { LoweredGroup, LoweredPlan } from '../lowering/lower.js';
import type { PlanWarning, RunPlan } from '../plan/schema.js';
import { unhonouredRestartDelays } from './restart-delays.js';
import { CoreWarnings } from '../errors/core-warnings.js';
import { MANAGED_LABEL, DEPLOYMENT_LABEL } from './docker-runner.js';
import { IMAGE_BINDINGS, IMAGE_SCRIPTS_DIR } from './image/scripts.js';
import { dnsLabel } from './app-name.js';

/**
 * The plan as Kubernetes objects: one Deployment per process group, a Service
 * for the web process, a Secret for the secret variables. Plain data, made from
 * the plan lowered for an image (IMAGE_BINDINGS) and the options only (no
 * cluster, no engine), so that the same plan always gives the same manifests. docs/engines.md, "Kubernetes", says why each
 * field is what it is.
 */

export interface KubernetesOptions {
  /** The application image (`runplan image`), as the cluster pulls it. */
  readonly image: string;
  /** Name of the objects and value of app.kubernetes.io/name: a DNS label (see dnsLabel, src/engines/app-name.ts). */
  readonly appName: string;
  readonly namespace?: string;
  /** Replicas of the web process's group (default 2); the other groups run one each. */
  readonly replicas?: number;
  /** The instance the plan was made for: each Pod gets one (requests and limits). */
  readonly instance: InstanceSize;
  /** Values of secret variables to put in the Secret; the others are only named. */
  readonly secretValues?: Readonly<Record<string, string>>;
}

type Labels = Record<string, string>;
interface Meta {
  name: string;
  namespace?: string;
  labels: Labels;
  annotations?: Labels;
}
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  [field: string]: unknown;
}

export interface KubernetesManifests {
  readonly deployments: readonly K8sObject[];
  readonly service: K8sObject | undefined;
  readonly secret: K8sObject | undefined;
  /** Secret variables of the plan whose value was not given: the Secret lacks them, the Pods wait for them. */
  readonly missingSecrets: readonly string[];
  /** What the manifests cannot honour of the plan (a worker restart policy other than always). */
  readonly warnings: readonly PlanWarning[];
}

/**
 * The Pods of a Deployment only allow restartPolicy Always: a process whose
 * plan says `on-failure` (CC_WORKER_RESTART's default) or `never`
 * (CC_WORKER_RESTART=no) is restarted after any exit, with Kubernetes' own
 * back-off (10 s doubling to 5 min) instead of the plan's delay. Said, not hidden.
 */
/** The processes whose restart policy a Deployment's Pods cannot honour (restartPolicy Always only). */
export function unhonouredRestarts(plan: RunPlan): PlanWarning[] {
  return plan.processes
    .filter((p) => p.restart.policy !== 'always')
    .map((p) =>
      CoreWarnings.K8S_WORKER_RESTART.create({
        message: `process "${p.name}" has restart policy ${p.restart.policy === 'never' ? 'no' : p.restart.policy} (${p.restart.initialDelayMs / 1000} s), but the Pods of a Deployment only allow restartPolicy Always: Kubernetes restarts it after every exit, with its own back-off.`,
        variable: 'CC_WORKER_RESTART',
      }),
    );
}

const DEFAULT_WEB_REPLICAS = 2;
/** Where the image's scripts start processes and check health (src/engines/image). */
const HEALTHCHECK = `${IMAGE_SCRIPTS_DIR}/healthcheck`;
const PROCESS_GROUP_LABEL = 'io.runplan.process-group';
/** Annotations, on the Pod template (a change rolls the Pods) and on the Deployment. */
export const ANNOTATIONS = {
  planDigest: 'io.runplan.plan-digest',
  configChecksum: 'io.runplan.config-checksum',
  healthCheck: 'io.runplan.health-check',
  healthCheckPaths: 'io.runplan.health-check-paths',
  instance: 'io.runplan.instance',
  processes: 'io.runplan.processes',
} as const;
/** The image's non-root user (src/engines/image/dockerfile.ts). */
const APP_UID = 1000;

/**
 * What rolls the Pods when the configuration changes: the plan's digest (its
 * environment, commands, health check…) and the names of the secret variables.
 * Secret values are not in it — they never leave the Secret — so a changed
 * value alone needs `kubectl rollout restart`.
 */
function configChecksum(digest: string, secretVariables: readonly string[]): string {
  const secrets = [...secretVariables].sort();
  return `sha256:${createHash('sha256')
    .update(JSON.stringify({ plan: digest, secrets }))
    .digest('hex')}`;
}

export function manifestsOfLowered(lowered: LoweredPlan, options: KubernetesOptions): KubernetesManifests {
  const { plan } = lowered;
  const app = options.appName;
  const digest = planDigest(plan);
  const common: Labels = { 'app.kubernetes.io/name': app, 'app.kubernetes.io/instance': app, 'app.kubernetes.io/managed-by': 'runplan', [MANAGED_LABEL]: 'true', [DEPLOYMENT_LABEL]: app };
  const meta = (name: string, labels: Labels, annotations?: Labels): Meta => ({
    name,
    ...(options.namespace ? { namespace: options.namespace } : {}),
    labels,
    ...(annotations ? { annotations } : {}),
  });
  const secretName = `${app}-env`;
  const secretVariables = lowered.environment.filter((v) => v.secret).map((v) => v.name);
  const given = options.secretValues ?? {};
  const { groups } = lowered;
  const checksum = configChecksum(digest, secretVariables);
  const deployments = groups.map((group) => deployment(plan, group, { ...options, digest, checksum, common, meta, secretName, variables: lowered.environment }));
  const web = groups.find((g) => g.web !== undefined);
  const port = web?.web?.port ?? undefined;
  const service =
    web && port
      ? {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: meta(app, { ...common, 'app.kubernetes.io/component': 'web' }, { [ANNOTATIONS.planDigest]: digest }),
          spec: { type: 'ClusterIP', selector: selector(common, 'web'), ports: [{ name: 'http', port, targetPort: 'http', protocol: 'TCP' }] },
        }
      : undefined;
  const values = Object.fromEntries(secretVariables.filter((n) => given[n] !== undefined).map((n) => [n, given[n] as string]));
  const secret =
    secretVariables.length > 0 ? { apiVersion: 'v1', kind: 'Secret', metadata: meta(secretName, common, { [ANNOTATIONS.planDigest]: digest }), type: 'Opaque', stringData: values } : undefined;
  return {
    deployments,
    service,
    secret,
    missingSecrets: secretVariables.filter((n) => given[n] === undefined),
    warnings: [...unhonouredRestarts(plan), ...unhonouredRestartDelays(plan, 'Kubernetes', 'its own back-off (10 s, doubling up to 5 min)', ['always'])],
  };
}

/** The labels that pick a group's Pods: stable across plans (a Deployment's selector cannot change). */
function selector(common: Labels, group: string): Labels {
  return { 'app.kubernetes.io/name': common['app.kubernetes.io/name'] as string, 'app.kubernetes.io/instance': common['app.kubernetes.io/instance'] as string, 'app.kubernetes.io/component': group };
}

interface GroupContext extends KubernetesOptions {
  readonly digest: string;
  readonly checksum: string;
  readonly common: Labels;
  readonly meta: (name: string, labels: Labels, annotations?: Labels) => Meta;
  readonly secretName: string;
  /** The plan's variables as every image engine has them (lowerPlan with IMAGE_BINDINGS). */
  readonly variables: LoweredPlan['environment'];
}

function deployment(plan: RunPlan, group: LoweredGroup, ctx: GroupContext): K8sObject {
  const labels = { ...ctx.common, 'app.kubernetes.io/component': group.name, [PROCESS_GROUP_LABEL]: group.name };
  const hc = plan.healthCheck;
  const paths = hc.kind === 'http' ? hc.paths.map((p) => p.path) : [];
  const annotations = {
    [ANNOTATIONS.planDigest]: ctx.digest,
    [ANNOTATIONS.configChecksum]: ctx.checksum,
    [ANNOTATIONS.processes]: group.processes.map((p) => p.name).join(','),
    [ANNOTATIONS.instance]: `${ctx.instance.cpus} CPU, ${ctx.instance.memoryMb} MiB`,
    ...(group.web ? { [ANNOTATIONS.healthCheck]: healthCheckText(plan), [ANNOTATIONS.healthCheckPaths]: JSON.stringify(paths) } : {}),
  };
  const names = containerNames(group);
  const containers = group.processes.map((proc, i) => ({
    name: names[i] as string,
    image: ctx.image,
    imagePullPolicy: 'IfNotPresent',
    // The image's entrypoint starts a process of the plan by name.
    args: [proc.name],
    env: environment(ctx.variables, ctx.secretName),
    ...(proc.role === 'web' && proc.port ? { ports: [{ name: 'http', containerPort: proc.port, protocol: 'TCP' }] } : {}),
    resources: resources(ctx.instance, group.processes.length),
    volumeMounts: [{ name: 'run-dir', mountPath: IMAGE_BINDINGS.RUN_DIR }],
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      // Processes write the plan's run-phase files into /app when they start, and applications write there too.
      readOnlyRootFilesystem: false,
    },
    ...(proc === group.web ? probes(plan, paths) : {}),
  }));
  const grace = Math.max(...group.processes.map((p) => Math.ceil(p.stopGraceMs / 1000)));
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: ctx.meta(`${ctx.appName}-${dnsLabel(group.name)}`, labels, { [ANNOTATIONS.planDigest]: ctx.digest }),
    spec: {
      replicas: group.web ? (ctx.replicas ?? DEFAULT_WEB_REPLICAS) : 1,
      selector: { matchLabels: selector(ctx.common, group.name) },
      // A new Pod must be ready before an old one goes: the application keeps serving through an update.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels, annotations },
        spec: {
          // The processes get the plan's environment and nothing else (no FOO_SERVICE_HOST…), and no API token.
          enableServiceLinks: false,
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: grace,
          securityContext: { runAsUser: APP_UID, runAsGroup: APP_UID, runAsNonRoot: true, fsGroup: APP_UID, seccompProfile: { type: 'RuntimeDefault' } },
          containers,
          // ${RUN_DIR}: private to the Pod, fresh when it starts, shared by its processes (unix sockets).
          volumes: [{ name: 'run-dir', emptyDir: {} }],
        },
      },
    },
  };
}

/** Container names: the process names as DNS labels, unique within the Pod. */
function containerNames(group: LoweredGroup): string[] {
  const seen = new Set<string>();
  return group.processes.map((p) => {
    let name = dnsLabel(p.name).slice(0, 63);
    for (let i = 2; seen.has(name); i++) name = `${dnsLabel(p.name).slice(0, 58)}-${i}`;
    seen.add(name);
    return name;
  });
}

/** The plan's variables, lowered as in the image: values inline, secrets from the Secret by name. */
function environment(variables: LoweredPlan['environment'], secretName: string): unknown[] {
  return variables.map((v) => (v.secret ? { name: v.name, valueFrom: { secretKeyRef: { name: secretName, key: v.name } } } : { name: v.name, value: v.value ?? '' }));
}

/**
 * The instance the plan was sized for (heap limits, Puma workers) is the Pod:
 * it requests one instance, so it is scheduled where one fits. A Pod of one
 * process gets requests = limits (Guaranteed). In a Pod of several (nginx and
 * Puma) the processes share the instance as they do on it: the requests are
 * split, and each may use up to the whole instance.
 */
function resources(instance: InstanceSize, processes: number): unknown {
  const limits = { cpu: String(instance.cpus), memory: `${instance.memoryMb}Mi` };
  if (processes === 1) return { requests: limits, limits };
  return { requests: { cpu: `${Math.floor((instance.cpus * 1000) / processes)}m`, memory: `${Math.floor(instance.memoryMb / processes)}Mi` }, limits };
}

/** Probe timing: the startup probe has the plan's whole ready timeout; afterwards failures count sooner. */
const READINESS = { periodSeconds: 5, failureThreshold: 3 } as const;
/** Longer than readiness: a failing Pod leaves the Service before it is restarted. */
const LIVENESS = { periodSeconds: 10, failureThreshold: 3 } as const;

/**
 * Probes running the image's health check (exec, not httpGet: the plan wants
 * exactly 200 with redirects not followed, httpGet accepts any 2xx or 3xx),
 * with the plan's paths as arguments so that the manifest shows them.
 */
function probes(plan: RunPlan, paths: readonly string[]): Record<string, unknown> {
  const hc = plan.healthCheck;
  const request = Math.max(1, Math.ceil(hc.requestTimeoutMs / 1000));
  const exec = { command: [HEALTHCHECK, ...paths] };
  // The script checks the paths one after the other, each with the plan's request timeout.
  const timeoutSeconds = request * Math.max(1, paths.length);
  const startPeriod = Math.max(1, Math.ceil(hc.retryDelayMs / 1000));
  return {
    startupProbe: { exec, periodSeconds: startPeriod, failureThreshold: Math.max(1, Math.ceil(hc.readyTimeoutMs / 1000 / startPeriod)), timeoutSeconds },
    readinessProbe: { exec, ...READINESS, timeoutSeconds },
    livenessProbe: { exec, ...LIVENESS, timeoutSeconds },
  };
}

function healthCheckText(plan: RunPlan): string {
  const hc = plan.healthCheck;
  return hc.kind === 'http'
    ? `GET ${hc.paths.map((p) => p.path).join(', ')} on port ${hc.port} must answer exactly 200 (redirects not followed)`
    : `port ${hc.port} must answer HTTP (no health-check path is configured)`;
}
