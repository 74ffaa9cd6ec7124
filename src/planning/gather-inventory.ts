import { availableParallelism, totalmem } from 'node:os';
import type { Buildpack } from '../buildpack/contract.js';
import type { BuildpackRegistry } from '../buildpack/registry.js';
import { buildpackFailed, callBuildpack } from '../buildpack/call-buildpack.js';
import { CoreErrors } from '../errors/core-errors.js';
import { quoteJsonValue } from '../errors/excerpt.js';
import { listIssues } from '../errors/issues.js';
import { buildpackLimits } from '../host/host-settings.js';
import { INVENTORY_SCHEMA_VERSION, InventorySchema, type Inventory } from '../inventory/inventory.js';
import { isDeepStrictEqual } from 'node:util';
import { partDigest, recordValidated, validatedBefore } from './validated-parts.js';

/** Options of gatherInventory. */
export interface GatherOptions {
  /** The host's cache, where providers keep what they fetched. */
  readonly cacheDir: string;
  /** Only these buildpacks' parts (default: every registered buildpack with a provider). */
  readonly ids?: readonly string[];
  /** Parts already known: kept, not gathered again. */
  readonly base?: Inventory;
  /** How long one provider may take (default: the host's inventory timeout, RUNPLAN_INVENTORY_TIMEOUT or 600 s). */
  readonly timeoutMs?: number;
  /** Stops waiting for a provider (RUNPLAN_E_BUILD_INTERRUPTED). */
  readonly signal?: AbortSignal;
}

/** This machine's size, as the inventory records it: asked once per process (a plan without an inventory given asks on every call). */
export function machineInstance(): Inventory['host']['instance'] {
  machine ??= { cpus: availableParallelism(), memoryMb: Math.floor(totalmem() / 1048576) };
  return { ...machine };
}
let machine: Inventory['host']['instance'] | undefined;

/**
 * Asks each buildpack's provider what it needs to plan (it may run programs and
 * open connections), validating every part. Parts are gathered one after the
 * other and keyed by buildpack id in a stable order, so the same machine gives
 * the same document.
 */
export async function gatherInventory(registry: BuildpackRegistry, options: GatherOptions): Promise<Inventory> {
  const parts: Record<string, unknown> = { ...options.base?.buildpacks };
  const wanted = registry.list().filter((bp) => bp.inventory && (options.ids === undefined || options.ids.includes(bp.id)));
  const limit = { timeoutMs: options.timeoutMs ?? buildpackLimits().inventoryTimeoutMs, ...(options.signal ? { signal: options.signal } : {}) };
  for (const bp of wanted) {
    if (bp.id in parts) continue;
    const gathered = await callBuildpack(bp.id, 'gather', limit, () => bp.inventory!.gather({ cacheDir: options.cacheDir }));
    parts[bp.id] = await validateGathered(bp, gathered, options.cacheDir);
  }
  const buildpacks = Object.fromEntries(
    Object.keys(parts)
      .sort()
      .map((id) => [id, parts[id]]),
  );
  return { schemaVersion: INVENTORY_SCHEMA_VERSION, host: options.base?.host ?? { instance: machineInstance() }, buildpacks };
}

/** Validates an inventory read from JSON. */
export function parseInventory(json: unknown, origin = 'the inventory'): Inventory {
  const version = (json as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== undefined && version !== INVENTORY_SCHEMA_VERSION) {
    throw CoreErrors.INVENTORY_INVALID.create({ message: `${origin} has schema version ${quoteJsonValue(version)}; this runplan reads version ${INVENTORY_SCHEMA_VERSION}.`, file: origin });
  }
  const parsed = InventorySchema.safeParse(json);
  if (!parsed.success) {
    throw CoreErrors.INVENTORY_INVALID.create({ message: `${origin} is not a valid inventory: ${listIssues(parsed.error.issues)}.`, file: origin });
  }
  return parsed.data;
}

/** The buildpack's validated part of `inventory`; undefined when the buildpack has no provider. */
export function inventoryPart(inventory: Inventory, bp: Buildpack): unknown {
  if (!bp.inventory) return undefined;
  if (!(bp.id in inventory.buildpacks)) {
    throw CoreErrors.INVENTORY_INCOMPLETE.create({
      message: `the inventory has no "${bp.id}" part (it covers ${Object.keys(inventory.buildpacks).join(', ') || 'no buildpack'}), so the ${bp.name} buildpack cannot plan from it.`,
    });
  }
  return validatePart(bp, inventory.buildpacks[bp.id], 'the inventory');
}

/**
 * Inventories are data, read and never changed. A host plans many apps from one
 * gathered inventory: each part is validated once (what validation returns counts
 * as validated too), and the buildpack's per-list caches see the same objects.
 */
const validatedParts = new WeakMap<object, WeakMap<object, unknown>>();

function remembered(value: unknown, schema: object): { value: unknown } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const bySchema = validatedParts.get(value);
  return bySchema?.has(schema) ? { value: bySchema.get(schema) } : undefined;
}

function remember(value: unknown, schema: object, validated: unknown): void {
  for (const key of [value, validated]) {
    if (typeof key !== 'object' || key === null) continue;
    let bySchema = validatedParts.get(key);
    if (bySchema === undefined) {
      bySchema = new WeakMap();
      validatedParts.set(key, bySchema);
    }
    bySchema.set(schema, validated);
  }
}

/**
 * A provider's part, validated, or trusted as validated: in this process (the
 * same object), or by an earlier one with the same cache (validated-parts.ts).
 * A part Zod gives back changed (defaults, stripped keys) is never recorded.
 */
async function validateGathered(bp: Buildpack, value: unknown, cacheDir: string): Promise<unknown> {
  const schema = bp.inventory!.schema;
  const known = remembered(value, schema);
  if (known) return known.value;
  const digest = partDigest(bp.id, schema, value);
  if (digest !== undefined && validatedBefore(cacheDir, digest)) {
    remember(value, schema, value);
    return value;
  }
  const validated = validatePart(bp, value, 'its provider');
  if (digest !== undefined && isDeepStrictEqual(validated, value)) await recordValidated(cacheDir, digest);
  return validated;
}

function validatePart(bp: Buildpack, value: unknown, origin: string): unknown {
  const schema = bp.inventory!.schema;
  const known = remembered(value, schema);
  if (known) return known.value;
  let parsed: ReturnType<typeof schema.safeParse>;
  try {
    // The buildpack's own schema: its refinements are its code.
    parsed = schema.safeParse(value);
  } catch (error) {
    throw buildpackFailed(bp.id, 'schema', error);
  }
  if (!parsed.success) {
    throw CoreErrors.INVENTORY_INVALID.create({ message: `the "${bp.id}" part of ${origin} is not valid: ${listIssues(parsed.error.issues)}.` });
  }
  remember(value, schema, parsed.data);
  return parsed.data;
}
