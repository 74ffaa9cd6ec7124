import { createHash } from 'node:crypto';
import type { PlannedProcess } from '../../plan/schema.js';
import { DEPLOYMENT_LABEL, MANAGED_LABEL, PROCESS_LABEL } from '../docker-runner.js';
import { labelArgs } from '../docker-cli.js';
import type { LoweredPlan } from '../../lowering/lower.js';
import type { ResourceLimits } from '../../sandbox/cgroups.js';

/** Labels of swarm objects besides the shared ones: which engine made them, and the specification a service or task carries. */
export const ENGINE_LABEL = 'io.runplan.engine';
const ROLE_LABEL = 'io.runplan.role';
/** On a service: the hash of everything runplan sets on it; unchanged, a redeploy leaves the service alone. */
export const SPEC_LABEL = 'io.runplan.spec';
/** On the containers of a service (so on each task): the hash of the task's part; tasks carrying the new one are the updated ones. */
export const TASK_SPEC_LABEL = 'io.runplan.task-spec';
/** On a service: the other networks runplan attached it to (comma-separated), so an update knows which to remove. */
const NETWORKS_LABEL = 'io.runplan.networks';

/** A file mounted into a service's tasks from a swarm secret or config. */
interface Mount {
  readonly source: string;
  readonly target: string;
}

/** Everything runplan decides about one swarm service, from which both `service create` and `service update` arguments are made. */
export interface ServiceSpec {
  readonly name: string;
  /** `process`: one process of the plan (or a group); `proxy`: the nginx in front of the web service. */
  readonly role: 'process' | 'proxy';
  /** The plan's process (the group's main process); empty for the proxy. */
  readonly process: string;
  readonly image: string;
  /** What makes the image's content part of the task's specification when its tag did not change (an image id). */
  readonly imageId: string;
  /** Replaces the image's entrypoint (the proxy runs nginx from the stack image). */
  readonly entrypoint?: string;
  /** The image's CMD: the process name, or `--group MAIN HELPER…`. */
  readonly args: readonly string[];
  readonly user?: string;
  readonly replicas: number;
  /** A host-mode published port (the routing mesh needs IPVS). */
  readonly publish?: number;
  /** `image`: the image's HEALTHCHECK (swarm counts a task as running once healthy); `none`: workers, which serve no port. */
  readonly health: 'image' | 'none';
  readonly secrets: readonly Mount[];
  readonly configs: readonly Mount[];
  readonly restart: { readonly condition: 'any' | 'on-failure' | 'none'; readonly delayMs: number };
  readonly stopGraceMs: number;
  readonly stopSignal?: string;
  /** start-first keeps the old tasks serving until the new one is healthy; a host-mode port cannot be bound twice, so the proxy stops first. */
  readonly updateOrder: 'start-first' | 'stop-first';
  readonly sysctls: Readonly<Record<string, string>>;
  /** Networks the tasks join besides the application's own (existing attachable overlays, such as a host's add-on servers'). */
  readonly networks: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  /** What each task may use: its instance (memory, CPU, processes and threads). The proxy has none. */
  readonly limits?: ResourceLimits;
}

/** The application's objects: the proxy is named after the application (src/engines/app-name.ts: what users reach), each process `<app>-<process>`. */
export function swarmNames(app: string) {
  return {
    network: `${app}-net`,
    proxy: app,
    service: (process: string) => `${app}-${process.toLowerCase().replace(/[^a-z0-9-]+/g, '-')}`,
  };
}

/** Labels every swarm object of the application carries; removal filters on them. */
export function appLabels(app: string): Record<string, string> {
  return { [MANAGED_LABEL]: 'true', [ENGINE_LABEL]: 'swarm', [DEPLOYMENT_LABEL]: app };
}

const RESTART: Readonly<Record<PlannedProcess['restart']['policy'], ServiceSpec['restart']['condition']>> = { always: 'any', 'on-failure': 'on-failure', never: 'none' };

export interface ProcessServiceInput {
  readonly app: string;
  /** The plan lowered for an image: one service per process group. */
  readonly lowered: LoweredPlan;
  readonly image: string;
  readonly imageId: string;
  readonly replicas: number;
  /** Secret variable name → the swarm secret holding its value. */
  readonly secrets: Readonly<Record<string, string>>;
  /** Networks the processes join besides the application's own. */
  readonly networks?: readonly string[];
  /** Each task's instance (the plan's host instance): its memory, CPU and processes. */
  readonly limits?: ResourceLimits;
}

