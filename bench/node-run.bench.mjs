// Time to healthy and the runner's memory, on the Express fixture with a warm cache:
// `runplan run` from the moment it starts the web process until it reports the
// deployment healthy, against the application's own boot (`npm start` in the same
// build with the same Node.js and npm, then HTTP polled every 5 ms until it
// answers) — the two interleaved, run after run.
import { spawn } from 'node:child_process';
import { cpSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, freePort, median, reachableTemp, root, rssMb, spread, target, HEALTHY } from './lib.mjs';

export const title = 'node: time to healthy and runner memory';

const express = join(root, 'fixtures', 'node', 'express');
const mark = () => Number(process.hrtime.bigint()) / 1e6;

/** Starts `runplan run`; resolves with when the web process started, when its health check passed, and runplan's RSS a second after the deployment was accepted. */
async function runplanRun(cacheDir, workDir, { settledAfterMs } = {}) {
  const port = await freePort();
  const started = mark();
  const child = spawn(process.execPath, [cli, 'run', express, '--port', String(port), '--cache-dir', cacheDir, '--work-dir', workDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let webStarted;
  let healthy;
  // Healthy when the health check passed; the build becomes the application's current one once the stability window is over.
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (webStarted === undefined && /started web \(pid/.test(output)) webStarted = mark();
      if (healthy === undefined && HEALTHY.test(output)) healthy = mark();
      if (/==> deployment healthy/.test(output)) resolve();
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => reject(new Error(`runplan run exited with ${code}:\n${output}`)));
  });
  child.removeAllListeners('exit');
  await new Promise((r) => setTimeout(r, 1000));
  const rss = rssMb(child.pid);
  // Once V8's memory reducer has run (≈ 8 s after the build's allocations stop): what an idle runner keeps.
  let settled;
  if (settledAfterMs) {
    await new Promise((r) => setTimeout(r, settledAfterMs));
    settled = rssMb(child.pid);
  }
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGINT');
  await exited;
  return { total: healthy - started, afterStart: healthy - webStarted, rss, settled };
}

/** The application's own boot: `npm start` in runplan's build, with the plan's Node.js and npm, until GET / answers. */
async function ownBoot(appDir) {
  const port = await freePort();
  const started = mark();
  const env = { ...process.env, PORT: String(port), PATH: `${join(appDir, '.runplan', 'bin')}:${process.env.PATH}` };
  const child = spawn('npm', ['start'], { cwd: appDir, env, stdio: 'ignore', detached: true });
  for (;;) {
    const answered = await new Promise((resolve) => {
      const req = get({ host: '127.0.0.1', port, path: '/' }, (res) => {
        res.resume();
        resolve(true);
      });
      req.on('error', () => resolve(false));
    });
    if (answered) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const elapsed = mark() - started;
  process.kill(-child.pid, 'SIGTERM');
  return elapsed;
}

export async function run({ args }) {
  const runs = Number(args['run-runs'] ?? 7);
  const scratch = reachableTemp(join(tmpdir(), 'runplan-bench-run-'));
  try {
    const cacheDir = args['cache-dir'] ?? join(tmpdir(), 'runplan-bench-cache');
    const workDir = join(scratch, 'work');
    // Warm: Node, npm and node_modules cached by a first run.
    await runplanRun(cacheDir, workDir);
    // The same build, same Node.js and npm as runplan starts (a copy: runplan replaces its own builds).
    const [app] = readdirSync(workDir).filter((n) => n.startsWith('express-'));
    const built = join(scratch, 'express-built');
    cpSync(realpathSync(join(workDir, app, 'current')), built, { recursive: true, verbatimSymlinks: true });
    await ownBoot(built);
    const ours = [];
    const theirs = [];
    for (let i = 0; i < runs; i++) {
      ours.push(await runplanRun(cacheDir, workDir, i === runs - 1 ? { settledAfterMs: 14_000 } : {}));
      theirs.push(await ownBoot(built));
    }
    const afterStart = ours.map((o) => o.afterStart);
    const total = ours.map((o) => o.total);
    const rss = ours.map((o) => o.rss);
    console.log(`fixtures/node/express, warm cache, ${runs} runs interleaved (median, p10–p90)`);
    console.log(
      `  runplan run: web started → healthy ${median(afterStart).toFixed(0)} ms (${spread(afterStart)})   whole run (rebuild + start) → healthy ${median(total).toFixed(0)} ms (${spread(total)})`,
    );
    console.log(`  the app's own boot, npm start → HTTP answers ${median(theirs).toFixed(0)} ms (${spread(theirs)})`);
    console.log(`  runner RSS while supervising ${median(rss).toFixed(1)} MB (${spread(rss)}) 1 s after healthy (goal ≤ 60 MB); 15 s after, last run: ${ours.at(-1).settled.toFixed(1)} MB`);
    target({
      what: 'Time to healthy (web started → healthy) vs the app’s own boot + 100 ms',
      runplan: `${median(afterStart).toFixed(0)} ms`,
      against: `${median(theirs).toFixed(0)} + 100 ms`,
      limit: `${(median(afterStart) / (median(theirs) + 100)).toFixed(2)}× (≤ 1)`,
      met: median(afterStart) <= median(theirs) + 100,
    });
    target({ what: 'Runner RSS supervising Express ≤ 60 MB', runplan: `${median(rss).toFixed(1)} MB`, against: '60 MB', limit: `${(median(rss) / 60).toFixed(2)}× (≤ 1)`, met: median(rss) <= 60 });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
