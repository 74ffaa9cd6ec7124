// Node.js builds for real: a warm rebuild of the Express fixture against raw
// `npm ci` with the same warm caches, a cold build (empty runplan cache), and a
// second build once the Node version is in the cache.
import { cpSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, median, ms, ratio, root, timeCommand, reachableTemp } from './lib.mjs';

export const title = 'node builds';

const express = join(root, 'fixtures', 'node', 'express');
const quiet = { stdio: 'ignore' };

function build(app, cacheDir, workDir, extra = []) {
  return timeCommand(process.execPath, [cli, 'build', app, '--cache-dir', cacheDir, '--work-dir', workDir, ...extra], quiet);
}

export async function run({ args }) {
  const runs = Number(args['build-runs'] ?? 5);
  const scratch = reachableTemp(join(tmpdir(), 'runplan-bench-'));
  try {
    // Warm: the shared cache already holds Node, npm and the node_modules layer.
    const warmCache = args['cache-dir'] ?? join(tmpdir(), 'runplan-bench-cache');
    const work = join(scratch, 'work');
    build(express, warmCache, work);
    const rebuilds = Array.from({ length: runs }, () => build(express, warmCache, work));

    // Raw npm ci of the same app, with npm's own cache warm (it was just used).
    const copy = join(scratch, 'express-copy');
    cpSync(express, copy, { recursive: true });
    timeCommand('npm', ['ci', '--no-audit', '--no-fund'], { cwd: copy, ...quiet });
    const npmCi = Array.from({ length: runs }, () => {
      rmSync(join(copy, 'node_modules'), { recursive: true, force: true });
      return timeCommand('npm', ['ci', '--no-audit', '--no-fund'], { cwd: copy, ...quiet });
    });
    console.log(`warm rebuild of fixtures/node/express (Node, npm and node_modules cached), median of ${runs}`);
    console.log(`  runplan build ${ms(median(rebuilds))}   raw npm ci ${ms(median(npmCi))}   ratio ${ratio(median(rebuilds), median(npmCi))}`);

    // Cold: an empty runplan cache, so Node.js and npm are downloaded and unpacked (npm's own cache stays warm).
    const coldCache = join(scratch, 'cold-cache');
    const cold = build(express, coldCache, join(scratch, 'cold-work'));
    // Second build of another app on the same Node.js: the runtime comes from the cache, the dependencies are installed.
    const other = join(scratch, 'express-other');
    cpSync(express, other, { recursive: true });
    const second = build(other, coldCache, join(scratch, 'cold-work'));
    console.log('cold build of fixtures/node/express with an empty runplan cache, then a second app on the now cached Node.js');
    console.log(`  cold ${ms(cold)}   second ${ms(second)}   cold/npm ci ${ratio(cold, median(npmCi))}   second/cold ${ratio(second, cold)}   second/npm ci ${ratio(second, median(npmCi))}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
