import type { HealthChecker, HealthReport } from '../buildpack/contract.js';
import { healthError, redactError } from '../deploy/deploy.js';
import type { Environment } from '../env/assemble.js';
import { CoreErrors } from '../errors/core-errors.js';
import { formatSeconds } from '../health/probes.js';
import { Logger } from '../log/logger.js';
import { planDigest } from '../plan/digest.js';
import type { RunPlan } from '../plan/schema.js';
import { planToCarryOut } from '../planning/plan-to-carry-out.js';
import type { Clock } from '../time/clock.js';
import { DockerCli } from './docker-cli.js';
import { checkContainerHealth, portAnswers, runImageOutcomeHooks, secretVariables } from './docker-runner.js';
import { buildImage, type ImageOptions } from './image/build-image.js';
import { ensureStackImage, STACKS } from './stack-images.js';
import { inspectService, waitForService, type ServiceInfo } from './swarm/converge.js';
import { appFilters, assertOurs, ensureNetwork, ensureObject, removeSwarmApp, removeUnused } from './swarm/objects.js';
import { proxyConfig } from './swarm/proxy-config.js';
import { createArgs, updateArgs, processGroups, processServices, proxyService, SPEC_LABEL, serviceHash, swarmAppName, swarmNames, taskHash, type ServiceSpec } from './swarm/services.js';

export { removeSwarmApp, swarmAppName };

export interface SwarmDeployOptions extends Omit<ImageOptions, 'out' | 'oci'> {
  /** Tasks of the web service (default 2: with one, an update has a moment with a single address). */
  readonly replicas?: number;
  /** An image already built from this plan (`runplan image`, pushed where every node pulls from); default: build it. */
  readonly image?: string;
  /** The application's name in the swarm; default its directory's name. */
  readonly name?: string;
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
  readonly health: HealthReport | undefined;
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
  readonly plan: RunPlan;
  readonly environment: Environment;
  readonly image: string;
  readonly imageId: string;
  /** Whether swarm should pin the image's registry digest (an image only this engine has is in no registry). */
  readonly resolve: boolean;
}

