import type { DockerCli } from 'runplan/engines/docker';
import { ensureStackImage, type StackDefinition } from 'runplan/engines/docker';
import { type Clock, systemClock } from 'runplan/process';
import { HostErrors } from '../errors.js';

/** The attachable overlay network of the add-on servers, which every application's processes join: they reach a server by its service name. */
const ADDONS_NETWORK = 'runplan-host-addons';
/** On every swarm object the host makes for add-ons: what tests and an operator clean up by. */
export const ADDON_OBJECT_LABEL = 'io.runplan.host-addon';

const READY_TIMEOUT_MS = 180_000;
const POLL_MS = 500;

/** One add-on server as a Swarm service: its image, account, data volume, and the shell script it runs. */
export interface AddonServiceSpec {
  readonly name: string;
  readonly stack: StackDefinition;
  /** The account of the image the server runs as (the Debian package's). */
  readonly user: string;
  readonly volume: { readonly name: string; readonly target: string };
  /** `sh -c` script: prepares the data on first start, then execs the server. */
  readonly script: string;
  /** A file only this service's tasks see (a swarm secret): a configuration holding a password. */
  readonly secret?: { readonly name: string; readonly content: string; readonly target: string };
}

/**
 * Add-on servers as Swarm services, for a host whose releases run on a swarm:
 * their tasks reach the servers over {@link ADDONS_NETWORK}, never this
 * machine's loopback. Each server is pinned to this node, where its named
 * volume keeps the data across restarts and updates, and where the host
 * administers it with `docker exec` (as the local providers do over a socket).
 * Like the applications' services, serve removes them when it stops and makes
 * them again on their volumes when it starts.
 */
export class SwarmAddonServices {
  private node: Promise<string> | undefined;

