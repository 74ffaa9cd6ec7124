import type { PathResult, RunningApp } from '../../executor/contract.js';
import type { Environment } from '../../env/assemble.js';
import { isRunplanError } from '../../errors/runplan-error.js';
import { healthError } from '../../executor/health-gate.js';
import { reportPathResults } from '../../executor/http-health-checker.js';
import { formatSeconds } from '../../health/probes.js';
import type { Logger } from '../../log/logger.js';
import type { LoweredPlan } from '../../lowering/lower.js';
import type { Clock } from '../../time/clock.js';
import type { ResourceLimits } from '../../sandbox/cgroups.js';
import type { DockerCli } from '../docker-cli.js';
import { secretVariables } from '../docker-runner.js';
import { ensureStackImage, STACKS } from '../stack-images.js';
import { inspectService, waitForService, type ServiceInfo } from './converge.js';
import { appFilters, assertOurs, DEPLOYMENT_IMAGE_LABEL, ensureNetwork, ensureObject, removeSwarmApp, removeUnused } from './objects.js';
import { proxyConfig } from './proxy-config.js';
import { createArgs, processServices, proxyService, SPEC_LABEL, serviceHash, swarmNames, taskHash, updateArgs, type ServiceSpec } from './services.js';
import { serviceTasks, TaskExits } from './stability.js';

type Outcome = 'created' | 'updated' | 'unchanged';

export interface ReleaseInput {
  readonly docker: DockerCli;
  /** The application's name in the swarm (src/engines/app-name.ts). */
  readonly app: string;
  /** The plan lowered for an image (IMAGE_BINDINGS): its process groups are the services. */
  readonly lowered: LoweredPlan;
  /** With values: the secret variables become swarm secrets. */
  readonly environment: Environment;
  readonly image: string;
  /** What makes the image's content part of the tasks' specification (its id, or its reference when not on this engine). */
  readonly imageId: string;
  /** Whether swarm pins the image's registry digest. */
  readonly resolveImage: boolean;
  /** Whether runplan built the image (labelled as this application's, under its default tag): an accepted deployment then removes the application's older images. */
  readonly ownImages: boolean;
  /** Tasks of the web service. */
  readonly replicas: number;
  /** Networks the processes join besides the application's own. */
  readonly networks: readonly string[];
  /** The port the proxy publishes on the node, when not the plan's (the web processes listen on the plan's). */
  readonly publishPort?: number;
  /** Each task's instance: its memory, CPU and processes. */
  readonly limits?: ResourceLimits;
  readonly logger: Logger;
  readonly clock: Clock;
}

/**
 * One deployment of an application to a swarm, as the Swarm executor starts,
 * accepts or undoes it: its services created or updated in place (start-first,
 * so the old tasks serve until the new ones are healthy), the exits of its web
 * tasks watched while the deploy flow's health gate runs, and, when it fails,
 * undone — an update rolled back to the previous specification, which keeps
 * serving; a first deployment removed with everything made for it.
 */
export class SwarmRelease {
  private specs: ServiceSpec[] = [];
  private readonly outcome = new Map<string, Outcome>();
  /** Set once start() began changing the swarm: whether the application was in it before. */
  private firstDeployment: boolean | undefined;
  private before: ReadonlySet<string> = new Set();
  private undone: Promise<void> | undefined;
  private settled: Promise<void> | undefined;

  constructor(private readonly input: ReleaseInput) {}

  /** Every service of the application, the proxy last. */
  get services(): string[] {
    return this.specs.map((s) => s.name);
  }

  /** The services this deployment created or updated. */
  get changed(): string[] {
    return [...this.outcome].filter(([, what]) => what !== 'unchanged').map(([name]) => name);
  }

  /**
   * Creates or updates the services and waits until swarm has converged: every
   * service runs its replicas with the new specification (a task with the
   * image's HEALTHCHECK counts once healthy). When it does not, what was
   * started is undone before it rejects — unless `signal` interrupted it, when
   * swarm finishes or rolls back what it was doing.
   */
  async start(signal: AbortSignal | undefined): Promise<RunningApp> {
    try {
      await this.apply(signal);
    } catch (error) {
      if (!signal?.aborted) await this.undo();
      throw error;
    }
    return this.running();
  }

  /** The deployment passed the health gate: what an earlier one made and this one no longer uses goes, off the way to "healthy". */
  accept(): Promise<void> {
    this.settled = this.removeStale();
    return this.settled;
  }

  /**
   * Undoes this deployment once (later calls wait for the first): an update is
   * rolled back, services it added are removed; a first deployment is removed
   * with its network, secrets and configs. Nothing when it changed nothing yet.
   */
  undo(): Promise<void> {
    this.undone ??= this.undoOnce();
    return this.undone;
  }

