import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Buildpack, PlanContext } from '../../src/buildpack/contract.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { gatherInventory, inventoryPart, machineInstance, parseInventory } from '../../src/planning/gather-inventory.js';
import { INVENTORY_SCHEMA_VERSION, type Inventory } from '../../src/inventory/inventory.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { DEFAULT_RESTART } from '../../src/plan/restart-policy.js';
import { TEST_INSTANCE, TEST_PLAN_INVENTORY, testInventory, testRegistry } from '../helpers/inventory.js';

/** A host's buildpack that plans from its own part of the inventory, and records what it was given. */
function greeterBuildpack(id = 'greeter', priority = 100) {
  const seen: PlanContext[] = [];
  let gathers = 0;
  const buildpack: Buildpack = {
    id,
    name: `Greeter ${id}`,
    priority,
    defaultHealthCheck: { kind: 'port', reason: 'port check' },
    detector: { detect: async (files) => ((await files.exists('greeting')) ? { status: 'pass', evidence: ['greeting found'] } : { status: 'skip', evidence: ['no greeting'] }) },
    inventory: {
      schema: z.object({ greeting: z.string(), cpus: z.number().int() }),
      gather: async ({ cacheDir }) => {
        gathers += 1;
        return { greeting: `hello from ${cacheDir}`, cpus: 1 };
      },
    },
    planner: {
      async plan(context) {
        seen.push(context);
        const { greeting } = context.inventory as { greeting: string };
        return {
          runtimes: [],
          decisions: [{ id: `${id}.greeting`, subject: 'Greeting', requested: null, source: 'inventory', resolved: greeting, reason: 'the inventory says so', overridden: [] }],
          steps: [],
          layers: [],
          processes: [
            { name: 'web', role: 'web', command: { kind: 'exec', argv: ['echo', greeting] }, cwd: '.', env: {}, pathPrepend: [], port: context.host.port, restart: DEFAULT_RESTART, stopGraceMs: 1000 },
          ],
          files: [],
          warnings: [],
        };
      },
    },
  };
  return { buildpack, seen, gathers: () => gathers };
}

const GREETING_APP = new MemorySource({ greeting: '' });
const inventory = (buildpacks: Record<string, unknown>, instance = TEST_INSTANCE): Inventory => ({ schemaVersion: INVENTORY_SCHEMA_VERSION, host: { instance }, buildpacks });

