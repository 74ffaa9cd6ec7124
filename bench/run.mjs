#!/usr/bin/env node
// Performance figures of runplan, printed in one run. Numbers are measured here,
// never asserted in tests. Usage: npm run bench [-- --plans N --cli-runs N]
import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { plans: { type: 'string', default: '2000' }, 'cli-runs': { type: 'string', default: '15' } } });
const PLANS = Number(values.plans);
const CLI_RUNS = Number(values['cli-runs']);
const express = join(root, 'fixtures', 'node', 'express');
const { createPlan, defaultRegistry } = await import(join(root, 'dist', 'index.js'));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (x) => `${x.toFixed(3)} ms`;

console.log(`runplan bench — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`);

// 1. In-process planning of the Express fixture (real files on disk).
const registry = defaultRegistry();
const options = { registry, appDir: express, host: { cacheDir: '/tmp/runplan-bench-cache' } };
for (let i = 0; i < 100; i++) await createPlan(options);
const planTimes = [];
for (let i = 0; i < PLANS; i++) {
  const t = process.hrtime.bigint();
  await createPlan(options);
  planTimes.push(Number(process.hrtime.bigint() - t) / 1e6);
}
console.log(`\nin-process plan, express fixture, ${PLANS} plans after 100 warm-up`);
console.log(`  median ${ms(median(planTimes))}   p95 ${ms(percentile(planTimes, 95))}   plans/s ${(1000 / median(planTimes)).toFixed(0)}`);

// 2. Cold CLI: a new process per plan, as a CI job or a shell user would run it.
const cli = join(root, 'dist', 'cli.js');
const time = (args) => {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
};
time([cli, 'plan', express, '--json']);
const cliTimes = Array.from({ length: CLI_RUNS }, () => time([cli, 'plan', express, '--json']));
const nodeTimes = Array.from({ length: CLI_RUNS }, () => time(['-e', '0']));
console.log(`\ncold CLI \`runplan plan fixtures/node/express --json\`, ${CLI_RUNS} runs`);
console.log(`  median ${ms(median(cliTimes))}   bare \`node -e 0\` ${ms(median(nodeTimes))}   ratio ${(median(cliTimes) / median(nodeTimes)).toFixed(2)}×`);
console.log(`\nreproduce: npm run bench   (runplan ${execFileSync(process.execPath, [cli, '--version'], { encoding: 'utf8' }).trim()})`);