  private async apply(signal: AbortSignal | undefined): Promise<void> {
    const { docker, app, lowered, environment, logger, clock } = this.input;
    const { plan, web } = lowered;
    const names = swarmNames(app);
    this.firstDeployment = (await docker.ok(['service', 'ls', ...appFilters(app), '--quiet'])).trim() === '';
    const network = await ensureNetwork(docker, app);
    if (network.created) logger.info(`created overlay network ${network.name} (attachable)`);
    const secrets: Record<string, string> = {};
    for (const [variable, value] of Object.entries(secretVariables(plan, environment))) secrets[variable] = await ensureObject(docker, 'secret', app, variable, value);
    const specs = processServices({
      app,
      lowered,
      image: this.input.image,
      imageId: this.input.imageId,
      replicas: this.input.replicas,
      secrets,
      networks: this.input.networks,
      ...(this.input.limits ? { limits: this.input.limits } : {}),
    });
    if (web) {
      const proxyImage = await ensureStackImage(docker, STACKS.proxy!, { log: (line) => logger.emit({ kind: 'step', name: 'stack', stream: 'stdout' }, line) });
      const proxyImageId = (await docker.ok(['image', 'inspect', '--format', '{{.Id}}', proxyImage])).trim();
      const published = this.input.publishPort ?? plan.healthCheck.port;
      const config = await ensureObject(docker, 'config', app, 'proxy', proxyConfig({ upstreamHost: names.service(web.name), port: plan.healthCheck.port, listen: published }));
      specs.push(proxyService({ app, image: proxyImage, imageId: proxyImageId, port: published, config }));
    }
    this.specs = specs;
    const webSpec = this.webSpec();
    if (webSpec) this.before = new Set(await serviceTasks(docker, webSpec.name));

    const existing = new Map<string, ServiceInfo | undefined>();
    for (const spec of specs) existing.set(spec.name, await inspectService(docker, spec.name));
    const started = clock.now();
    // The processes first (swarm starts them in parallel), the proxy once they serve.
    const converge = async (group: ServiceSpec[]) => {
      for (const spec of group) this.outcome.set(spec.name, await this.applyService(spec, network.name, existing.get(spec.name)));
      await Promise.all(
        group.map((spec) =>
          waitForService(docker, spec.name, {
            replicas: spec.replicas,
            taskSpec: taskHash(spec, network.name),
            updated: this.outcome.get(spec.name) === 'updated',
            // Each task may take the plan's ready timeout to become healthy, one after another.
            deadline: clock.now() + spec.replicas * (plan.healthCheck.readyTimeoutMs + 15_000) + 30_000,
            clock,
            logger,
            ...(spec.role === 'process' ? { plan } : {}),
            ...(signal ? { signal } : {}),
          }),
        ),
      );
    };
    await converge(specs.filter((s) => s.role === 'process')).catch((error: unknown) => {
      throw this.asHealthFailure(error);
    });
    await converge(specs.filter((s) => s.role === 'proxy'));
    const changed = this.changed;
    if (changed.length > 0) logger.info(`services converged in ${formatSeconds(clock.now() - started)}: ${changed.join(', ')}`);
  }

  /**
   * A web service that did not converge because the image's health check found a
   * path answering another status (Swarm ran the check: its start-first update
   * waits for it, and rolled back): the gate's own lines and error, as every
   * engine reports a failed health check. Any other failure stays what it is.
   */
  private asHealthFailure(error: unknown): unknown {
    const { lowered, logger } = this.input;
    const { plan } = lowered;
    const details = isRunplanError(error) && error.code === 'RUNPLAN_E_SWARM_NOT_CONVERGED' ? (error.details as { service?: string; healthAnswers?: PathResult[] }) : undefined;
    const answers = details?.healthAnswers ?? [];
    if (plan.healthCheck.kind !== 'http' || answers.length === 0 || details?.service !== this.webSpec()?.name) return error;
    logger.warn(`${details?.service}: its new tasks failed the health check, so swarm did not keep them: ${(error as Error).message}`);
    reportPathResults(answers, logger);
    return healthError({ ok: false, results: answers });
  }

  /** Creates the service, or updates it when what runplan sets on it changed; tells which it did. */
  private async applyService(spec: ServiceSpec, network: string, existing: ServiceInfo | undefined): Promise<Outcome> {
    const { docker, app, logger } = this.input;
    const resolve = spec.role === 'proxy' ? false : this.input.resolveImage;
    if (existing === undefined) {
      await docker.ok(createArgs(spec, network, resolve));
      logger.info(`created service ${spec.name}: ${spec.replicas} task(s) of ${spec.image} (${spec.args.join(' ')})`);
      return 'created';
    }
    assertOurs('service', spec.name, existing.labels, app);
    if (existing.labels[SPEC_LABEL] === serviceHash(spec, network)) {
      logger.info(`service ${spec.name} is already as planned`);
      return 'unchanged';
    }
    await docker.ok(updateArgs(spec, network, existing, resolve));
    logger.info(`updating service ${spec.name} to ${spec.image} (${spec.updateOrder}, one task at a time, rolled back if one fails)`);
    return 'updated';
  }