describe('inventory documents', () => {
  it('reads back what it wrote, and the test inventory is one', () => {
    expect(parseInventory(JSON.parse(JSON.stringify(TEST_PLAN_INVENTORY)))).toEqual(TEST_PLAN_INVENTORY);
    expect(Object.keys(TEST_PLAN_INVENTORY.buildpacks).sort()).toEqual(['node', 'play1', 'ruby']);
  });

  it('refuses another schema version, naming the file', () => {
    expect(() => parseInventory({ ...TEST_PLAN_INVENTORY, schemaVersion: 2 }, 'inventory.json')).toThrowError(
      expect.objectContaining({ code: CoreErrors.INVENTORY_INVALID.code, kind: 'input', file: 'inventory.json', reason: 'inventory.json has schema version 2; this runplan reads version 1.' }),
    );
  });

  it.each<[string, unknown, RegExp]>([
    ['no schema version', { host: TEST_PLAN_INVENTORY.host, buildpacks: {} }, /schemaVersion: /],
    ['no host', { schemaVersion: 1, buildpacks: {} }, /host: /],
    ['a machine without CPUs', { schemaVersion: 1, host: { instance: { cpus: 0, memoryMb: 512 } }, buildpacks: {} }, /host\.instance\.cpus: /],
    ['buildpacks that are not an object', { schemaVersion: 1, host: TEST_PLAN_INVENTORY.host, buildpacks: [] }, /buildpacks: /],
    ['not an object at all', 'inventory', /is not a valid inventory/],
  ])('refuses a document with %s', (_what, json, message) => {
    expect(() => parseInventory(json)).toThrowError(expect.objectContaining({ code: CoreErrors.INVENTORY_INVALID.code, file: 'the inventory', reason: expect.stringMatching(message) }));
  });

  it('gives a buildpack its part, validated with its own schema', () => {
    const { buildpack } = greeterBuildpack();
    expect(inventoryPart(inventory({ greeter: { greeting: 'hi', cpus: 2, extra: true } }), buildpack)).toEqual({ greeting: 'hi', cpus: 2 });
    expect(() => inventoryPart(inventory({ greeter: { greeting: 3, cpus: 2 } }), buildpack)).toThrowError(
      expect.objectContaining({ code: CoreErrors.INVENTORY_INVALID.code, reason: expect.stringMatching(/^the "greeter" part of the inventory is not valid: greeting: /) }),
    );
  });

  it("says which parts an inventory has when the buildpack's is missing", () => {
    const { buildpack } = greeterBuildpack();
    expect(() => inventoryPart(inventory({ node: {}, ruby: {} }), buildpack)).toThrowError(
      expect.objectContaining({
        code: CoreErrors.INVENTORY_INCOMPLETE.code,
        kind: 'input',
        reason: 'the inventory has no "greeter" part (it covers node, ruby), so the Greeter greeter buildpack cannot plan from it.',
      }),
    );
    expect(() => inventoryPart(inventory({}), buildpack)).toThrowError(expect.objectContaining({ reason: expect.stringContaining('(it covers no buildpack)') }));
  });

  it('has no part for a buildpack without a provider', () => {
    const { buildpack } = greeterBuildpack();
    const { inventory: _none, ...withoutProvider } = buildpack;
    expect(inventoryPart(inventory({}), withoutProvider)).toBeUndefined();
  });
});

describe('gathering an inventory', () => {
  it("asks each provider once, in a stable order, with the host's cache and this machine's size", async () => {
    const b = greeterBuildpack('b', 5);
    const a = greeterBuildpack('a', 1);
    const { inventory: _none, ...plain } = greeterBuildpack('plain').buildpack;
    const gathered = await gatherInventory(new BuildpackRegistry([b.buildpack, a.buildpack, plain]), { cacheDir: '/var/cache/runplan' });
    expect(gathered).toEqual({
      schemaVersion: 1,
      host: { instance: machineInstance() },
      buildpacks: { a: { greeting: 'hello from /var/cache/runplan', cpus: 1 }, b: { greeting: 'hello from /var/cache/runplan', cpus: 1 } },
    });
    expect(Object.keys(gathered.buildpacks)).toEqual(['a', 'b']);
    expect(parseInventory(JSON.parse(JSON.stringify(gathered)))).toEqual(gathered);
  });

  it('gathers only the parts asked for, and keeps those of a base inventory', async () => {
    const a = greeterBuildpack('a');
    const b = greeterBuildpack('b');
    const registry = new BuildpackRegistry([a.buildpack, b.buildpack]);
    expect(Object.keys((await gatherInventory(registry, { cacheDir: '/c', ids: ['b'] })).buildpacks)).toEqual(['b']);
    const base = inventory({ a: { greeting: 'saved', cpus: 3 } }, { cpus: 7, memoryMb: 777 });
    const completed = await gatherInventory(registry, { cacheDir: '/c', base });
    expect(completed).toEqual(inventory({ a: { greeting: 'saved', cpus: 3 }, b: { greeting: 'hello from /c', cpus: 1 } }, { cpus: 7, memoryMb: 777 }));
    expect([a.gathers(), b.gathers()]).toEqual([0, 2]);
  });

  it("refuses a part its provider gathered that does not match the provider's schema", async () => {
    const { buildpack } = greeterBuildpack();
    const broken = { ...buildpack, inventory: { ...buildpack.inventory!, gather: async () => ({ greeting: 'hi' }) } };
    await expect(gatherInventory(new BuildpackRegistry([broken]), { cacheDir: '/c' })).rejects.toMatchObject({
      code: CoreErrors.INVENTORY_INVALID.code,
      message: expect.stringContaining('the "greeter" part of its provider is not valid: cpus: '),
    });
  });
});

