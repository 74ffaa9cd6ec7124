import semver from 'semver';
import { inject } from 'vitest';
import { NODE_BUNDLED_NPM } from '../../buildpacks/node/bundled-npm.js';
import { registryInventory, staticInventory, type NodeInventoryData } from '../../buildpacks/node/inventory.js';
import { latestLts, ltsCodename } from '../../buildpacks/node/lts.js';
import { resolveNpm } from '../../buildpacks/node/resolve-npm.js';
import type { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { defaultRegistry } from '../../src/compose/default-registry.js';

/** Versions as the registry lists them, for plans made without the network. */
export const TEST_INVENTORY = staticInventory({
  node: ['18.20.8', '20.19.6', '22.23.3', '24.10.0', '24.21.0', '26.10.0'],
  // The npm each of those releases ships (bundled-npm.ts), and newer ones that would accept them.
  npm: [
    { version: '10.8.2', engines: { node: '^18.17.0 || >=20.5.0' } },
    { version: '10.9.2', engines: { node: '^18.17.0 || >=20.5.0' } },
    { version: '10.9.9', engines: { node: '^18.17.0 || >=20.5.0' } },
    { version: '11.6.1', engines: { node: '^20.17.0 || >=22.9.0' } },
    { version: '11.19.0', engines: { node: '^20.17.0 || >=22.9.0' } },
    { version: '11.19.1', engines: { node: '^20.17.0 || >=22.9.0' } },
    { version: '12.2.0', engines: { node: '^22.22.2 || ^24.15.0 || >=26.0.0' } },
  ],
  registry: 'https://registry.example.org/',
});

/** The built-in buildpacks, with the Node.js one planning against TEST_INVENTORY instead of the registry. */
export function offlineRegistry(): BuildpackRegistry {
  return defaultRegistry({ node: { inventory: TEST_INVENTORY } });
}

let published: Promise<NodeInventoryData> | undefined;

/**
 * What the registry publishes (Node.js versions with their integrity…), through
 * the same inventory and shared cache as the CLI under test, so both see the same lists.
 */
export function publishedNodeInventory(): Promise<NodeInventoryData> {
  published ??= (async () => {
    const cacheDir = inject('sharedCacheDir');
    const cached = await registryInventory().gather({ cacheDir });
    // A list fetched before Node.js published the releases runplan's table of bundled npm versions was written
    // against (a test cache kept between runs) is fetched again, into the same cache the CLI under test reads.
    const listed = new Set(cached.node.map((v) => v.version));
    return NODE_BUNDLED_NPM.every((line) => listed.has(line.through)) ? cached : registryInventory({ ttlMs: 0 }).gather({ cacheDir });
  })();
  return published;
}

/** The Node.js versions the registry publishes. */
async function publishedNodeVersions(): Promise<readonly string[]> {
  return (await publishedNodeInventory()).node.map((v) => v.version);
}

/**
 * The npm runplan installs beside a Node.js release by default: the one it ships (runplan's table), or,
 * for a release newer than the table, the one runplan's rule for those gives (test/e2e/node-bundled-npm.test.ts
 * says when the table wants extending): a fixture's expectation does not go stale when Node.js publishes.
 */
async function defaultNpmOf(node: string): Promise<string> {
  const npm = ((await publishedNodeInventory()).npm ?? []).filter((r) => semver.prerelease(r.version) === null);
  return resolveNpm(node, npm).version;
}

/**
 * Fills `{{node:RANGE}}` (the greatest published version satisfying RANGE, as
 * semver reads it), `{{node:lts}}`, `{{node:lts-codename}}` and `{{node:lts-npm}}` (the
 * newest LTS release, its codename and the npm runplan installs beside it), so that no expectation goes stale when Node.js
 * publishes a release. Resolved before the test starts: see nodePlaceholders().
 */
export async function nodePlaceholders(value: unknown): Promise<Record<string, string>> {
  const wanted = [...JSON.stringify(value).matchAll(/\{\{node:([^{}]*)\}\}/g)].map((m) => m[1] as string);
  if (wanted.length === 0) return {};
  const versions = await publishedNodeVersions();
  const out: Record<string, string> = {};
  for (const argument of wanted) {
    const lts = latestLts(versions);
    const found =
      argument === 'lts' ? lts : argument === 'lts-codename' ? lts && ltsCodename(lts) : argument === 'lts-npm' ? lts && (await defaultNpmOf(lts)) : semver.maxSatisfying([...versions], argument);
    if (!found) throw new Error(`no published Node.js version for {{node:${argument}}}`);
    out[`node:${argument}`] = found;
  }
  return out;
}