/** The image to run: the one given (checked against the plan), or the plan's image, built here. */
async function chooseImage(docker: DockerCli, options: SwarmDeployOptions, nodes: number, logger: (plan: RunPlan, env: Environment) => Logger): Promise<ImageChoice> {
  if (options.image === undefined) {
    const built = await buildImage({ ...options, docker });
    if (nodes > 1)
      logger(built.plan, built.environment).warn(
        `${built.tag} exists only on this engine: the swarm's other ${nodes - 1} node(s) cannot run it. Push it to a registry every node pulls from and deploy with --image.`,
      );
    return { plan: built.plan, environment: built.environment, image: built.tag as string, imageId: built.id as string, resolve: false };
  }
  const { plan, environment } = await planToCarryOut(options);
  options.onPlan?.(plan);
  const inspected = await docker.run(['image', 'inspect', '--format', '{{.Id}}|{{index .Config.Labels "io.runplan.plan-digest"}}', options.image]);
  if (inspected.code !== 0) {
    logger(plan, environment).info(`${options.image} is not on this engine: the nodes pull it, and its plan digest is not checked here`);
    return { plan, environment, image: options.image, imageId: options.image, resolve: true };
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
  return { plan, environment, image: options.image, imageId: id, resolve: nodes > 1 };
}

/** Creates the service, or updates it when what runplan sets on it changed; tells which it did. */
async function applyService(
  docker: DockerCli,
  app: string,
  spec: ServiceSpec,
  network: string,
  resolve: boolean,
  existing: ServiceInfo | undefined,
  logger: Logger,
): Promise<'created' | 'updated' | 'unchanged'> {
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

/**
 * `runplan deploy --engine swarm`: the plan's image, an overlay network, one
 * service per process (group) and a proxy, then runplan's health check through
 * the proxy on 127.0.0.1:<port>. Deploying again updates the services in place
 * (only those whose specification changed), one task at a time, the new task
 * started and healthy before an old one stops; the proxy retries a request on
 * another task, so an update serves every request. A failed update is rolled
 * back; a failed first deployment leaves nothing behind.
 */
export async function deployToSwarm(options: SwarmDeployOptions): Promise<SwarmDeployment> {
  const docker = options.docker ?? (await DockerCli.connect());
  const nodes = await swarmNodes(docker);
  const app = options.name ?? swarmAppName(options.appDir);
  const names = swarmNames(app);
  const proxyExisting = await inspectService(docker, names.proxy);
  // A plan swarm cannot carry out is refused before anything is built.
  const onPlan = (plan: RunPlan) => {
    options.onPlan?.(plan);
    processGroups(plan);
  };
  const choice = await chooseImage(docker, { ...options, onPlan }, nodes, (_plan, env) => new Logger(options.sink, env.redactor));
  const { plan, environment } = choice;
  const logger = new Logger(options.sink, environment.redactor);
  const web = plan.processes.find((p) => p.role === 'web');
  const port = plan.healthCheck.port;
  // A first deployment must not find the port taken: the health check would talk to another program.
  if (web && proxyExisting === undefined && (await portAnswers(port))) {
    throw CoreErrors.RUN_PORT_IN_USE.create({ message: `port ${port} already answers on 127.0.0.1; the proxy of ${app} publishes that port on every address of this host.`, details: { port } });
  }

  const network = await ensureNetwork(docker, app);
  if (network.created) logger.info(`created overlay network ${network.name} (attachable)`);
  const secrets: Record<string, string> = {};
  for (const [variable, value] of Object.entries(secretVariables(plan, environment))) secrets[variable] = await ensureObject(docker, 'secret', app, variable, value);
  const specs = processServices({ app, plan, image: choice.image, imageId: choice.imageId, replicas: options.replicas ?? 2, secrets });
  if (web) {
    const proxyImage = await ensureStackImage(docker, STACKS.proxy!, { log: (line) => logger.emit({ kind: 'step', name: 'stack', stream: 'stdout' }, line) });
    const proxyImageId = (await docker.ok(['image', 'inspect', '--format', '{{.Id}}', proxyImage])).trim();
    const config = await ensureObject(docker, 'config', app, 'proxy', proxyConfig({ upstreamHost: names.service(web.name), port }));
    specs.push(proxyService({ app, image: proxyImage, imageId: proxyImageId, port, config }));
  }

  const existing = new Map<string, ServiceInfo | undefined>();
  for (const spec of specs) existing.set(spec.name, await inspectService(docker, spec.name));
  const firstDeployment = [...existing.values()].every((s) => s === undefined);
  const outcome = new Map<string, 'created' | 'updated' | 'unchanged'>();
  const started = Date.now();
  const undo = async () => {
    if (firstDeployment) {
      logger.warn(`removing what this first deployment of ${app} created`);
      await removeSwarmApp(docker, app, { log: (line) => logger.info(line) });
      return;
    }
    for (const [name, what] of outcome) {
      if (what !== 'updated') continue;
      const info = await inspectService(docker, name);
      if (info?.update?.state.startsWith('rollback')) continue;
      logger.warn(`rolling back ${name} to its previous specification`);
      await docker.run(['service', 'rollback', '--detach', name]);
    }
  };
  try {
    // The processes first (swarm starts them in parallel), the proxy once they serve.
    const apply = async (group: ServiceSpec[]) => {
      for (const spec of group) outcome.set(spec.name, await applyService(docker, app, spec, network.name, spec.role === 'proxy' ? false : choice.resolve, existing.get(spec.name), logger));
      await Promise.all(
        group.map((spec) =>
          waitForService(docker, spec.name, {
            replicas: spec.replicas,
            taskSpec: taskHash(spec, network.name),
            updated: outcome.get(spec.name) === 'updated',
            // Each task may take the plan's ready timeout to become healthy, one after another.
            deadline: Date.now() + spec.replicas * (plan.healthCheck.readyTimeoutMs + 15_000) + 30_000,
            logger,
            ...(options.signal ? { signal: options.signal } : {}),
          }),
        ),
      );
    };
    await apply(specs.filter((s) => s.role === 'process'));
    await apply(specs.filter((s) => s.role === 'proxy'));
  } catch (error) {
    if (!options.signal?.aborted) {
      await undo();
      await runImageOutcomeHooks(docker, choice.image, plan, environment, 'failed', logger);
    }
    throw redactError(error, environment.redactor);
  }
  const changed = [...outcome].filter(([, what]) => what !== 'unchanged').map(([name]) => name);
  if (changed.length > 0) logger.info(`services converged in ${formatSeconds(Date.now() - started)}: ${changed.join(', ')}`);

  let health: HealthReport | undefined;
  if (web) {
    try {
      health = await checkContainerHealth(plan, logger, {
        ...(options.clock ? { clock: options.clock } : {}),
        ...(options.healthChecker ? { healthChecker: options.healthChecker } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      await undo();
      await runImageOutcomeHooks(docker, choice.image, plan, environment, 'failed', logger);
      throw redactError(error, environment.redactor);
    }
    if (!health.ok) {
      await undo();
      await runImageOutcomeHooks(docker, choice.image, plan, environment, 'failed', logger);
      throw redactError(healthError(health), environment.redactor);
    }
  }
  // CC_RUN_SUCCEEDED_HOOK once the services converged and answer; it cannot change the outcome.
  await runImageOutcomeHooks(docker, choice.image, plan, environment, 'succeeded', logger);

  // What an earlier deployment made and this one no longer uses: services of processes gone from the plan, old secrets and configs.
  const keep = new Set(specs.map((s) => s.name));
  const stale = (await docker.ok(['service', 'ls', ...appFilters(app), '--format', '{{.Name}}'])).split('\n').filter((n) => n && !keep.has(n));
  for (const name of stale) {
    await docker.ok(['service', 'rm', name]);
    logger.info(`removed service ${name}: its process is no longer in the plan`);
  }
  const used = new Set(specs.flatMap((s) => [...s.secrets, ...s.configs].map((m) => m.source)));
  const removed = await removeUnused(docker, app, used);
  if (removed.length > 0) logger.info(`removed secrets and configs no service uses any more: ${removed.join(', ')}`);

  return {
    plan,
    digest: planDigest(plan),
    environment,
    app,
    image: choice.image,
    services: specs.map((s) => s.name),
    changed,
    health,
    url: web ? `http://127.0.0.1:${port}/` : undefined,
  };
}