describe('planning from an inventory', () => {
  it("gives the planner its validated part and plans for the inventory's machine", async () => {
    const g = greeterBuildpack();
    const registry = testRegistry().register(g.buildpack);
    const given = testInventory();
    given.buildpacks.greeter = { greeting: 'bonjour', cpus: 4, ignored: 'by the schema' };
    const result = await createPlan({ registry, files: GREETING_APP, inventory: given });
    expect(g.gathers()).toBe(0);
    expect(g.seen[0]?.inventory).toEqual({ greeting: 'bonjour', cpus: 4 });
    expect(g.seen[0]?.previous).toBeUndefined();
    expect(result.inventory).toBe(given);
    expect(result.host.instance).toEqual(TEST_INSTANCE);
    expect(result.plan.processes[0]?.command).toEqual({ kind: 'exec', argv: ['echo', 'bonjour'] });
    // The host's own setting wins over the machine the inventory describes.
    const sized = await createPlan({ registry, files: GREETING_APP, inventory: given, host: { instance: { cpus: 8, memoryMb: 8192 } } });
    expect(sized.host.instance).toEqual({ cpus: 8, memoryMb: 8192 });
  });

  it('refuses an inventory without the part of the buildpack that plans the application', async () => {
    const registry = testRegistry().register(greeterBuildpack().buildpack);
    await expect(createPlan({ registry, files: GREETING_APP, inventory: TEST_PLAN_INVENTORY })).rejects.toMatchObject({ code: CoreErrors.INVENTORY_INCOMPLETE.code });
    await expect(createPlan({ registry: testRegistry(), files: new MemorySource({ 'package.json': '{"main":"a.js"}' }), inventory: testInventory({ without: ['node'] }) })).rejects.toMatchObject({
      code: CoreErrors.INVENTORY_INCOMPLETE.code,
      message: expect.stringContaining('(it covers play1, ruby)'),
    });
  });

  it('refuses an inventory whose part for the buildpack is not valid', async () => {
    const bad = testInventory();
    (bad.buildpacks.ruby as { rubies: unknown }).rubies = 'ruby 3.3';
    const files = new MemorySource({ Gemfile: "gem 'puma'\n", 'Gemfile.lock': 'GEM\n  specs:\n    puma (6.6.0)\n', 'config.ru': 'x' });
    await expect(createPlan({ registry: testRegistry(), files, inventory: bad })).rejects.toMatchObject({
      code: CoreErrors.INVENTORY_INVALID.code,
      message: expect.stringContaining('the "ruby" part of the inventory is not valid: rubies: '),
    });
  });

  it("gathers only the selected buildpack's part without one", async () => {
    const g = greeterBuildpack();
    const registry = testRegistry().register(g.buildpack);
    const result = await createPlan({ registry, files: GREETING_APP, host: { cacheDir: '/var/cache/runplan' } });
    expect(g.gathers()).toBe(1);
    expect(result.inventory).toEqual({ schemaVersion: 1, host: { instance: result.host.instance }, buildpacks: { greeter: { greeting: 'hello from /var/cache/runplan', cpus: 1 } } });
  });

  it('hands the planner the previous plan', async () => {
    const g = greeterBuildpack();
    const registry = testRegistry().register(g.buildpack);
    const given = inventory({ greeter: { greeting: 'hi', cpus: 1 } });
    const { plan: previous } = await createPlan({ registry, files: GREETING_APP, inventory: given });
    await createPlan({ registry, files: GREETING_APP, inventory: given, previous });
    expect(g.seen[1]?.previous).toBe(previous);
  });
});
