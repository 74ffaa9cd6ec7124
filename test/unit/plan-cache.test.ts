import { cp, rename, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Buildpack } from '../../src/buildpack/contract.js';
import { PlanCache } from '../../src/planning/plan-cache.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { ROOT } from '../helpers/cli.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';
import { tempDir } from '../helpers/temp.js';

/**
 * createPlan keeps a plan of an application on disk and gives it out again
 * while nothing it was made from changed. These tests count the calls into the
 * Node.js buildpack's detection and planning: a plan given out again calls
 * neither, and any change to its inputs or to a file it looked at plans afresh.
 */
const EXPRESS = join(ROOT, 'fixtures', 'node', 'express');

/** The test registry with its Node.js buildpack counting its calls. */
function countingRegistry() {
  const registry = testRegistry();
  const node = registry.get('node') as Buildpack;
  const calls = { detect: 0, plan: 0 };
  registry.replace({
    ...node,
    detector: {
      detect: (files) => {
        calls.detect++;
        return node.detector.detect(files);
      },
    },
    planner: {
      plan: (context) => {
        calls.plan++;
        return node.planner.plan(context);
      },
    },
  });
  return { registry, calls };
}

/** The files a test just wrote are too new to trust (RACY_MS): its clock is a minute ahead of them. */
const ahead = () => new PlanCache({ clock: { now: () => Date.now() + 60_000, sleep: async () => {} } });

async function copyOf(app: string): Promise<string> {
  const dir = join(await tempDir(), 'app');
  await cp(app, dir, { recursive: true });
  return dir;
}

describe('createPlan keeps plans of applications on disk (PlanCache)', () => {
  it('gives the same plan again without detecting or planning, and a copy the caller may change', async () => {
    const { registry, calls } = countingRegistry();
    const planCache = new PlanCache();
    const first = await createPlan({ registry, appDir: EXPRESS, inventory: TEST_PLAN_INVENTORY, planCache });
    const again = await createPlan({ registry, appDir: EXPRESS, inventory: TEST_PLAN_INVENTORY, planCache });
    expect(calls).toEqual({ detect: 1, plan: 1 });
    expect(again.plan).toEqual(first.plan);
    expect(again.plan).not.toBe(first.plan);
    // The environment is the caller's own too, with the buildpack's defaults on it.
    expect(again.environment).not.toBe(first.environment);
    expect(again.environment.toPlan()).toEqual(first.environment.toPlan());
    (again.plan.processes as unknown[]).length = 0;
    expect((await createPlan({ registry, appDir: EXPRESS, inventory: TEST_PLAN_INVENTORY, planCache })).plan).toEqual(first.plan);
  });

  it('plans afresh when the environment, the host or the buildpacks differ, and keeps a few plans of one application', async () => {
    const { registry, calls } = countingRegistry();
    const planCache = new PlanCache();
    const plan = (application: Record<string, string>, port = 8080) => createPlan({ registry, appDir: EXPRESS, inventory: TEST_PLAN_INVENTORY, planCache, env: { application }, host: { port } });
    const production = await plan({ NODE_ENV: 'production' });
    const staging = await plan({ NODE_ENV: 'staging' });
    expect(staging.plan).not.toEqual(production.plan);
    // The same files: detection is not run again.
    expect(calls).toEqual({ detect: 1, plan: 2 });
    expect((await plan({ NODE_ENV: 'production' })).plan).toEqual(production.plan);
    expect((await plan({ NODE_ENV: 'staging' })).plan).toEqual(staging.plan);
    expect(calls.plan).toBe(2);
    await plan({ NODE_ENV: 'production' }, 9000);
    expect(calls.plan).toBe(3);
    // A secret's value decides too, though the cache keeps no value (a digest).
    await plan({ NODE_ENV: 'production', NPM_TOKEN: 'one-token-value' });
    await plan({ NODE_ENV: 'production', NPM_TOKEN: 'another-token-value' });
    expect(calls.plan).toBe(5);
    // Another buildpack registered: detection may choose otherwise.
    registry.replace({ ...(registry.get('ruby') as Buildpack) });
    await plan({ NODE_ENV: 'production' });
    expect(calls).toEqual({ detect: 2, plan: 6 });
  });

  it('plans afresh when a file it read changes, a file it looked for appears, or a file becomes a link out of the application', async () => {
    const { registry, calls } = countingRegistry();
    const app = await copyOf(EXPRESS);
    const planCache = ahead();
    const plan = () => createPlan({ registry, appDir: app, inventory: TEST_PLAN_INVENTORY, planCache });
    const first = await plan();
    await plan();
    expect(calls.plan).toBe(1);

    // Same size, same second: the file's times still differ (set here, as an editor that keeps the size would change them).
    const manifest = join(app, 'package.json');
    const text = (await import('node:fs')).readFileSync(manifest, 'utf8');
    await writeFile(manifest, text.replace('"express"', '"expresz"'));
    await utimes(manifest, new Date(), new Date(Date.now() + 5_000));
    const renamed = await plan();
    expect(calls.plan).toBe(2);
    expect(renamed.plan).not.toEqual(first.plan);

    // A lock file of another tool, looked for and absent before.
    await writeFile(join(app, 'yarn.lock'), '# yarn lockfile v1\n');
    await plan();
    expect(calls.plan).toBe(3);

    // The application's root listed again after a link took a file's place: planning refuses a link out of it, so must the cache.
    const outside = join(await tempDir(), 'package.json');
    await cp(manifest, outside);
    await rename(manifest, `${manifest}.old`);
    await symlink(outside, manifest);
    await expect(plan()).rejects.toMatchObject({ code: 'RUNPLAN_E_APP_PATH_OUTSIDE' });
  });

  it('keeps no plan that looked at a link of the application, even one that stays inside it', async () => {
    const { registry, calls } = countingRegistry();
    const app = await copyOf(EXPRESS);
    await rename(join(app, 'package.json'), join(app, 'manifest.json'));
    await symlink('manifest.json', join(app, 'package.json'));
    const planCache = ahead();
    const first = await createPlan({ registry, appDir: app, inventory: TEST_PLAN_INVENTORY, planCache });
    const again = await createPlan({ registry, appDir: app, inventory: TEST_PLAN_INVENTORY, planCache });
    expect(again.plan).toEqual(first.plan);
    expect(calls.plan).toBe(2);
  });

  it('keeps no plan of files changed within the last seconds, and none at all when told not to', async () => {
    const { registry, calls } = countingRegistry();
    // The real clock: a copy made just now is too new to trust.
    const fresh = await copyOf(EXPRESS);
    const planCache = new PlanCache();
    await createPlan({ registry, appDir: fresh, inventory: TEST_PLAN_INVENTORY, planCache });
    await createPlan({ registry, appDir: fresh, inventory: TEST_PLAN_INVENTORY, planCache });
    expect(calls.plan).toBe(2);
    await createPlan({ registry, appDir: EXPRESS, inventory: TEST_PLAN_INVENTORY, planCache: false });
    await createPlan({ registry, appDir: EXPRESS, inventory: TEST_PLAN_INVENTORY, planCache: false });
    expect(calls.plan).toBe(4);
  });

  it('forgets the least recently used application beyond its size', async () => {
    const { registry, calls } = countingRegistry();
    const planCache = new PlanCache({ entries: 1 });
    const other = join(ROOT, 'fixtures', 'node', 'start-script');
    for (const app of [EXPRESS, other, EXPRESS]) await createPlan({ registry, appDir: app, inventory: TEST_PLAN_INVENTORY, planCache });
    expect(calls.plan).toBe(3);
  });
});