/** One service per process group: web with `replicas` tasks and the image's health check, workers with one task each. */
export function processServices(input: ProcessServiceInput): ServiceSpec[] {
  const names = swarmNames(input.app);
  return input.lowered.groups.map(({ main, helpers }) => {
    const members = [main, ...helpers];
    const web = members.some((m) => m.role === 'web');
    return {
      name: names.service(main.name),
      role: 'process',
      process: main.name,
      image: input.image,
      imageId: input.imageId,
      args: helpers.length > 0 ? ['--group', main.name, ...helpers.map((h) => h.name)] : [main.name],
      replicas: web ? input.replicas : 1,
      health: web ? 'image' : 'none',
      // Mounted at /run/secrets/NAME: the image's entrypoint exports each as the variable NAME.
      secrets: Object.entries(input.secrets).map(([variable, source]) => ({ source, target: variable })),
      configs: [],
      // Swarm waits a fixed delay between restarts; the plan's backoff doubles it (swarm has no backoff).
      restart: { condition: RESTART[main.restart.policy], delayMs: main.restart.initialDelayMs },
      stopGraceMs: Math.max(...members.map((m) => m.stopGraceMs)),
      updateOrder: 'start-first',
      sysctls: {},
      networks: input.networks ?? [],
      ...(input.limits ? { limits: input.limits } : {}),
      labels: { ...appLabels(input.app), [ROLE_LABEL]: web ? 'web' : 'worker', [PROCESS_LABEL]: main.name, ...(input.networks?.length ? { [NETWORKS_LABEL]: input.networks.join(',') } : {}) },
    };
  });
}

/** Where the proxy's configuration is mounted in its task. */
const PROXY_CONFIG_TARGET = '/etc/runplan/nginx.conf';

export function proxyService(input: { app: string; image: string; imageId: string; port: number; config: string }): ServiceSpec {
  return {
    name: swarmNames(input.app).proxy,
    role: 'proxy',
    process: '',
    image: input.image,
    imageId: input.imageId,
    entrypoint: '/usr/sbin/nginx',
    args: ['-e', 'stderr', '-c', PROXY_CONFIG_TARGET],
    user: '1000:1000',
    replicas: 1,
    publish: input.port,
    health: 'none',
    secrets: [],
    configs: [{ source: input.config, target: PROXY_CONFIG_TARGET }],
    restart: { condition: 'any', delayMs: 1000 },
    stopGraceMs: 10_000,
    // nginx finishes the requests in flight on SIGQUIT.
    stopSignal: 'SIGQUIT',
    updateOrder: 'stop-first',
    // A non-root nginx may bind a port below 1024 in its own network namespace.
    sysctls: input.port < 1024 ? { 'net.ipv4.ip_unprivileged_port_start': '0' } : {},
    networks: [],
    labels: { ...appLabels(input.app), [ROLE_LABEL]: 'proxy' },
  };
}

function hash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

/** The hash of what the tasks run (image content included): when it changes, swarm replaces the tasks. */
export function taskHash(spec: ServiceSpec, network: string): string {
  const { name: _n, replicas: _r, publish: _p, updateOrder: _u, labels: _l, ...task } = spec;
  return hash({ ...task, network });
}

/** The hash of the whole service. */
export function serviceHash(spec: ServiceSpec, network: string): string {
  return hash({ ...spec, network });
}

const ms = (value: number) => `${value}ms`;

/** A word for the docker CLI's shell-word options (`--args`, `--entrypoint`). */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function settings(spec: ServiceSpec, network: string, update: boolean): string[] {
  const containerLabels = { ...spec.labels, [TASK_SPEC_LABEL]: taskHash(spec, network), 'io.runplan.image-id': spec.imageId };
  return [
    ...labelArgs({ ...spec.labels, [SPEC_LABEL]: serviceHash(spec, network) }, update ? '--label-add' : '--label'),
    ...labelArgs(containerLabels, update ? '--container-label-add' : '--container-label'),
    '--replicas',
    String(spec.replicas),
    '--restart-condition',
    spec.restart.condition,
    '--restart-delay',
    ms(spec.restart.delayMs),
    '--restart-max-attempts',
    '0',
    '--stop-grace-period',
    ms(spec.stopGraceMs),
    ...(spec.stopSignal ? ['--stop-signal', spec.stopSignal] : []),
    // One task at a time, rolled back as soon as one fails (exits, or never becomes healthy).
    '--update-order',
    spec.updateOrder,
    '--update-parallelism',
    '1',
    '--update-delay',
    '0s',
    '--update-failure-action',
    'rollback',
    '--update-monitor',
    '5s',
    '--rollback-order',
    spec.updateOrder,
    '--rollback-parallelism',
    '1',
    '--rollback-monitor',
    '5s',
    ...(spec.health === 'none' ? ['--no-healthcheck'] : []),
    ...(spec.user ? ['--user', spec.user] : []),
    // No capability: the processes run as the image's user, which needs none (a port below 1024 has its sysctl).
    '--cap-drop',
    'ALL',
    ...(spec.limits ? ['--limit-cpu', String(spec.limits.cpus), '--limit-memory', `${spec.limits.memoryMb}M`, '--limit-pids', String(spec.limits.processes)] : []),
    ...(spec.entrypoint ? ['--entrypoint', shellWord(spec.entrypoint)] : []),
  ];
}

