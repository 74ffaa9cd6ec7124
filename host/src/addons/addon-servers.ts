import { join } from 'node:path';
import { HostErrors } from '../errors.js';
import type { AddonProviderKind, AddonRecord } from '../store/store.js';
import { PostgresqlProvider } from './postgresql.js';
import type { AddonProvider } from './provider.js';
import { RedisProvider } from './redis.js';
import { StorageProvider } from './storage.js';
import { SwarmPostgresqlProvider, SwarmRedisProvider } from './swarm-providers.js';
import type { SwarmAddonServices } from './swarm-services.js';
import { SwarmStorageProvider } from './swarm-storage.js';
import type { Supervisor } from '../supervision/supervisor.js';

/**
 * The add-on servers of one host, under `<data>/addons/<kind>/`. A provider's
 * servers start only once the host has an add-on of its kind (a host without
 * databases never runs initdb), and stop() stops every process any of them
 * started, by PID.
 */
export class AddonServers {
  private readonly providers: Map<AddonProviderKind, AddonProvider>;
  private readonly started = new Set<AddonProviderKind>();

  readonly engine: 'local' | 'swarm';

  /**
   * `storage.osdMb`: the size of the storage add-ons' OSD file (settings.json), fixed when their cluster is made.
   * `swarm`: the host's releases run on a swarm, so its add-on servers do too. `supervisor`: the host's, which starts a local server again when it dies
   * (a swarm restarts its own services).
   */
  constructor(dir: string, storage: { readonly osdMb?: number }, swarm?: SwarmAddonServices, supervisor?: Supervisor, releasesNetwork?: string) {
    const providers: AddonProvider[] = swarm
      ? [new SwarmPostgresqlProvider(swarm), new SwarmRedisProvider(swarm), new SwarmStorageProvider(swarm, storage.osdMb)]
      : [
          new PostgresqlProvider({ dir: join(dir, 'postgresql'), supervisor, ...(releasesNetwork ? { releasesNetwork } : {}) }),
          new RedisProvider({ dir: join(dir, 'redis'), supervisor }),
          new StorageProvider({ dir: join(dir, 'storage'), supervisor, ...storage }),
        ];
    this.engine = swarm ? 'swarm' : 'local';
    this.providers = new Map(providers.map((p) => [p.kind, p]));
  }

  /**
   * Throws ENGINE_ADDON_UNREACHABLE for an add-on whose server this host's releases cannot reach: one made while
   * the host ran its releases on another engine (a loopback server for swarm tasks, a swarm service for local processes).
   */
  assertReachable(app: { readonly name: string }, addons: readonly AddonRecord[]): void {
    const unreachable = addons.filter((a) => engineOf(a) !== this.engine);
    if (unreachable.length === 0) return;
    throw HostErrors.ENGINE_ADDON_UNREACHABLE.create({
      message: `${app.name} is linked to ${unreachable.map((a) => a.name).join(', ')}, made when this host ran its releases on the ${unreachable[0] ? engineOf(unreachable[0]) : 'local'} engine: the ${this.engine} engine's processes cannot reach ${unreachable.length > 1 ? 'their servers' : 'its server'}.`,
      details: { app: app.name, addons: unreachable.map((a) => a.name), engine: this.engine },
    });
  }

  /** Starts the servers of the add-ons the host has (serve start), one kind after another; those of another engine are left alone. */
  async start(addons: readonly AddonRecord[]): Promise<void> {
    for (const [kind, provider] of this.providers) {
      const existing = addons.filter((a) => a.provider === kind && engineOf(a) === this.engine);
      if (existing.length === 0) continue;
      this.started.add(kind);
      await provider.start(existing);
    }
  }

  /** The provider of a kind, its servers started: ADDON_PROVIDER_UNKNOWN for a kind this host does not offer. */
  async provider(kind: string): Promise<AddonProvider> {
    const provider = this.providers.get(kind as AddonProviderKind);
    if (!provider) {
      throw HostErrors.ADDON_PROVIDER_UNKNOWN.create({
        message: `this host offers no add-on of kind ${JSON.stringify(kind.slice(0, 40))}.`,
        fix: `Give one of: ${[...this.providers.keys()].join(', ')}.`,
        details: { kind, offered: [...this.providers.keys()] },
      });
    }
    if (!this.started.has(provider.kind)) {
      this.started.add(provider.kind);
      await provider.start();
    }
    return provider;
  }

  /** The variables a link to the add-on injects (from its stored config: no server call). */
  variables(addon: AddonRecord): Record<string, string> {
    const provider = this.providers.get(addon.provider);
    return provider ? provider.variables(addon.config) : {};
  }

  async stop(): Promise<void> {
    await Promise.all([...this.providers.values()].map((p) => p.stop()));
    this.started.clear();
  }

  /** serve exits and the add-on servers go on: the applications keep their connections; the next serve takes them over. */
  async detach(): Promise<void> {
    await Promise.all([...this.providers.values()].map((p) => p.detach()));
    this.started.clear();
  }
}

/** The engine an add-on's server was made for: swarm providers record it in the config; one without it is a loopback server. */
function engineOf(addon: AddonRecord): string {
  return addon.config.engine ?? 'local';
}
