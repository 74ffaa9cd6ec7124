import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Buildpack } from '../../src/buildpack/contract.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { gatherInventory } from '../../src/planning/gather-inventory.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A provider whose schema counts the parts it checks, giving a new object of the
 * same content at every call (as a provider reading its lists from files in a new
 * process does).
 */
function countingBuildpack(part: () => unknown, shape: z.ZodRawShape = { releases: z.array(z.object({ version: z.string() })) }) {
  let checks = 0;
  const schema = z.object(shape).superRefine(() => {
    checks += 1;
  });
  const buildpack: Buildpack = {
    id: 'lister',
    name: 'Lister',
    priority: 1,
    defaultHealthCheck: { kind: 'port', reason: 'port check' },
    detector: { detect: async () => ({ status: 'skip', evidence: [] }) },
    planner: { plan: async () => ({ runtimes: [], decisions: [], steps: [], layers: [], processes: [], files: [], warnings: [] }) },
    inventory: { schema, gather: async () => part() },
  };
  return { registry: new BuildpackRegistry([buildpack]), checks: () => checks };
}

/** A host cache whose providers keep their lists in it (its inventory folder exists). */
async function cacheWithLists(): Promise<string> {
  const dir = await tempDir('runplan-validated-parts-');
  mkdirSync(join(dir, 'inventory'));
  return dir;
}

const releases = () => ({ releases: [{ version: '1.0.0' }, { version: '2.0.0' }] });

describe('inventory parts validated by an earlier process', () => {
  it('validates a part once per cache: the same content given again, or found recorded by another process, is trusted', async () => {
    const cacheDir = await cacheWithLists();
    const provider = countingBuildpack(releases);
    expect((await gatherInventory(provider.registry, { cacheDir })).buildpacks.lister).toEqual(releases());
    expect((await gatherInventory(provider.registry, { cacheDir })).buildpacks.lister).toEqual(releases());
    expect(provider.checks()).toBe(1);
    const record = readFileSync(join(cacheDir, 'inventory', 'validated-parts.txt'), 'utf8');
    expect(record).toMatch(/^[0-9a-f]{64}\n$/);

    // Another process with the same cache reads the record: a new cache folder holding the same file stands for it here.
    const other = await cacheWithLists();
    writeFileSync(join(other, 'inventory', 'validated-parts.txt'), record);
    const second = countingBuildpack(releases);
    expect((await gatherInventory(second.registry, { cacheDir: other })).buildpacks.lister).toEqual(releases());
    expect(second.checks()).toBe(0);
  });

  it('validates again a part whose content or schema changed, and refuses an invalid one, recording nothing for it', async () => {
    const cacheDir = await cacheWithLists();
    const first = countingBuildpack(releases);
    await gatherInventory(first.registry, { cacheDir });
    const changed = countingBuildpack(() => ({ releases: [{ version: '3.0.0' }] }));
    await gatherInventory(changed.registry, { cacheDir });
    expect(changed.checks()).toBe(1);
    const otherSchema = countingBuildpack(releases, { releases: z.array(z.object({ version: z.string().min(1) })) });
    await gatherInventory(otherSchema.registry, { cacheDir });
    expect(otherSchema.checks()).toBe(1);

    const invalid = countingBuildpack(() => ({ releases: [{ version: 1 }] }));
    const refused = { code: CoreErrors.INVENTORY_INVALID.code, message: expect.stringContaining('the "lister" part of its provider is not valid') };
    await expect(gatherInventory(invalid.registry, { cacheDir })).rejects.toMatchObject(refused);
    await expect(gatherInventory(invalid.registry, { cacheDir })).rejects.toMatchObject(refused);
    expect(
      readFileSync(join(cacheDir, 'inventory', 'validated-parts.txt'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(3);
  });

  it('never trusts a part the schema changes (a default filled in): it is validated every time, and planning gets what Zod gave', async () => {
    const cacheDir = await cacheWithLists();
    const provider = countingBuildpack(() => ({}), { channel: z.string().default('stable') });
    expect((await gatherInventory(provider.registry, { cacheDir })).buildpacks.lister).toEqual({ channel: 'stable' });
    expect((await gatherInventory(provider.registry, { cacheDir })).buildpacks.lister).toEqual({ channel: 'stable' });
    expect(provider.checks()).toBe(2);
    expect(existsSync(join(cacheDir, 'inventory', 'validated-parts.txt'))).toBe(false);
  });

  it('makes no folder for the record: a cache whose providers keep nothing in it gets no file', async () => {
    const cacheDir = await tempDir('runplan-validated-parts-');
    await gatherInventory(countingBuildpack(releases).registry, { cacheDir });
    expect(existsSync(join(cacheDir, 'inventory'))).toBe(false);
  });
});
