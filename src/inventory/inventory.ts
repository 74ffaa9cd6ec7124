import { z } from 'zod';

/**
 * The inventory: everything planning learns from this machine and the network —
 * versions that can be installed and their digests, programs present, the
 * machine's size — gathered once, before any buildpack plans. Planning from a
 * saved inventory runs no program and opens no connection, so the same
 * application, environment and inventory always give the same plan.
 */
export const INVENTORY_SCHEMA_VERSION = 1 as const;

const InstanceSizeSchema = z.object({
  cpus: z.number().int().positive(),
  memoryMb: z.number().int().positive(),
});

/** The schema of an inventory: what runplan learned from a machine for planning (`runplan inventory`). */
export const InventorySchema = z
  .object({
    schemaVersion: z.literal(INVENTORY_SCHEMA_VERSION),
    host: z.object({ instance: InstanceSizeSchema.describe("This machine's size, the instance size when the host declares none.") }),
    buildpacks: z.record(z.string(), z.unknown()).describe("Each buildpack's part, by buildpack id, in the shape that buildpack declares."),
  })
  .describe('What runplan learned from a machine for planning.');

/** What runplan learned from a machine for planning: its size and each buildpack's part (gatherInventory, parseInventory). */
export type Inventory = z.infer<typeof InventorySchema>;

/** What a buildpack's inventory provider may use while gathering. */
export interface GatherContext {
  /** The host's cache: a provider may keep what it fetched there (e.g. a version list for a day). */
  readonly cacheDir: string;
}

/**
 * How a buildpack learns what its planner needs. `gather` may run programs and
 * open connections; the planner then only reads the validated result.
 */
export interface InventoryProvider<T = unknown> {
  readonly schema: z.ZodType<T>;
  gather(context: GatherContext): Promise<T>;
}
