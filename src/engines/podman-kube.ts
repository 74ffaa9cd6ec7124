import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HealthChecker, HealthReport, HealthTarget, RunningApp } from '../executor/contract.js';
import type { Built, Executor, ExecutorBuildOptions, ExecutorStartOptions, HookRunOptions } from '../executor/contract.js';
import type { LoweredStep } from '../lowering/lower.js';
import { deploy } from '../executor/deploy-flow.js';
import type { Logger, LogSink } from '../log/logger.js';
import type { PlanWarning, RunPlan } from '../plan/schema.js';
import { planToCarryOut, type PlanToCarryOut } from '../planning/plan-to-carry-out.js';
import type { Clock } from '../time/clock.js';
import { ContainerExits, type ContainerEvent } from './container-exits.js';
import { DockerCli } from './docker-cli.js';
import { containerHealthTarget, portAnswers, runImageHook } from './docker-runner.js';
import { buildImage, type BuiltImage, type ImageOptions } from './image/build-image.js';
import { unhonouredRestartDelays } from './restart-delays.js';
import { unhonouredRestarts, type K8sObject, type KubernetesManifests } from './kubernetes.js';
import { planManifests } from './kubernetes-export.js';
import { appName } from './app-name.js';
import { processesApart } from '../lowering/process-groups.js';
import { PODMAN_NETWORK, PodmanCli } from './podman-cli.js';

export interface PodmanKubeOptions extends Omit<ImageOptions, 'out' | 'oci'> {
  /** Where the deployment's lines go: the deploy flow's logger writes them, the image build's included. */
  readonly sink: LogSink;
  /**
   * The podman to play the manifests with. Default: one of the deployment's
   * own (its storage in a new temporary directory), removed with everything
   * in it when the deployment stops or fails. A podman given is left as it
   * was found, but for the image loaded into it.
   */
  readonly podman?: PodmanCli;
  readonly clock?: Clock;
  readonly healthChecker?: HealthChecker;
}

export interface PodmanKubeDeployment extends BuiltImage {
  readonly running: RunningApp;
  readonly health: HealthReport;
  stop(): Promise<void>;
}

type PodmanKubeBuild = BuiltImage &
  Built & {
    readonly podman: PodmanCli;
    /** Whether the podman (its storage) is the deployment's own, to remove with it. */
    readonly ownPodman: boolean;
    /** The image as podman names it. */
    readonly image: string;
    readonly manifests: KubernetesManifests;
    readonly state: { accepted: boolean };
  };

/**
 * What the Kubernetes mapping of a plan cannot honour under `podman kube
 * play`, declared here and said as warnings when a plan needs it (never
 * silently different). docs/engines.md, "podman kube play", says why.
 */
export const PODMAN_KUBE_UNHONOURED = [
  {
    case: 'worker restart policy other than always, and restart delays',
    reason: 'the Pods of a Deployment only allow restartPolicy Always; podman restarts a process at once after every exit (RUNPLAN_W_K8S_WORKER_RESTART)',
  },
  { case: 'replicas of the web process', reason: 'its port is bound on the host, which one Pod only can do: the web group runs one replica' },
  { case: 'probes after the deployment is accepted', reason: 'podman runs probes from systemd timers; without systemd the health gate of the deploy flow is the only check' },
] as const;

/**
 * `runplan deploy --engine podman`: the one deploy flow with the Kubernetes
 * executor. A failed deployment leaves no pod, container, volume or secret.
 */
export async function deployToPodman(options: PodmanKubeOptions): Promise<PodmanKubeDeployment> {
  const { built, running, health } = await deploy(await planToCarryOut(options), new PodmanKubeExecutor(options), options);
  const { podman: _podman, image: _image, logger: _logger, manifests: _manifests, state: _state, ownPodman: _own, ...image } = built;
  return { ...image, running, health, stop: () => running.stop() };
}

/**
 * Kubernetes as an executor, carried out for real by `podman kube play`: the
 * plan built as an image (the Docker engine builds it, as for DockerExecutor)
 * and loaded into podman; the plan's manifests (kubernetesManifests, the same
 * `runplan k8s` writes) played with the web port bound on 127.0.0.1 as a
 * hostPort; processes and exits from podman's events; stop = `podman kube
 * down` and the removal of what the deployment made; the outcome hooks in a
 * throw-away container of the image.
 */
export class PodmanKubeExecutor implements Executor<PodmanKubeBuild> {
  readonly name = 'podman';

  constructor(private readonly options: Omit<PodmanKubeOptions, 'sink'>) {}

