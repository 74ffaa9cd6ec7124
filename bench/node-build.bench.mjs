// Node.js builds for real: a warm rebuild of the Express fixture against raw
// `npm ci` with the same warm caches, a cold build (empty runplan cache), and a
// second build once the Node version is in the cache.
//
// A host's rebuild is measured as serve makes it: in its long-lived process,
// LocalExecutor.build of the freshly planned push (with the application's
// sandbox where this machine has one), from planning to the build ready to
// start; accepting it (the switch, the older builds removed, the next build's
// copy of node_modules prepared) is done between pushes, off the clock, as it is
// off a deployment's way. `runplan build` is also timed whole, as a new process
// that exits only once all of that is done.
import { cpSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, median, ms, ratio, root, spread, target, timeAsync, timeCommand, reachableTemp } from './lib.mjs';

export const title = 'node builds';

const express = join(root, 'fixtures', 'node', 'express');
const quiet = { stdio: 'ignore' };

function build(app, cacheDir, workDir, extra = []) {
  return timeCommand(process.execPath, [cli, 'build', app, '--cache-dir', cacheDir, '--work-dir', workDir, ...extra], quiet);
}

const CGROUP = 'runplan-bench-build';

/** What serve does with a push, on the local engine: returns the timing of one rebuild (ms), accepting it afterwards off the clock. */
async function hostRebuilder(cacheDir, workDir) {
  const { AppSandbox, LocalExecutor, defaultRegistry, planToCarryOut } = await import(join(root, 'dist', 'index.js'));
  const { appUser } = await import(join(root, 'dist', 'internals.js'));
  const registry = defaultRegistry();
  let sandbox;
  try {
    await AppSandbox.check();
    const user = await appUser();
    sandbox = new AppSandbox({ user, cgroup: [CGROUP, 'express'], readable: [cacheDir] });
  } catch {
    // Not root, or no bubblewrap or cgroups: serve would refuse to start; the build is timed without walls.
  }
  const host = { workDir, cacheDir };
  return {
    confined: sandbox !== undefined,
    async rebuild() {
      const executor = new LocalExecutor({ appDir: express, registry, sink: () => {}, ...(sandbox ? { sandbox } : {}) });
      let built;
      const took = await timeAsync(async () => {
        built = await executor.build(await planToCarryOut({ registry, appDir: express, host }), {});
      });
      await (await executor.accept(built)).settled;
      return took;
    },
    close: () => (sandbox ? AppSandbox.removeCgroups([CGROUP]) : Promise.resolve()),
  };
}

export async function run({ args }) {
  const runs = Number(args['build-runs'] ?? 5);
  const scratch = reachableTemp(join(tmpdir(), 'runplan-bench-'));
  let host;
  try {
    // Warm: the shared cache already holds Node, npm and the node_modules layer.
    const warmCache = args['cache-dir'] ?? join(tmpdir(), 'runplan-bench-cache');
    const work = join(scratch, 'work');
    build(express, warmCache, work);
    host = await hostRebuilder(warmCache, join(scratch, 'host-work'));
    // The host's process is warm too: planning's modules loaded, the next build's copy ready.
    await host.rebuild();
    // Raw npm ci of the same app, with npm's own cache warm (it was just used).
    const copy = join(scratch, 'express-copy');
    cpSync(express, copy, { recursive: true });
    timeCommand('npm', ['ci', '--no-audit', '--no-fund'], { cwd: copy, ...quiet });
    // The floor of a rebuild: hard-linking the finished build tree, as `cp -al` does.
    const [app] = readdirSync(work);
    const tree = realpathSync(join(work, app, 'current'));
    // Interleaved, run after run, so that a change of the machine's load hits all three alike.
    const rebuilds = [];
    const hostRebuilds = [];
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
      hostRebuilds.push(await host.rebuild());
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
    console.log(
      `  a host's rebuild (in serve's process${host.confined ? ', in the app sandbox' : ', no sandbox on this machine'}) ${ms(median(hostRebuilds))} (${spread(hostRebuilds)})   ratio ${ratio(median(hostRebuilds), median(npmCi))} (goal ≤ 0.25×)`,
    );
    console.log(
      `  runplan build, a new process ${ms(median(rebuilds))} (${spread(rebuilds)})   raw npm ci ${ms(median(npmCi))} (${spread(npmCi)})   ratio ${ratio(median(rebuilds), median(npmCi))} (goal ≤ 0.25×)`,
    );
    console.log(`  cp -al of the build tree (${tree.split('/').slice(-1)[0]}) ${ms(median(links))} (${spread(links)})   ratio ${ratio(median(rebuilds), median(links))}`);
    console.log(`  cp -alL, the same tree with the runtime's files ${ms(median(wholeLinks))} (${spread(wholeLinks)})   ratio ${ratio(median(rebuilds), median(wholeLinks))}`);
    console.log(`  cp -a of node_modules alone (the copy a restore of the sealed layer makes) ${ms(median(layerCopies))} (${spread(layerCopies)})`);
    target({
      what: "Warm rebuild of Express ≤ 0.25× raw warm npm ci, a host's (serve's process, LocalExecutor.build)",
      runplan: ms(median(hostRebuilds)),
      against: ms(median(npmCi)),
      limit: `${ratio(median(hostRebuilds), median(npmCi))} (≤ 0.25×)`,
      met: median(hostRebuilds) <= 0.25 * median(npmCi),
      note: `node_modules taken by a rename from the copy made when the previous build was accepted (cp -a of it: ${ms(median(layerCopies))} on this machine's disk)`,
    });
    target({
      what: 'The same with runplan build (a new process, until it exits)',
      runplan: ms(median(rebuilds)),
      against: ms(median(npmCi)),
      limit: `${ratio(median(rebuilds), median(npmCi))} (≤ 0.25×)`,
      met: median(rebuilds) <= 0.25 * median(npmCi),
      note: 'the process also starts Node.js and plans, then removes the older build and prepares the next build’s copy before it exits',
    });
    target({
      what: "A host's warm rebuild of Express ≤ 1.5× cp -al of the same build tree (runtime files included, cp -alL)",
      runplan: ms(median(hostRebuilds)),
      against: ms(median(wholeLinks)),
      limit: `${ratio(median(hostRebuilds), median(wholeLinks))} (≤ 1.5×)`,
      met: median(hostRebuilds) <= 1.5 * median(wholeLinks),
      note: `runplan build ${ratio(median(rebuilds), median(wholeLinks))}; against cp -al of the tree as runplan now leaves it (runtime shared by links) ${ratio(median(hostRebuilds), median(links))}: a rebuild also plans, copies the source and takes the lock`,
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
    await host?.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
