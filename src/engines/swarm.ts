import type { LoweredPlan } from '../lowering/lower.js';
import { lowerForImage } from './image/scripts.js';
import type { HealthChecker, HealthReport, HealthTarget, RunningApp } from '../executor/contract.js';
import type { Environment } from '../env/assemble.js';
import { CoreErrors } from '../errors/core-errors.js';
import type { Built, Executor, ExecutorBuildOptions, ExecutorStartOptions, HookRunOptions } from '../executor/contract.js';
import type { LoweredStep } from '../lowering/lower.js';
import { deploy } from '../executor/deploy-flow.js';
import { processesApart } from '../lowering/process-groups.js';
import type { Logger, LogSink } from '../log/logger.js';
import { planDigest } from '../plan/digest.js';
import type { PlanWarning, RunPlan } from '../plan/schema.js';
import { planToCarryOut, type PlanToCarryOut } from '../planning/plan-to-carry-out.js';
import { systemClock, type Clock } from '../time/clock.js';
import { instanceLimits } from '../sandbox/sandbox.js';
import { appName } from './app-name.js';
import { DockerCli } from './docker-cli.js';
import { containerHealthTarget, portAnswers, runImageHook } from './docker-runner.js';
import { buildImage, type ImageOptions } from './image/build-image.js';
import { inspectService } from './swarm/converge.js';
import { DEPLOYMENT_IMAGE_LABEL, removeSwarmApp } from './swarm/objects.js';
import { SwarmRelease } from './swarm/release.js';
import { swarmNames } from './swarm/services.js';

export { removeSwarmApp };

export interface SwarmDeployOptions extends Omit<ImageOptions, 'out' | 'oci'> {
  /** Where the deployment's lines go: the deploy flow's logger writes them, the image build's included. */
  readonly sink: LogSink;
  /** Tasks of the web service (default 2: with one, an update has a moment with a single address). */
  readonly replicas?: number;
  /** An image already built from this plan (`runplan image`, pushed where every node pulls from); default: build it. */
  readonly image?: string;
  /** The application's name in the swarm and in its image's default tag; default its directory's name, or its folder's with APP_FOLDER (src/engines/app-name.ts). */
  readonly name?: string;
  /** Attachable overlay networks the application's processes join besides its own, which must exist (a host's add-on servers', say): their servers are then reached by service name. */
  readonly networks?: readonly string[];
  /**
   * The port the application's proxy publishes on each node (default: the
   * plan's port). The web processes listen on the plan's port in their own
   * containers (8080 for a host that gives every release that port, as the
   * specification says); the proxy, in front, listens here.
   */
  readonly publishPort?: number;
  /** Clock of the waits: convergence, the stability window, the health check's retries. */
  readonly clock?: Clock;
  readonly healthChecker?: HealthChecker;
}

export interface SwarmDeployment {
  readonly plan: RunPlan;
  readonly digest: string;
  readonly environment: Environment;
  readonly app: string;
  readonly image: string;
  /** Every service of the application, the proxy last. */
  readonly services: readonly string[];
  /** The services this deployment created or updated (the others were already as planned). */
  readonly changed: readonly string[];
  readonly health: HealthReport;
  readonly url: string | undefined;
}

/** The engine must be a manager of an active swarm; returns how many nodes the swarm has. */
async function swarmNodes(docker: DockerCli): Promise<number> {
  const info = (await docker.ok(['info', '--format', '{{.Swarm.LocalNodeState}}|{{.Swarm.ControlAvailable}}|{{.Swarm.Nodes}}'])).trim();
  const [state, manager, nodes] = info.split('|');
  if (state !== 'active' || manager !== 'true') {
    throw CoreErrors.SWARM_NOT_MANAGER.create({
      message: `the Docker engine${process.env.DOCKER_HOST ? ` at ${process.env.DOCKER_HOST}` : ''} is ${state === 'active' ? 'a worker of a swarm, not a manager' : `not in a swarm (swarm state: ${state || 'unknown'})`}.`,
      variable: 'DOCKER_HOST',
    });
  }
  return Number(nodes) || 1;
}

interface ImageChoice {
  readonly image: string;
  readonly imageId: string;
  /** Whether swarm should pin the image's registry digest (an image only this engine has is in no registry). */
  readonly resolve: boolean;
  /** Whether runplan built the image under its default tag: the application's older images are runplan's to remove. */
  readonly ownImages: boolean;
  /** The plan lowered for an image: by the image's build, or here for an image given. */
  readonly lowered: LoweredPlan;
}

/** The image to run: the one given (checked against the plan), or the plan's image, built here. */
async function chooseImage(docker: DockerCli, app: string, options: Omit<SwarmDeployOptions, 'sink'>, toCarryOut: PlanToCarryOut, nodes: number, logger: Logger): Promise<ImageChoice> {
  if (options.image === undefined) {
    // Labelled as the application's: its images of earlier deployments are then told from other builds of the same tag's repository.
    const built = await buildImage({ ...options, docker, logger, labels: { ...options.labels, [DEPLOYMENT_IMAGE_LABEL]: app } }, toCarryOut);
    if (nodes > 1) logger.warn(`${built.tag} exists only on this engine: the swarm's other ${nodes - 1} node(s) cannot run it. Push it to a registry every node pulls from and deploy with --image.`);
    return { image: built.tag as string, imageId: built.id as string, resolve: false, ownImages: options.tag === undefined, lowered: built.lowered };
  }
  const { plan } = toCarryOut;
  options.onPlan?.(plan);
  const lowered = lowerForImage(plan);
  const inspected = await docker.run(['image', 'inspect', '--format', '{{.Id}}|{{index .Config.Labels "io.runplan.plan-digest"}}', options.image]);
  if (inspected.code !== 0) {
    logger.info(`${options.image} is not on this engine: the nodes pull it, and its plan digest is not checked here`);
    return { image: options.image, imageId: options.image, resolve: true, ownImages: false, lowered };
  }
  const [id = '', label = ''] = inspected.stdout.trim().split('|');
  const digest = planDigest(plan);
  if (label !== digest) {
    throw CoreErrors.SWARM_IMAGE_MISMATCH.create({
      message: `${options.image} was built from the plan ${label || '(none: not a runplan image)'}, not from the plan being deployed, ${digest}.`,
      details: { image: options.image, imageDigest: label, planDigest: digest },
    });
  }
  // An image here is pinned by its id; its registry digest only matters to other nodes.
  return { image: options.image, imageId: id, resolve: nodes > 1, ownImages: false, lowered };
}