const secretMount = (m: Mount) => `source=${m.source},target=${m.target},uid=1000,gid=1000,mode=0400`;
const configMount = (m: Mount) => `source=${m.source},target=${m.target},mode=0444`;
const hostPort = (port: number) => `mode=host,target=${port},published=${port},protocol=tcp`;

/**
 * `docker service create` arguments. Every service is on the application's
 * overlay network with DNS round robin: without IPVS (NOTES.md) there are no
 * virtual IPs, and the proxy resolves the tasks' addresses itself.
 */
export function createArgs(spec: ServiceSpec, network: string, resolveImage: boolean): string[] {
  return [
    'service',
    'create',
    '--detach',
    '--name',
    spec.name,
    '--network',
    network,
    ...spec.networks.flatMap((n) => ['--network', n]),
    '--endpoint-mode',
    'dnsrr',
    ...settings(spec, network, false),
    ...(spec.publish ? ['--publish', hostPort(spec.publish)] : []),
    ...spec.secrets.flatMap((m) => ['--secret', secretMount(m)]),
    ...spec.configs.flatMap((m) => ['--config', configMount(m)]),
    ...Object.entries(spec.sysctls).flatMap(([k, v]) => ['--sysctl', `${k}=${v}`]),
    ...(resolveImage ? [] : ['--no-resolve-image']),
    spec.image,
    ...spec.args,
  ];
}

/** What a service has now that `service update` must remove by name. */
export interface CurrentService {
  readonly secrets: readonly string[];
  readonly configs: readonly string[];
  readonly publishedTargets: readonly number[];
  readonly sysctls: readonly string[];
  /** Its labels: which other networks runplan attached it to. */
  readonly labels: Readonly<Record<string, string>>;
}

/** `docker service update` arguments that make the service `spec`, whatever it was (the network, named alike, stays). */
export function updateArgs(spec: ServiceSpec, network: string, current: CurrentService, resolveImage: boolean): string[] {
  const secrets = spec.secrets.map((m) => m.source);
  const configs = spec.configs.map((m) => m.source);
  return [
    'service',
    'update',
    '--detach',
    '--image',
    spec.image,
    `--args=${spec.args.map(shellWord).join(' ')}`,
    ...settings(spec, network, true),
    // Secrets and configs are immutable: a changed value is a new object, swapped in by name.
    ...current.secrets.filter((s) => !secrets.includes(s)).flatMap((s) => ['--secret-rm', s]),
    ...spec.secrets.filter((m) => !current.secrets.includes(m.source)).flatMap((m) => ['--secret-add', secretMount(m)]),
    ...current.configs.filter((c) => !configs.includes(c)).flatMap((c) => ['--config-rm', c]),
    ...spec.configs.filter((m) => !current.configs.includes(m.source)).flatMap((m) => ['--config-add', configMount(m)]),
    ...current.publishedTargets.filter((t) => t !== spec.publish).flatMap((t) => ['--publish-rm', String(t)]),
    ...(spec.publish && !current.publishedTargets.includes(spec.publish) ? ['--publish-add', hostPort(spec.publish)] : []),
    ...current.sysctls.filter((k) => !(k in spec.sysctls)).flatMap((k) => ['--sysctl-rm', k]),
    ...Object.entries(spec.sysctls).flatMap(([k, v]) => ['--sysctl-add', `${k}=${v}`]),
    ...attachedNetworks(current)
      .filter((n) => !spec.networks.includes(n))
      .flatMap((n) => ['--network-rm', n]),
    ...spec.networks.filter((n) => !attachedNetworks(current).includes(n)).flatMap((n) => ['--network-add', n]),
    ...(resolveImage ? [] : ['--no-resolve-image']),
    spec.name,
  ];
}

/** The networks besides the application's that runplan attached a service to. */
function attachedNetworks(current: CurrentService): string[] {
  return (current.labels[NETWORKS_LABEL] ?? '').split(',').filter(Boolean);
}