  /** The service of the web process: the one with the image's health check. */
  private webSpec(): ServiceSpec | undefined {
    return this.specs.find((s) => s.role === 'process' && s.health === 'image');
  }

  /**
   * The deployment as the deploy flow watches and stops it: its web tasks'
   * exits (TaskExits); stop() undoes it before it is accepted, and removes the
   * application from the swarm after.
   */
  private running(): RunningApp {
    const { processes, web } = this.input.lowered;
    const webSpec = this.webSpec();
    const exits = web && webSpec ? new TaskExits({ ...this.input, service: webSpec.name, web, before: this.before }) : undefined;
    let stopped = false;
    return {
      processes: () => processes.map((p) => ({ name: p.name, pid: undefined, restarts: p === web ? (exits?.told ?? 0) : 0, running: !stopped })),
      ...(exits ? { onExit: (listener) => exits.subscribe(listener), refresh: () => exits.look() } : {}),
      // The services are the swarm's: a program that lets go of them only stops watching their tasks.
      detach: async () => {
        exits?.close();
      },
      stop: async () => {
        stopped = true;
        exits?.close();
        if (this.settled === undefined) return this.undo();
        await this.settled;
        await removeSwarmApp(this.input.docker, this.input.app, { log: (line) => this.input.logger.info(line), clock: this.input.clock });
      },
    };
  }

  private async undoOnce(): Promise<void> {
    const { docker, app, logger, clock } = this.input;
    if (this.firstDeployment === undefined) return;
    if (this.firstDeployment) {
      logger.warn(`removing what this first deployment of ${app} created`);
      await removeSwarmApp(docker, app, { log: (line) => logger.info(line), clock });
      return;
    }
    for (const [name, what] of this.outcome) {
      if (what === 'created') {
        logger.warn(`removing service ${name}, which this deployment added`);
        await docker.run(['service', 'rm', name]);
      }
      if (what !== 'updated') continue;
      const info = await inspectService(docker, name);
      if (info?.update?.state.startsWith('rollback')) continue;
      logger.warn(`rolling back ${name} to its previous specification`);
      await docker.run(['service', 'rollback', '--detach', name]);
    }
  }

  /**
   * The application's images of earlier deployments (labelled as its own when they were built), but the one this deployment runs and those its services'
   * previous specifications name (what `docker service rollback` returns to).
   */
  private async removeOldImages(): Promise<void> {
    const { docker, app, ownImages, image, logger } = this.input;
    if (!ownImages) return;
    const previous = await docker.run(['service', 'inspect', '--format', '{{if .PreviousSpec}}{{.PreviousSpec.TaskTemplate.ContainerSpec.Image}}{{end}}', ...this.services]);
    if (previous.code !== 0) return;
    const keep = new Set([image, ...previous.stdout.split('\n').map((line) => line.trim())]);
    const tags = (await docker.ok(['image', 'ls', '--filter', `label=${DEPLOYMENT_IMAGE_LABEL}=${app}`, '--format', '{{.Repository}}:{{.Tag}}']))
      .split('\n')
      .filter((ref) => ref && !ref.endsWith(':<none>') && !keep.has(ref));
    const removed: string[] = [];
    // Forced: Swarm keeps the stopped containers of earlier tasks (its task history), and a plain rm refuses an image they
    // name. The tag goes; the image itself stays until no container names it, and is pruned by a later deployment.
    for (const ref of tags) if ((await docker.run(['image', 'rm', '--force', ref])).code === 0) removed.push(ref);
    await docker.run(['image', 'prune', '--force', '--filter', `label=${DEPLOYMENT_IMAGE_LABEL}=${app}`]);
    if (removed.length > 0) logger.info(`removed images of earlier deployments: ${removed.join(', ')}`);
  }

  // A failure here does not fail a deployment that is already accepted: the next one tries again.
  private async removeStale(): Promise<void> {
    const { docker, app, logger } = this.input;
    try {
      const keep = new Set(this.services);
      const stale = (await docker.ok(['service', 'ls', ...appFilters(app), '--format', '{{.Name}}'])).split('\n').filter((n) => n && !keep.has(n));
      for (const name of stale) {
        await docker.ok(['service', 'rm', name]);
        logger.info(`removed service ${name}: its process is no longer in the plan`);
      }
      const used = new Set(this.specs.flatMap((s) => [...s.secrets, ...s.configs].map((m) => m.source)));
      const removed = await removeUnused(docker, app, used);
      if (removed.length > 0) logger.info(`removed secrets and configs no service uses any more: ${removed.join(', ')}`);
      await this.removeOldImages();
    } catch (error) {
      logger.warn(`could not remove what earlier deployments of ${app} left: ${(error as Error).message}`);
    }
  }
}