/**
 * `runplan deploy --engine swarm`: the one deploy flow with the Swarm executor.
 * It returns once the deployment is healthy and what earlier ones left is
 * removed; the services keep running. A failed update is rolled back (the
 * previous version serving throughout); a failed first deployment leaves
 * nothing behind.
 */
export async function deployToSwarm(options: SwarmDeployOptions): Promise<SwarmDeployment> {
  const { built, health, settled } = await deploy(await planToCarryOut(options), new SwarmExecutor(options), options);
  await settled;
  const { plan, environment, app, image, release } = built;
  const web = plan.processes.some((p) => p.role === 'web');
  return {
    plan,
    digest: planDigest(plan),
    environment,
    app,
    image,
    services: release.services,
    changed: release.changed,
    health,
    url: web ? `http://127.0.0.1:${options.publishPort ?? plan.healthCheck.port}/` : undefined,
  };
}

type SwarmBuild = Built & {
  readonly docker: DockerCli;
  readonly app: string;
  readonly image: string;
  readonly release: SwarmRelease;
  /** What interrupts the deployment: an interrupted one is left to swarm, which finishes or rolls back what it was doing. */
  readonly signal: AbortSignal | undefined;
};

/**
 * A swarm (a manager's Docker engine at DOCKER_HOST) as an executor: the plan's
 * image (built, or the one given, checked against the plan), an overlay
 * network, one service per process (group) and an nginx proxy publishing the
 * web port on the node. start() creates the services or updates them in place
 * — only those whose specification changed, one task at a time, the new task
 * started and healthy before an old one stops — and waits until swarm has
 * converged; the health gate then reaches the web service through the proxy on
 * 127.0.0.1, watching its tasks' exits (swarm tells none: they are looked at,
 * src/engines/swarm/stability.ts). A deployment that fails is undone: an update
 * rolled back, so the old tasks keep serving; a first one removed. One accepted
 * removes what earlier deployments made and this one no longer uses, and its
 * stop() removes the application from the swarm.
 */
export class SwarmExecutor implements Executor<SwarmBuild> {
  readonly name = 'swarm';

  constructor(private readonly options: Omit<SwarmDeployOptions, 'sink'>) {}

  async build(toCarryOut: PlanToCarryOut, { signal, logger }: ExecutorBuildOptions): Promise<SwarmBuild> {
    const { plan, environment, host } = toCarryOut;
    const docker = this.options.docker ?? (await DockerCli.connect());
    const nodes = await swarmNodes(docker);
    const app = this.options.name ?? appName(this.options.appDir, plan.app.folder);
    const choice = await chooseImage(docker, app, { ...this.options, ...(signal ? { signal } : {}) }, toCarryOut, nodes, logger);
    const release = new SwarmRelease({
      docker,
      app,
      lowered: choice.lowered,
      environment,
      image: choice.image,
      imageId: choice.imageId,
      resolveImage: choice.resolve,
      ownImages: choice.ownImages,
      replicas: this.options.replicas ?? 2,
      networks: this.options.networks ?? [],
      ...(this.options.publishPort === undefined ? {} : { publishPort: this.options.publishPort }),
      // Each task held to the instance the plan was made for, as on this machine (src/sandbox/).
      limits: instanceLimits(host.instance),
      logger,
      clock: this.options.clock ?? systemClock,
    });
    return { plan, lowered: choice.lowered, environment, host, logger, docker, app, image: choice.image, release, signal };
  }

  // One service per process group: what one writes in the application's folder, the others never see.
  unhonoured(plan: RunPlan): PlanWarning[] {
    return processesApart(plan, 'Swarm', 'groups');
  }

  // A redeployment finds its own proxy on the port; a first one must not find another program there.
  async portInUse({ plan, docker, app }: SwarmBuild): Promise<boolean> {
    if (!plan.processes.some((p) => p.role === 'web')) return false;
    if ((await inspectService(docker, swarmNames(app).proxy)) !== undefined) return false;
    return portAnswers(this.options.publishPort ?? plan.healthCheck.port);
  }

  start(built: SwarmBuild, { signal }: ExecutorStartOptions): Promise<RunningApp> {
    return built.release.start(signal);
  }

  // Through the proxy on 127.0.0.1, the port told open by an HTTP answer, as for a container.
  healthTarget(built: SwarmBuild): HealthTarget {
    return containerHealthTarget(built.plan, this.options.publishPort);
  }

  runHook(built: SwarmBuild, hook: LoweredStep, { signal, timeoutMs }: HookRunOptions): Promise<void> {
    return runImageHook(built.docker, built.image, built.plan, built.environment, hook, built.logger, { timeoutMs, signal });
  }

  async accept(built: SwarmBuild): Promise<{ settled: Promise<void> }> {
    return { settled: built.release.accept() };
  }

  async discard(built: SwarmBuild): Promise<void> {
    if (!built.signal?.aborted) await built.release.undo();
  }
}
