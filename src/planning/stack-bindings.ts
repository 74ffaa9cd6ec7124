import { callBuildpack } from '../buildpack/call-buildpack.js';
import type { StackBindings } from '../buildpack/contract.js';
import type { BuildpackRegistry } from '../buildpack/registry.js';
import { CoreErrors } from '../errors/core-errors.js';
import { quoteExcerpt } from '../errors/excerpt.js';
import { buildpackLimits, defaultCacheDir, type HostSettings } from '../host/host-settings.js';
import type { Inventory } from '../inventory/inventory.js';
import { placeholder, type RunPlan, STACK_PLACEHOLDERS, type StackPlaceholder } from '../plan/schema.js';
import { gatherInventory, inventoryPart } from './gather-inventory.js';

/** The stack placeholders a plan uses (in a command, PATH, a variable or a file). */
export function stackPlaceholdersOf(plan: RunPlan): StackPlaceholder[] {
  const text = JSON.stringify(plan);
  return STACK_PLACEHOLDERS.filter((p) => text.includes(placeholder(p)) || text.includes(`"placeholder":"${p}"`));
}

export interface HostStackOptions {
  readonly registry: BuildpackRegistry;
  /** What is known of this host: the inventory planning used, or the one given; without it, the plan's buildpack's part is gathered now. */
  readonly inventory?: Inventory | undefined;
  readonly host?: Partial<HostSettings> | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Where this host keeps the programs the plan names but does not install: the
 * values the local executor gives the plan's stack placeholders, asked of the
 * plan's buildpack from its part of this host's inventory. A plan that uses
 * none (it installs its runtime, or runs what is on PATH) costs nothing here.
 */
export async function hostStackBindings(plan: RunPlan, options: HostStackOptions): Promise<StackBindings> {
  const used = stackPlaceholdersOf(plan);
  if (used.length === 0) return {};
  const buildpack = options.registry.get(plan.app.type);
  const names = used.map((p) => placeholder(p)).join(', ');
  if (buildpack?.stack === undefined) {
    throw CoreErrors.PLAN_STACK_UNRESOLVED.create({
      message: `the plan uses ${names}, and ${buildpack ? `the ${buildpack.name} buildpack does not say` : `no buildpack of type "${plan.app.type}" is registered to say`} where this host keeps those programs.`,
    });
  }
  const limits = buildpackLimits(options.host);
  const signal = options.signal ? { signal: options.signal } : {};
  const inventory =
    options.inventory ?? (await gatherInventory(options.registry, { cacheDir: options.host?.cacheDir ?? defaultCacheDir(), ids: [buildpack.id], timeoutMs: limits.inventoryTimeoutMs, ...signal }));
  const part = inventoryPart(inventory, buildpack);
  const bindings = await callBuildpack(buildpack.id, 'stack', { timeoutMs: limits.buildpackTimeoutMs, ...signal }, () => buildpack.stack!(plan, part));
  for (const name of used) {
    const dir = (bindings as Record<string, unknown> | undefined)?.[name];
    // A directory put on PATH: absolute (a relative one would be looked up in the application), one line.
    if (typeof dir !== 'string' || !dir.startsWith('/') || /[\0-\x1f\x7f:]/.test(dir)) {
      throw CoreErrors.PLAN_STACK_UNRESOLVED.create({
        message: `the ${buildpack.name} buildpack gives ${placeholder(name)} ${typeof dir === 'string' ? quoteExcerpt(dir) : 'no value'}, not an absolute directory of this host.`,
      });
    }
  }
  return Object.fromEntries(used.map((name) => [name, bindings[name] as string]));
}
