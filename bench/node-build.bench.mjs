// Node.js builds for real: a warm rebuild of the Express fixture against raw
// `npm ci` with the same warm caches, a cold build (empty runplan cache), and a
// second build once the Node version is in the cache.
import { cpSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, median, ms, ratio, root, spread, target, timeCommand, reachableTemp } from './lib.mjs';

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
    // Raw npm ci of the same app, with npm's own cache warm (it was just used).
    const copy = join(scratch, 'express-copy');
    cpSync(express, copy, { recursive: true });
    timeCommand('npm', ['ci', '--no-audit', '--no-fund'], { cwd: copy, ...quiet });
    // The floor of a rebuild: hard-linking the finished build tree, as `cp -al` does.
    const [app] = readdirSync(work);
    const tree = realpathSync(join(work, app, 'current'));
    // Interleaved, run after run, so that a change of the machine's load hits all three alike.
    const rebuilds = [];
    const npmCi = [];
    const links = [];
    const wholeLinks = [];
    const layerCopies = [];
    const linkTree = (times, flags, i) => {
      const linked = join(scratch, `linked-${i}`);
      times.push(timeCommand('cp', [flags, realpathSync(join(work, app, 'current')), linked], quiet));
      rmSync(linked, { recursive: true, force: true });
    };
    for (let i = 0; i < runs; i++) {
      rebuilds.push(build(express, warmCache, work));
      rmSync(join(copy, 'node_modules'), { recursive: true, force: true });
      npmCi.push(timeCommand('npm', ['ci', '--no-audit', '--no-fund'], { cwd: copy, ...quiet }));
      // The tree as runplan leaves it (the runtime is a few links into the read-only cache)...
      linkTree(links, '-al', i);
      // ...and the whole tree the application sees, the runtime's files included (-L): what hard-linking it file by file costs.
      linkTree(wholeLinks, '-alL', i);
      // What restoring the sealed layer does at the least: a copy of node_modules file by file (runplan streams it as the application's user).
      const copied = join(scratch, `node_modules-${i}`);
      layerCopies.push(timeCommand('cp', ['-a', join(realpathSync(join(work, app, 'current')), 'node_modules'), copied], quiet));
      rmSync(copied, { recursive: true, force: true });
    }
    console.log(`warm rebuild of fixtures/node/express (Node, npm and node_modules cached), median of ${runs} interleaved (p10–p90)`);
    console.log(`  runplan build ${ms(median(rebuilds))} (${spread(rebuilds)})   raw npm ci ${ms(median(npmCi))} (${spread(npmCi)})   ratio ${ratio(median(rebuilds), median(npmCi))}`);
    console.log(`  cp -al of the build tree (${tree.split('/').slice(-1)[0]}) ${ms(median(links))} (${spread(links)})   ratio ${ratio(median(rebuilds), median(links))}`);
    console.log(`  cp -alL, the same tree with the runtime's files ${ms(median(wholeLinks))} (${spread(wholeLinks)})   ratio ${ratio(median(rebuilds), median(wholeLinks))}`);
    console.log(`  cp -a of node_modules alone (the copy a restore of the sealed layer makes) ${ms(median(layerCopies))} (${spread(layerCopies)})`);
    target({
      what: 'Warm rebuild of Express ≤ 0.25× raw warm npm ci',
      runplan: ms(median(rebuilds)),
      against: ms(median(npmCi)),
      limit: `${ratio(median(rebuilds), median(npmCi))} (≤ 0.25×)`,
      met: median(rebuilds) <= 0.25 * median(npmCi),
      note: `of which copying node_modules in from the sealed cache costs at least ${ms(median(layerCopies))} (cp -a) on this machine's disk`,
    });
    target({
      what: 'Warm rebuild of Express ≤ 1.5× cp -al of the same build tree (runtime files included, cp -alL)',
      runplan: ms(median(rebuilds)),
      against: ms(median(wholeLinks)),
      limit: `${ratio(median(rebuilds), median(wholeLinks))} (≤ 1.5×)`,
      met: median(rebuilds) <= 1.5 * median(wholeLinks),
      note: `against cp -al of the tree as runplan now leaves it (runtime shared by links) ${ratio(median(rebuilds), median(links))}: a rebuild also starts Node.js, plans, copies the source and takes the lock`,
    });

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