  async build(toCarryOut: PlanToCarryOut, { signal, logger }: ExecutorBuildOptions): Promise<PodmanKubeBuild> {
    const docker = this.options.docker ?? (await DockerCli.connect());
    const built = await buildImage({ ...this.options, docker, logger, ...(signal ? { signal } : {}) }, toCarryOut);
    const podman = this.options.podman ?? (await PodmanCli.create());
    const ownPodman = this.options.podman === undefined;
    try {
      const image = await loadImage(docker, podman, built.tag as string, logger);
      // Named apart from every other deployment: what stop() removes is exactly what this one made.
      const folder = appName(this.options.appDir, built.plan.app.folder).slice(0, 30);
      const manifests = planManifests(built, image, { appDir: this.options.appDir, appName: `${folder}-${randomBytes(3).toString('hex')}`, replicas: 1, instance: built.host.instance });
      return { ...built, podman, ownPodman, image, logger, manifests, state: { accepted: false } };
    } catch (error) {
      if (ownPodman) await podman.remove();
      throw error;
    }
  }

  unhonoured(plan: RunPlan): PlanWarning[] {
    return [...unhonouredRestarts(plan), ...unhonouredRestartDelays(plan, 'podman', 'no wait at all', ['always']), ...processesApart(plan, 'Kubernetes', 'groups')];
  }

  portInUse(built: PodmanKubeBuild): Promise<boolean> {
    return portAnswers(built.plan.healthCheck.port);
  }

  async start(built: PodmanKubeBuild, _options: ExecutorStartOptions): Promise<RunningApp> {
    const { podman, plan, logger, manifests } = built;
    const app = manifests.deployments[0]?.metadata.labels['io.runplan.deployment'] as string;
    const file = join(podman.dir, `${app}.yaml`);
    const containers = playedContainers(manifests);
    const pods = [...new Set([...containers.values()].map((c) => c.pod))];
    const secretName = manifests.secret?.metadata.name;
    const exits = new ContainerExits(podman, plan, logger, 'podman restarts it at once, without back-off');
    const followers: AbortController[] = [];
    const follow = (args: string[], line: (text: string, stream: 'stdout' | 'stderr') => void) => {
      const controller = new AbortController();
      followers.push(controller);
      void podman.stream(args, line, { signal: controller.signal });
    };
    let stopped: Promise<void> | undefined;
    const stop = () =>
      (stopped ??= (async () => {
        exits.stopping = true;
        const grace = Math.max(...plan.processes.map((p) => Math.ceil(p.stopGraceMs / 1000)));
        logger.info(`stopping pod${pods.length === 1 ? '' : 's'} ${pods.join(', ')} (SIGTERM, then SIGKILL after ${grace} s)`);
        await podman.run(['pod', 'stop', '--ignore', '--time', String(grace), ...pods]);
        await podman.run(['kube', 'down', file]);
        for (const f of followers) f.abort();
        // What kube down leaves when play failed half-way: the pods by name, the Secret made for them.
        await podman.run(['pod', 'rm', '--ignore', '--force', ...pods]);
        if (secretName !== undefined) await podman.run(['secret', 'rm', secretName]);
        await rm(file, { force: true });
        if (built.state.accepted) await this.finish(built);
      })());

    // The engine's own clock: events since just before the play, so that none is missed.
    const since = new Date(Date.now() - 1000).toISOString();
    follow(['events', '--since', since, '--format', 'json', '--filter', 'type=container'], (line) => {
      const event = podmanEvent(line, containers);
      if (event) void exits.seen(event);
    });
    try {
      if (manifests.secret && secretName !== undefined) {
        // From a file only root reads, in podman's own directory, removed at once: a value never reaches a command line.
        // (Not standard input: podman reads `-` only from a named pipe, and a program's input here is a socket.)
        const secretFile = join(podman.dir, `${secretName}.secret`);
        await writeFile(secretFile, podmanSecret(manifests.secret.stringData as Record<string, string>), { mode: 0o600 });
        try {
          await podman.ok(['secret', 'create', secretName, secretFile]);
        } finally {
          await rm(secretFile, { force: true });
        }
      }
      await writeFile(file, await podmanManifest(manifests, plan));
      await podman.ok(['kube', 'play', ...PODMAN_NETWORK, file]);
      for (const [name, { process }] of containers) {
        logger.info(`started ${process} (container ${name})`);
        follow(['logs', '--follow', name], (line, stream) => logger.emit({ kind: 'process', name: process, stream }, line, stream === 'stderr' ? 'warn' : 'info'));
      }
    } catch (error) {
      await stop();
      throw error;
    }
    return {
      processes: () => plan.processes.map((p) => ({ name: p.name, pid: undefined, restarts: exits.restartsOf(p.name), running: !exits.stopping && exits.runningOf(p.name) })),
      stop,
      onExit: (listener) => exits.listen(listener),
    };
  }

  healthTarget(built: PodmanKubeBuild): HealthTarget {
    // slirp4netns accepts connections on the host port before the application listens: "accepts connections" is an HTTP answer.
    return containerHealthTarget(built.plan);
  }

  runHook(built: PodmanKubeBuild, hook: LoweredStep, { signal, timeoutMs }: HookRunOptions): Promise<void> {
    return runImageHook(built.podman, built.image, built.plan, built.environment, hook, built.logger, { timeoutMs, signal, runArgs: PODMAN_NETWORK });
  }

