// Planning speed: in-process createPlan, and the cold CLI against bare Node start-up.
import { join } from 'node:path';
import { cli, median, ms, percentile, ratio, root, timeCommand } from './lib.mjs';

export const title = 'planning';

export async function run({ args }) {
  const plans = Number(args.plans ?? 2000);
  const cliRuns = Number(args['cli-runs'] ?? 15);
  const express = join(root, 'fixtures', 'node', 'express');
  const { createPlan, defaultRegistry, gatherInventory } = await import(join(root, 'dist', 'index.js'));

  // As a host plans: the inventory gathered once (it runs npm), then every plan reads files only.
  const registry = defaultRegistry();
  const inventory = await gatherInventory(registry, { cacheDir: args['cache-dir'] ?? join(root, '.runplan', 'bench-cache'), ids: ['node'] });
  const options = { registry, appDir: express, inventory };
  for (let i = 0; i < 100; i++) await createPlan(options);
  const planTimes = [];
  for (let i = 0; i < plans; i++) {
    const t = process.hrtime.bigint();
    await createPlan(options);
    planTimes.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  console.log(`in-process plan from a gathered inventory, express fixture, ${plans} plans after 100 warm-up`);
  console.log(`  median ${ms(median(planTimes))}   p95 ${ms(percentile(planTimes, 95))}   plans/s ${(1000 / median(planTimes)).toFixed(0)}`);

  timeCommand(process.execPath, [cli, 'plan', express, '--json']);
  const cliTimes = Array.from({ length: cliRuns }, () => timeCommand(process.execPath, [cli, 'plan', express, '--json']));
  const nodeTimes = Array.from({ length: cliRuns }, () => timeCommand(process.execPath, ['-e', '0']));
  console.log(`cold CLI \`runplan plan fixtures/node/express --json\`, ${cliRuns} runs`);
  console.log(`  median ${ms(median(cliTimes))}   bare \`node -e 0\` ${ms(median(nodeTimes))}   ratio ${ratio(median(cliTimes), median(nodeTimes))}`);
}
