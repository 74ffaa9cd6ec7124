import { join } from 'node:path';
import { HostErrors } from '../errors.js';
import type { AddonProviderKind, AddonRecord } from '../store/store.js';
import { PostgresqlProvider } from './postgresql.js';
import type { AddonProvider } from './provider.js';
import { RedisProvider } from './redis.js';
import { StorageProvider } from './storage.js';

/**
 * The add-on servers of one host, under `<data>/addons/<kind>/`. A provider's
 * servers start only once the host has an add-on of its kind (a host without
 * databases never runs initdb), and stop() stops every process any of them
 * started, by PID.
 */
export class AddonServers {
  private readonly providers: Map<AddonProviderKind, AddonProvider>;
  private readonly started = new Set<AddonProviderKind>();

  /** `programs.storageServer`: how to run a storage add-on's server (serve installs it in the data folder's bin/). */
  constructor(dir: string, programs: { readonly storageServer: readonly string[] }) {
    const providers: AddonProvider[] = [
      new PostgresqlProvider({ dir: join(dir, 'postgresql') }),
      new RedisProvider({ dir: join(dir, 'redis') }),
      new StorageProvider({ dir: join(dir, 'storage'), program: programs.storageServer }),
    ];
    this.providers = new Map(providers.map((p) => [p.kind, p]));
  }

  /** Starts the servers of the add-ons the host has (serve start), one kind after another. */
  async start(addons: readonly AddonRecord[]): Promise<void> {
    for (const [kind, provider] of this.providers) {
      const existing = addons.filter((a) => a.provider === kind);
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
}