  async accept(built: PodmanKubeBuild): Promise<{ settled: Promise<void> }> {
    // Nothing is replaced: each deployment has pods of its own; its storage goes when it stops.
    built.state.accepted = true;
    return { settled: Promise.resolve() };
  }

  discard(built: PodmanKubeBuild): Promise<void> {
    return this.finish(built);
  }

  /** The deployment's own podman goes with it (after its failed hooks, which need its image). */
  private async finish(built: PodmanKubeBuild): Promise<void> {
    if (!built.ownPodman) return;
    const left = await built.podman.remove();
    if (left.length > 0) built.logger.warn(`podman left ${left.join(', ')} (busy); remove ${left.length === 1 ? 'it' : 'them'} once free`);
  }
}

/** The image, built by the Docker engine, loaded into podman under a name with a registry (podman resolves no short name). */
async function loadImage(docker: DockerCli, podman: PodmanCli, tag: string, logger: Logger): Promise<string> {
  const local = podmanImageName(tag);
  const archive = join(podman.dir, `image-${randomBytes(4).toString('hex')}.tar`);
  logger.info(`loading image ${tag} into podman as ${local}`);
  if (local !== tag) await docker.ok(['tag', tag, local]);
  try {
    await docker.ok(['save', '-o', archive, local]);
    await podman.ok(['load', '--quiet', '--input', archive]);
  } finally {
    await rm(archive, { force: true });
    if (local !== tag) await docker.run(['rmi', local]);
  }
  return local;
}

/** An image name podman looks up as it is: one whose first component names a registry, else under localhost/. */
export function podmanImageName(tag: string): string {
  const first = tag.split('/')[0] as string;
  return tag.includes('/') && (first === 'localhost' || first.includes('.') || first.includes(':')) ? tag : `localhost/${tag}`;
}

/** The Secret's values as podman's kube play reads a secret named by secretKeyRef: a JSON object of base64 values. */
export function podmanSecret(values: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')])));
}

/**
 * The Deployments as podman 4.3 plays them: its `kube play` has no
 * `--publish`, so the web port is bound on 127.0.0.1 as a hostPort; the Secret
 * is made apart (podman reads the Secret kind into a form its secretKeyRef
 * cannot read).
 */
export async function podmanManifest(manifests: KubernetesManifests, plan: RunPlan): Promise<string> {
  const { stringify } = await import('yaml');
  const port = plan.healthCheck.port;
  const deployments = manifests.deployments.map((d) => {
    const object = structuredClone(d);
    for (const c of podTemplate(object).spec.containers) {
      if (c.ports) c.ports = c.ports.map((p) => (p.name === 'http' ? { ...p, hostIP: '127.0.0.1', hostPort: port } : p));
    }
    return object;
  });
  return deployments.map((d) => stringify(d, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
}

interface PodContainer {
  name: string;
  args: string[];
  ports?: { name: string; containerPort: number; [field: string]: unknown }[];
}
const podTemplate = (d: K8sObject) => (d.spec as { template: { spec: { containers: PodContainer[] } } }).template;

/** The containers podman makes of the Deployments (one Pod each, "<deployment>-pod-0"), and the process each runs. */
export function playedContainers(manifests: KubernetesManifests): Map<string, { pod: string; process: string }> {
  const out = new Map<string, { pod: string; process: string }>();
  for (const d of manifests.deployments) {
    const pod = `${d.metadata.name}-pod-0`;
    for (const c of podTemplate(d).spec.containers) out.set(`${pod}-${c.name}`, { pod, process: c.args[0] as string });
  }
  return out;
}

interface PodmanEvent {
  readonly Name?: string;
  readonly Status?: string;
  readonly Time?: string;
  readonly ContainerExitCode?: number;
}

/** A line of `podman events --format json` as a start or exit of one of the deployment's containers. */
export function podmanEvent(line: string, containers: ReadonlyMap<string, { process: string }>): ContainerEvent | undefined {
  let event: PodmanEvent;
  try {
    event = JSON.parse(line) as PodmanEvent;
  } catch {
    return undefined;
  }
  const played = event.Name === undefined ? undefined : containers.get(event.Name);
  const action = event.Status === 'start' ? 'start' : event.Status === 'died' ? 'die' : undefined;
  if (!played || !action) return undefined;
  return { process: played.process, container: event.Name, action, timeNs: eventTimeNs(event.Time), exitCode: action === 'die' ? event.ContainerExitCode : undefined };
}

/** "2026-11-26T01:53:59.435950721Z" in nanoseconds since the epoch (Date keeps milliseconds only). */
function eventTimeNs(time: string | undefined): number | undefined {
  if (time === undefined) return undefined;
  const ms = Date.parse(time);
  if (Number.isNaN(ms)) return undefined;
  const fraction = /\.(\d+)/.exec(time)?.[1] ?? '';
  return Math.floor(ms / 1000) * 1e9 + Number(fraction.padEnd(9, '0').slice(0, 9));
}
