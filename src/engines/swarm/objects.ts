import { createHash } from 'node:crypto';
import { CoreErrors } from '../../errors/core-errors.js';
import { type DockerCli, labelArgs } from '../docker-cli.js';
import { systemClock, type Clock } from '../../time/clock.js';
import { DEPLOYMENT_LABEL, MANAGED_LABEL } from '../docker-runner.js';
import { appLabels, ENGINE_LABEL, swarmNames } from './services.js';

/** On the images the Swarm executor builds, the application they were built for: its accepted deployments remove the older ones. */
export const DEPLOYMENT_IMAGE_LABEL = 'io.runplan.swarm-deployment';

/** `--filter` arguments that select exactly the swarm objects runplan made for `app`. */
export function appFilters(app: string): string[] {
  return ['--filter', `label=${MANAGED_LABEL}=true`, '--filter', `label=${ENGINE_LABEL}=swarm`, '--filter', `label=${DEPLOYMENT_LABEL}=${app}`];
}

/** Refuses to touch an object of that name that runplan did not make for this application. */
export function assertOurs(kind: string, name: string, labels: Readonly<Record<string, string>>, app: string): void {
  if (labels[MANAGED_LABEL] !== 'true' || labels[ENGINE_LABEL] !== 'swarm' || labels[DEPLOYMENT_LABEL] !== app) {
    throw CoreErrors.ENGINE_COMMAND_FAILED.create({
      message: `the swarm already has a ${kind} named ${name} that runplan did not make for ${app}; runplan changes only what it made.`,
      fix: `Remove or rename that ${kind}, or deploy the application from a directory with another name.`,
    });
  }
}

/**
 * The application's overlay network: its services find one another by name
 * there (swarm's DNS), and it is attachable so that a one-off container
 * (`docker run --network NAME`, e.g. a migration) can join it.
 */
export async function ensureNetwork(docker: DockerCli, app: string): Promise<{ name: string; created: boolean }> {
  const name = swarmNames(app).network;
  const found = await docker.run(['network', 'inspect', '--format', '{{json .Labels}}', name]);
  if (found.code === 0) {
    assertOurs('network', name, JSON.parse(found.stdout.trim() || '{}') ?? {}, app);
    return { name, created: false };
  }
  await docker.ok(['network', 'create', '--driver', 'overlay', '--attachable', ...labelArgs(appLabels(app)), name]);
  return { name, created: true };
}

/**
 * A swarm secret or config holding `content`, created when missing. They are
 * immutable, so the name carries a hash of the content: an unchanged value
 * reuses the object (the tasks are left alone), a changed one is a new object
 * that an update swaps in. For a secret the hash is salted with the application
 * and variable names; whoever can list the swarm's secrets can also exec into
 * the tasks, so it reveals nothing they could not read.
 */
export async function ensureObject(docker: DockerCli, kind: 'secret' | 'config', app: string, key: string, content: string): Promise<string> {
  const digest = createHash('sha256').update(`${app}\0${key}\0${content}`).digest('hex').slice(0, 12);
  // Swarm names have at most 64 characters.
  const name = `${`${app}-${key}`.slice(0, 51)}-${digest}`;
  if ((await docker.run([kind, 'inspect', '--format', '{{.ID}}', name])).code !== 0) {
    // The content goes to the engine on standard input, never on a command line.
    await docker.ok([kind, 'create', ...labelArgs({ ...appLabels(app), 'io.runplan.key': key }), name, '-'], { input: content });
  }
  return name;
}

async function list(docker: DockerCli, kind: 'service' | 'secret' | 'config' | 'network', app: string): Promise<string[]> {
  const out = await docker.ok([kind, 'ls', ...appFilters(app), '--format', '{{.Name}}']);
  return out.split('\n').filter(Boolean);
}

/** Removes the application's secrets and configs that no service uses any more (one in use is refused by the engine and kept). */
export async function removeUnused(docker: DockerCli, app: string, used: ReadonlySet<string>): Promise<string[]> {
  const removed: string[] = [];
  for (const kind of ['secret', 'config'] as const) {
    for (const name of await list(docker, kind, app)) {
      if (!used.has(name) && (await docker.run([kind, 'rm', name])).code === 0) removed.push(name);
    }
  }
  return removed;
}

export interface Removed {
  readonly services: readonly string[];
  readonly secrets: readonly string[];
  readonly configs: readonly string[];
  readonly networks: readonly string[];
}

/**
 * Removes everything runplan made in the swarm for `app` (only objects with its
 * labels): the services, then, once their containers are gone, the secrets,
 * configs and network (the engine refuses to remove a network while a stopping
 * container is still attached, so that is retried).
 */
export async function removeSwarmApp(docker: DockerCli, app: string, options: { timeoutMs?: number; log?: (line: string) => void; clock?: Clock } = {}): Promise<Removed> {
  const log = options.log ?? (() => undefined);
  const clock = options.clock ?? systemClock;
  const deadline = clock.now() + (options.timeoutMs ?? 60_000);
  const services = await list(docker, 'service', app);
  if (services.length > 0) {
    await docker.ok(['service', 'rm', ...services]);
    log(`removed service(s) ${services.join(', ')}; waiting for their containers to stop`);
  }
  const containerFilter = ['--filter', `label=${ENGINE_LABEL}=swarm`, '--filter', `label=${DEPLOYMENT_LABEL}=${app}`];
  while ((await docker.ok(['ps', '--all', '--quiet', ...containerFilter])).trim() !== '' && clock.now() < deadline) await clock.sleep(250);
  const removeAll = async (kind: 'secret' | 'config' | 'network') => {
    const names = await list(docker, kind, app);
    for (const name of names) {
      for (;;) {
        const result = await docker.run([kind, 'rm', name]);
        if (result.code === 0 || clock.now() > deadline) {
          if (result.code !== 0) await docker.ok([kind, 'rm', name]);
          break;
        }
        await clock.sleep(250);
      }
    }
    if (names.length > 0) log(`removed ${kind}(s) ${names.join(', ')}`);
    return names;
  };
  const secrets = await removeAll('secret');
  const configs = await removeAll('config');
  const networks = await removeAll('network');
  return { services, secrets, configs, networks };
}

/** What of an application runs in a swarm: its services, and the plan its web service's image was built from. */
export interface SwarmAppFound {
  readonly services: readonly string[];
  /** The image's `io.runplan.plan-digest` label (undefined: no web service, or an image without it). */
  readonly planDigest: string | undefined;
}

/**
 * The application's services as they run now (a program that deployed them stopped meanwhile): found by
 * runplan's labels, its web service's plan read from its image. Undefined when none runs.
 */
export async function findSwarmApp(docker: DockerCli, app: string): Promise<SwarmAppFound | undefined> {
  const services = await list(docker, 'service', app);
  if (services.length === 0) return undefined;
  const web = (await docker.ok(['service', 'ls', ...appFilters(app), '--filter', 'label=io.runplan.role=web', '--format', '{{.Name}}'])).split('\n').filter(Boolean)[0];
  if (web === undefined) return { services, planDigest: undefined };
  const image = (await docker.ok(['service', 'inspect', '--format', '{{.Spec.TaskTemplate.ContainerSpec.Image}}', web])).trim();
  const label = (await docker.run(['image', 'inspect', '--format', '{{index .Config.Labels "io.runplan.plan-digest"}}', image])).stdout.trim();
  return { services, planDigest: label === '' || label === '<no value>' ? undefined : label };
}
