import { describe, expect, it } from 'vitest';
import type { Buildpack } from '../../src/buildpack/contract.js';
import { isOwnPlanner } from '../../src/buildpack/own-planners.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { TEST_PLAN_INVENTORY } from '../helpers/inventory.js';
import { offlineRegistry } from '../helpers/node-inventory.js';

// createPlan trusts the contribution of the built-in buildpacks' planners only (src/buildpack/own-planners.ts).
describe('own planners', () => {
  it("are the built-in buildpacks', frozen: no other planner can be put in their place", () => {
    const node = offlineRegistry().get('node') as Buildpack;
    expect(isOwnPlanner(node.planner)).toBe(true);
    expect(Object.isFrozen(node.planner)).toBe(true);
    expect(() => {
      (node.planner as { plan: unknown }).plan = async () => ({});
    }).toThrow(TypeError);
  });

  it("a built-in buildpack given another planner has that planner's part checked, as a host's buildpack", async () => {
    const node = offlineRegistry().get('node') as Buildpack;
    const other: Buildpack = { ...node, planner: { plan: async (context) => ({ ...(await node.planner.plan(context)), processes: [{ name: '' } as never] }) } };
    expect(isOwnPlanner(other.planner)).toBe(false);
    const files = new MemorySource({ 'package.json': '{"name":"a","version":"1.0.0","scripts":{"start":"node a.js"}}', 'a.js': '' });
    await expect(createPlan({ registry: new BuildpackRegistry([other]), files, appDir: '/a', inventory: TEST_PLAN_INVENTORY })).rejects.toMatchObject({
      code: CoreErrors.BUILDPACK_RESULT_INVALID.code,
      details: { buildpack: 'node', phase: 'plan' },
    });
  });
});