  /** `clock`: what the waits for a task read and sleep with (tests pass one that does not sleep). */
  constructor(
    private readonly docker: () => Promise<DockerCli>,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The add-ons network, made when missing. */
  async network(): Promise<string> {
    const docker = await this.docker();
    const found = await docker.run(['network', 'inspect', '--format', '{{.Name}}', ADDONS_NETWORK]);
    if (found.code !== 0) {
      const made = await docker.run(['network', 'create', '--driver', 'overlay', '--attachable', '--label', `${ADDON_OBJECT_LABEL}=true`, ADDONS_NETWORK]);
      // Two serve processes may make it at once: the loser finds it there.
      if (made.code !== 0 && (await docker.run(['network', 'inspect', ADDONS_NETWORK])).code !== 0) throw this.failed(ADDONS_NETWORK, 'docker network create', made.stderr);
    }
    return ADDONS_NETWORK;
  }

  /** Creates the service when missing (its data, in the volume, survives), then waits until `ready` says it serves. */
  async ensure(spec: AddonServiceSpec, ready: (container: string) => Promise<boolean>, log: (line: string) => void = () => {}): Promise<void> {
    const docker = await this.docker();
    if ((await docker.run(['service', 'inspect', '--format', '{{.ID}}', spec.name])).code !== 0) {
      const network = await this.network();
      const image = await ensureStackImage(docker, spec.stack, { log });
      if (spec.secret && (await docker.run(['secret', 'inspect', spec.secret.name])).code !== 0) {
        const made = await docker.run(['secret', 'create', '--label', `${ADDON_OBJECT_LABEL}=true`, spec.secret.name, '-'], { input: spec.secret.content });
        if (made.code !== 0) throw this.failed(spec.name, 'docker secret create', made.stderr);
      }
      const created = await docker.run([
        'service',
        'create',
        '--detach',
        '--name',
        spec.name,
        '--label',
        `${ADDON_OBJECT_LABEL}=true`,
        '--network',
        network,
        // No IPVS on a node like this one (NOTES.md): the name resolves to the task itself.
        '--endpoint-mode',
        'dnsrr',
        '--constraint',
        `node.id==${await this.nodeId()}`,
        '--mount',
        `type=volume,source=${spec.volume.name},target=${spec.volume.target},volume-label=${ADDON_OBJECT_LABEL}=true`,
        ...(spec.secret ? ['--secret', `source=${spec.secret.name},target=${spec.secret.target},mode=0444`] : []),
        '--user',
        spec.user,
        '--restart-condition',
        'any',
        '--no-resolve-image',
        image,
        'sh',
        '-c',
        spec.script,
      ]);
      if (created.code !== 0) throw this.failed(spec.name, 'docker service create', created.stderr);
    }
    await this.waitReady(spec.name, ready);
  }

  /** Runs a program in the service's running task on this node, `input` on its standard input (never in its arguments). */
  async exec(service: string, user: string, argv: readonly string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    const docker = await this.docker();
    const container = await this.container(service);
    if (!container) return { code: 1, stdout: '', stderr: `no running task of ${service} on this node` };
    return docker.run(['exec', ...(input === undefined ? [] : ['-i']), '-u', user, container, ...argv], input === undefined ? {} : { input });
  }

  /** Removes the service and waits until its task's container is gone (its volume, and the data in it, stay). */
  async stop(service: string): Promise<void> {
    const docker = await this.docker();
    await docker.run(['service', 'rm', service]);
    const deadline = this.clock.now() + 60_000;
    // A server started again on the same volume must not meet the one still stopping (PostgreSQL's postmaster.pid).
    while (this.clock.now() < deadline) {
      const left = await docker.run(['ps', '--all', '--quiet', '--filter', `label=com.docker.swarm.service.name=${service}`]);
      if (left.code !== 0 || left.stdout.trim() === '') return;
      await this.clock.sleep(POLL_MS);
    }
  }

  /** Removes the service, then its volume and its secret: the add-on's data is gone. */
  async remove(service: string, volume: string, secret?: string): Promise<void> {
    const docker = await this.docker();
    await this.stop(service);
    await docker.run(['volume', 'rm', volume]);
    if (secret) await docker.run(['secret', 'rm', secret]);
  }

  private async waitReady(service: string, ready: (container: string) => Promise<boolean>): Promise<void> {
    const deadline = this.clock.now() + READY_TIMEOUT_MS;
    while (this.clock.now() < deadline) {
      const container = await this.container(service);
      if (container && (await ready(container).catch(() => false))) return;
      await this.clock.sleep(POLL_MS);
    }
    const docker = await this.docker();
    const tasks = await docker.run(['service', 'ps', '--no-trunc', '--format', '{{.CurrentState}} {{.Error}}', service]);
    throw this.failed(service, 'docker service create', `no task of ${service} served within ${READY_TIMEOUT_MS / 1000} s: ${tasks.stdout.trim().split('\n').slice(0, 3).join('; ')}`);
  }

  private async container(service: string): Promise<string | undefined> {
    const docker = await this.docker();
    const ids = await docker.run(['ps', '--quiet', '--filter', `label=com.docker.swarm.service.name=${service}`, '--filter', 'status=running']);
    return ids.stdout.split('\n').find(Boolean);
  }

  private nodeId(): Promise<string> {
    this.node ??= this.docker().then(async (docker) => (await docker.ok(['info', '--format', '{{.Swarm.NodeID}}'])).trim());
    return this.node;
  }

  private failed(what: string, command: string, stderr: string): Error {
    return HostErrors.ADDON_SERVER_FAILED.create({
      message: `${command} for the add-on server ${what} failed: ${stderr.trim().split('\n').slice(-2).join(' ')}`,
      details: { what, command },
    });
  }
}

/** A host's id (app_<uuid>, addon_<uuid>) as a name in the swarm: a DNS label (app-<uuid>, 40 characters), unique where names given by users are not. */
export function swarmName(id: string): string {
  return id.toLowerCase().replace(/[^a-z0-9-]/g, '-');
}
