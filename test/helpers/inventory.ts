/**
 * A fixed inventory for planning in tests.
 *
 * An inventory is what planning learns from a machine and the network (see
 * src/inventory/inventory.ts). Written down here, it lets unit tests and golden
 * plans plan every built-in buildpack without running a program or opening a
 * connection, and gives the same plan on every machine:
 *
 *   const { plan } = await createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files, appDir: '/srv/app' });
 *
 * - node: TEST_INVENTORY of ./node-inventory.ts (Node.js 18–26, the npm each
 *   ships and newer ones up to 12.2.0, the package managers at runplan's pinned versions), with stand-in
 *   integrities: fine for planning, refused by any build that installs them.
 * - ruby: Ruby 3.1.2 and 3.3.6 in /usr/bin, nginx in /usr/sbin, not root.
 * - play1: a mirror on mirror.example with checksums for 1.11.0 and 1.5.3,
 *   Java 17 and Python 3 on PATH.
 *
 * Every value is plain data: copy and change a part with testInventory().
 */
import type { NodeInventoryData } from '../../buildpacks/node/inventory.js';
import { hostConfiguration, Play1InventorySchema, type Play1InventoryData, type Play1Options } from '../../buildpacks/play1/options.js';
import { RubyInventorySchema, type RubyInventoryData } from '../../buildpacks/ruby/options.js';
import type { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { defaultRegistry, type DefaultRegistryOptions } from '../../src/compose/default-registry.js';
import { INVENTORY_SCHEMA_VERSION, type Inventory } from '../../src/inventory/inventory.js';
import { TEST_INVENTORY } from './node-inventory.js';

/** The machine tests plan for: 2 CPUs, 2 GiB (Puma gets 2 workers, the JVM -Xmx1536m, Node.js --max-old-space-size=1536). */
export const TEST_INSTANCE: Inventory['host']['instance'] = Object.freeze({ cpus: 2, memoryMb: 2048 });

/** The Node.js part: what TEST_INVENTORY publishes. */
export const TEST_NODE_PART: NodeInventoryData = deepFreeze(structuredClone(await TEST_INVENTORY.gather({ cacheDir: '' })));

/** The Ruby part: two interpreters of the host, nginx in /usr/sbin, runplan not running as root. */
const TEST_RUBY_PART: RubyInventoryData = deepFreeze(
  RubyInventorySchema.parse({
    rubies: [
      { version: '3.1.2', bindir: '/usr/bin', origin: 'test /usr/bin/ruby3.1', gemsFingerprint: 'f1f1f1f1f1f1f1f1' },
      { version: '3.3.6', bindir: '/usr/bin', origin: 'test /usr/bin/ruby3.3', gemsFingerprint: 'f3f3f3f3f3f3f3f3' },
    ],
    nginx: '/usr/sbin/nginx',
    runsAsRoot: false,
  }),
);

/** What the Play 1.x part says of the host's programs: Java 17 (in the range of Play 1.11) and Python 3. */
const TEST_PLAY1_PROGRAMS: Pick<Play1InventoryData, 'java' | 'python'> = deepFreeze({
  java: { major: 17, banner: 'openjdk version "17.0.15" 2025-04-15' },
  python: { python2: null, python3: 'Python 3.11.2' },
});

/** The Play 1.x host settings TEST_PLAY1_PART was gathered with (also usable with createPlay1Buildpack). */
const TEST_PLAY1_OPTIONS: Play1Options = deepFreeze({
  hostEnv: {},
  mirror: 'https://mirror.example/play/{version}/play-{version}.zip',
  checksums: { '1.11.0': 'a'.repeat(64), '1.5.3': 'b'.repeat(64) },
});

/**
 * The Play 1.x part as the buildpack's provider gathers it for `options` (mirror
 * and checksums from the host settings, which may throw their coded errors),
 * with `programs` standing in for what `java -version` and `python3 --version` say.
 */
export function play1InventoryPart(options: Play1Options = TEST_PLAY1_OPTIONS, programs: Partial<Pick<Play1InventoryData, 'java' | 'python'>> = {}): Play1InventoryData {
  const config = hostConfiguration({ hostEnv: {}, ...options });
  return Play1InventorySchema.parse({
    mirror: config.mirror ? { template: config.mirror.template, origin: config.mirror.origin } : null,
    checksums: Object.fromEntries([...config.checksums()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    checksumsOrigin: config.checksumsOrigin,
    ...TEST_PLAY1_PROGRAMS,
    ...programs,
  });
}

/** The Play 1.x part: TEST_PLAY1_OPTIONS' mirror and checksums, TEST_PLAY1_PROGRAMS. */
const TEST_PLAY1_PART: Play1InventoryData = deepFreeze(play1InventoryPart());

/** The inventory of every built-in buildpack, frozen: plan from it as it is, or change a copy with testInventory(). */
export const TEST_PLAN_INVENTORY: Inventory = deepFreeze({
  schemaVersion: INVENTORY_SCHEMA_VERSION,
  host: { instance: TEST_INSTANCE },
  buildpacks: { node: TEST_NODE_PART, play1: TEST_PLAY1_PART, ruby: TEST_RUBY_PART },
});

export interface TestInventoryChanges {
  readonly instance?: Inventory['host']['instance'];
  /** Replaces the Node.js part. */
  readonly node?: NodeInventoryData;
  /** Fields of the Ruby part to replace. */
  readonly ruby?: Partial<RubyInventoryData>;
  /** Fields of the Play 1.x part to replace (see also play1InventoryPart). */
  readonly play1?: Partial<Play1InventoryData>;
  /** Buildpack parts to leave out, e.g. to test an incomplete inventory. */
  readonly without?: readonly string[];
}

/** A fresh, mutable copy of TEST_PLAN_INVENTORY with some parts changed. */
export function testInventory(changes: TestInventoryChanges = {}): Inventory {
  const base = structuredClone(TEST_PLAN_INVENTORY) as Inventory & { buildpacks: { node: NodeInventoryData; ruby: RubyInventoryData; play1: Play1InventoryData } };
  const buildpacks: Record<string, unknown> = {
    node: changes.node ? structuredClone(changes.node) : base.buildpacks.node,
    play1: { ...base.buildpacks.play1, ...structuredClone(changes.play1) },
    ruby: { ...base.buildpacks.ruby, ...structuredClone(changes.ruby) },
  };
  for (const id of changes.without ?? []) delete buildpacks[id];
  return { schemaVersion: INVENTORY_SCHEMA_VERSION, host: { instance: { ...(changes.instance ?? base.host.instance) } }, buildpacks };
}

/**
 * The built-in buildpacks with host settings fixed (nothing read from the
 * environment of the test process), for planning from TEST_PLAN_INVENTORY:
 * Node.js from TEST_INVENTORY, Ruby's default series 3.3 with gems from a gem
 * server, Play 1.x with TEST_PLAY1_OPTIONS. The providers of Ruby and Play 1.x
 * would still probe this machine if asked to gather: pass an inventory.
 */
export function testRegistry(options: DefaultRegistryOptions = {}): BuildpackRegistry {
  return defaultRegistry({
    node: { inventory: TEST_INVENTORY, ...options.node },
    ruby: { defaultSeries: '3.3', gemSource: 'remote', ...options.ruby },
    play1: { ...TEST_PLAY1_OPTIONS, ...options.play1 },
  });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
