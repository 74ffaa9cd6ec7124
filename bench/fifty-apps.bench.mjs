// runplan-host at fifty applications (issue 39), on the local engine: N small
// applications (Express, Rails and Play fixtures, at least 80 % Node) created and
// pushed 5 at a time over SSH; serve's resident memory and an idle application's;
// the p99 of one application's requests through the edge while the others are
// pushed, and every failed request on an application not being deployed; how long
// serve takes to bring all of them back after a restart; and 20 concurrent pushes,
// each accepted or rejected as git says, master == serving afterwards.
// Then the same on a single-node Docker swarm (`init --engine swarm`) where a Docker engine
// can be had: a dockerd of the bench's own (scripts/test-engine.mjs) made a swarm on
// 127.0.0.1, unless DOCKER_HOST names a swarm manager; fewer applications by default.
//   npm run bench -- --only fifty                       50 applications locally, then 20 on a swarm
//   RUNPLAN_BENCH_APPS=5 npm run bench -- --only fifty  fewer on both (also --apps 5)
//   npm run bench -- --only fifty --engine swarm --apps 20   one engine only (also RUNPLAN_BENCH_ENGINE)
//   --restarts 3 (RUNPLAN_BENCH_RESTARTS=3)             the restart timed 3 times on the same applications
//   --release-network own --disk-mb 512                 each release in its own network, each application on its own disk
// Everything runs on 127.0.0.1; the bench stops what it started and removes what it made.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listFixtures, prepareCopy } from '../scripts/fixture-kit.mjs';
import { keepAsking, pool, roundRobin } from './asking.mjs';
import { appUserName, BenchHost, onEachEngine, startSwarm } from './host-lib.mjs';
import { median, percentile, reachableTemp, root, rssMb, target } from './lib.mjs';

export const title = 'runplan-host at fifty applications (local engine, then a Docker swarm)';

const ORG = 'bench';
/** Pushes at a time while the applications are first deployed (the issue's figure). */
const WIDTH = 5;
const GOALS = { serveMb: 150, backS: 60 };
/** Applications on the swarm by default: what this 2-core machine reached in under 30 minutes (docs/perf.md). */
const SWARM_APPS = 20;
const PLAY_RELEASE = '1.11.0';

/** The applications: Rails and Play each about 8 % (at least one of each from 3 applications on), the rest Express. */
function appMix(n) {
  const other = n >= 3 ? Math.max(1, Math.round(n * 0.08)) : 0;
  return Array.from({ length: n }, (_, i) => (i >= n - other ? 'play1' : i >= n - 2 * other ? 'ruby' : 'node'));
}

/** Each type's fixture, prepared once (the Rails one's Gemfile.lock made with this machine's gems), and the variables it needs. */
function fixtures(mix) {
  const find = (type, name) => listFixtures(type).find((f) => f.name === name);
  const rails = find('ruby', 'rails-puma-config');
  const prepared = mix.includes('ruby') ? prepareCopy(rails) : undefined;
  return {
    node: { dir: join(root, 'fixtures', 'node', 'express'), env: { CC_HEALTH_CHECK_PATH: '/' } },
    ruby: { dir: prepared?.dir, env: rails.expect.env, cleanup: prepared?.cleanup },
    play1: { dir: join(root, 'fixtures', 'play1', 'health-root'), env: {} },
  };
}

/** The stand-in Play distribution (NOT Play: test/stand-in/play1/README.md) on a mirror of our own, as the host's tests serve it. */
async function play1Mirror(scratch) {
  const { buildStandIn } = await import(join(root, 'test', 'stand-in', 'play1', 'build-stand-in.mjs'));
  const archive = (await buildStandIn({ cacheDir: join(scratch, 'stand-in'), releases: [PLAY_RELEASE] })).archives[PLAY_RELEASE].zip;
  const bytes = readFileSync(archive.file);
  const server = createServer((req, res) => (req.url === `/play-${PLAY_RELEASE}.zip` ? res.writeHead(200, { 'content-length': bytes.length }).end(bytes) : res.writeHead(404).end()));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return { env: { RUNPLAN_PLAY1_MIRROR: `${base}/play-{version}.zip`, RUNPLAN_PLAY1_CHECKSUMS: `${PLAY_RELEASE}=${archive.sha256}` }, close: () => new Promise((r) => server.close(r)) };
}

/**
 * What keeps one application's release running apart from serve (the local engine): the s6-supervise and s6-log
 * processes of its run (`<app_id>.r<N>--<process>`, as their arguments name it), each one's resident and
 * proportional memory (RSS, and PSS: the shared C library counted once across all of them), in MB.
 */
function keeperMemory(appId) {
  let rss = 0;
  let pss = 0;
  let count = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!/^(\/usr\/bin\/)?s6-(supervise|log)\0/.test(args) || !args.includes(`${appId}.r`)) continue;
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      rss += Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) / 1024;
      pss += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) / 1024;
      count += 1;
    } catch {
      // Gone meanwhile.
    }
  }
  return { rss, pss, count };
}

/** The processes running as an application's own user (its release's web process and children): name and VmRSS in MB. */
function appProcesses(uid) {
  const found = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== uid) continue;
      const name = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(0, 3).join(' ').slice(0, 60);
      found.push({ name, rss: Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024 });
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

const pidIn = (file) => Number(readFileSync(file, 'utf8').trim());
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
const mb = (x) => `${x.toFixed(1)} MB`;
const line = (what, value, goal = '') => console.log(`  ${what.padEnd(62)} ${value}${goal ? `   (goal ${goal})` : ''}`);

/** Both engines unless one is named (--engine or RUNPLAN_BENCH_ENGINE); 50 applications locally, fewer on a swarm. */
export async function run({ args }) {
  const apps = args.apps ?? process.env.RUNPLAN_BENCH_APPS;
  await onEachEngine(args.engine ?? process.env.RUNPLAN_BENCH_ENGINE, (engine) =>
    runOn({ args, engine, n: Number(apps ?? (engine === 'local' ? 50 : (process.env.RUNPLAN_BENCH_SWARM_APPS ?? SWARM_APPS))) }),
  );
}

async function runOn({ args, engine, n }) {
  const concurrent = Number(args['concurrent-pushes'] ?? process.env.RUNPLAN_BENCH_PUSHES ?? 20);
  const restarts = Math.max(1, Number(args.restarts ?? process.env.RUNPLAN_BENCH_RESTARTS ?? 1));
  // runplan's cache as the tests keep it: the runtimes are there already, as on a host that has run a while.
  const cacheDir = args['cache-dir'] ?? process.env.RUNPLAN_TEST_CACHE_DIR ?? join(tmpdir(), 'runplan-test-cache');
  const scratch = reachableTemp(join(tmpdir(), 'runplan-bench-fifty-'));
  const runStarted = performance.now();
  const mix = appMix(n);
  const apps = [];
  let host;
  let mirror;
  let kit;
  let swarm;
  try {
    kit = fixtures(mix);
    mirror = mix.includes('play1') ? await play1Mirror(scratch) : undefined;
    swarm = engine === 'swarm' ? await startSwarm(cacheDir, new Set(mix)) : undefined;
    host = await BenchHost.create({
      cacheDir,
      org: ORG,
      serveEnv: { ...mirror?.env, RUNPLAN_RUBY_GEM_SOURCE: 'local' },
      initArgs: swarm ? ['--engine', 'swarm', '--docker-host', swarm.host] : [],
      // An operator's serve: its stop leaves the applications serving (the restart below stops them with stop-apps).
      keepApps: true,
      // --release-network own, --disk-mb N: the walls of issue 47 (docs/security.md, "Tenancy").
      settings: {
        ...(args['release-network'] === undefined ? {} : { releaseNetwork: args['release-network'] }),
        ...(args['disk-mb'] === undefined ? {} : { diskMb: Number(args['disk-mb']) }),
      },
    });
    const serveJustStarted = rssMb(host.serve.pid);
    console.log(
      `${n} applications (${mix.filter((t) => t === 'node').length} Express, ${mix.filter((t) => t === 'ruby').length} Rails, ${mix.filter((t) => t === 'play1').length} Play 1.x stand-in) on the ${engine} engine, pushed ${WIDTH} at a time; load average before: ${loadAverage()}`,
    );

    // Create every application and its repository (what `create` and `env import` do, 5 at a time).
    await pool(mix, WIDTH, async (type, i) => {
      const name = `${type.replace('1', '')}-${String(i).padStart(2, '0')}`;
      const app = await host.json(['create', '--type', type, name, '--region', 'par', '--org', ORG]);
      const fixture = kit[type];
      if (Object.keys(fixture.env).length > 0) {
        const file = join(scratch, `${name}.env`);
        writeFileSync(
          file,
          Object.entries(fixture.env)
            .map(([k, v]) => `${k}=${v}\n`)
            .join(''),
        );
        await host.cli(['env', 'import', file, '--app', app.id]);
      }
      apps[i] = { id: app.id, name, type, repo: await host.repository(fixture.dir, name, app.gitRemote) };
    });

    // The probe: the first Express application, deployed alone, then asked continuously while the others are pushed.
    const [probe, ...others] = apps;
    const first = await timedPush(host, probe);
    if (first.code !== 0) throw new Error(`the first push failed:\n${first.output}`);
    const deploying = new Set();
    const serving = new Set();
    const probeAsking = keepAsking(host, () => probe.id);
    const sweep = keepAsking(
      host,
      roundRobin(() => [...serving].filter((id) => !deploying.has(id))),
    );
    const pushStarted = performance.now();
    const pushes = await pool(others, WIDTH, async (app) => {
      deploying.add(app.id);
      const pushed = await timedPush(host, app);
      deploying.delete(app.id);
      if (pushed.code === 0) serving.add(app.id);
      return { ...pushed, app };
    });
    const pushPhaseMs = performance.now() - pushStarted;
    const probeTally = await probeAsking.stop();
    const sweepTally = await sweep.stop();
    const refused = pushes.filter((p) => p.code !== 0);
    // What follows asks only the applications that serve: one whose first push was refused never answers, and has no master.
    const live = apps.filter((app) => app === probe || serving.has(app.id));
    for (const p of refused) console.log(`  push of ${p.app.name} refused:\n${p.output.split('\n').slice(-15).join('\n')}`);

    // Memory, with every application idle.
    await new Promise((r) => setTimeout(r, 5000));
    const serveMb = rssMb(host.serve.pid);
    const caddyMb = rssMb(pidIn(join(host.data, 'edge', 'caddy.pid')));
    const sshdMb = rssMb(pidIn(join(host.data, 'ssh', 'sshd.pid')));
    const byType = {};
    const shown = {};
    const containers = swarm ? containerMemory(swarm.host) : undefined;
    for (const app of live) {
      const processes = containers ? (containers.get(swarmName(app.id)) ?? []) : appProcesses(Number(execFileSync('id', ['-u', appUserName(app.id)], { encoding: 'utf8' }).trim()));
      shown[app.type] ??= processes;
      byType[app.type] = [...(byType[app.type] ?? []), processes.reduce((sum, p) => sum + p.rss, 0)];
    }
    const allAppsMb = Object.values(byType)
      .flat()
      .reduce((a, b) => a + b, 0);
    // What keeps each release running apart from serve (s6): per application, beyond its own processes.
    const keepers = swarm ? [] : live.map((app) => keeperMemory(app.id));

    console.log(`\n  deploy of ${n} applications (the first alone, then ${WIDTH} at a time), load average after: ${loadAverage()}`);
    line('first push (git push to its exit)', s(first.ms));
    line(`the other ${others.length} pushes, ${WIDTH} at a time: whole phase`, s(pushPhaseMs));
    line(
      '  one push (git push to its exit): median, p90',
      `${s(median(pushes.map((p) => p.ms)))}, ${s(
        percentile(
          pushes.map((p) => p.ms),
          90,
        ),
      )}`,
    );
    line('  pushes refused', `${refused.length}`, '0');
    line(`p99 of ${probe.name}'s requests through the edge meanwhile`, `${percentile(probeTally.ms, 99).toFixed(0)} ms (median ${median(probeTally.ms).toFixed(0)} ms, ${probeTally.sent} requests)`);
    const failedElsewhere = [...probeTally.failed, ...sweepTally.failed];
    line(
      'failed requests on applications not being deployed',
      `${failedElsewhere.length} of ${probeTally.sent + sweepTally.sent} (${probeTally.resent + sweepTally.resent} resent once after a reset)`,
      '0',
    );
    for (const f of failedElsewhere.slice(0, 10)) console.log(`    ${f}`);
    line('RSS of serve, just started with no application', mb(serveJustStarted));
    line(`RSS of serve with ${n} applications`, mb(serveMb), `≤ ${GOALS.serveMb} MB`);
    line('RSS of Caddy (the edge) and sshd', `${mb(caddyMb)}, ${mb(sshdMb)}`);
    if (swarm?.pid) line("RSS of the swarm's dockerd and containerd", `${mb(rssMb(swarm.pid))}, ${mb(swarm.containerdPid ? rssMb(swarm.containerdPid) : 0)}`);
    const unit = swarm ? 'docker stats of its containers' : "its processes' RSS";
    for (const [type, list] of Object.entries(byType)) line(`an idle ${type} application (${unit}), median of ${list.length}`, mb(median(list)));
    for (const [type, processes] of Object.entries(shown)) for (const p of processes) line(`  one ${type} application's ${p.name}`, mb(p.rss));
    line(`all ${live.length} serving applications' ${swarm ? 'containers' : 'processes'}`, mb(allAppsMb));
    if (keepers.length > 0) {
      line(
        'what keeps one release running apart from serve (s6-supervise, s6-log): RSS, PSS; median',
        `${mb(median(keepers.map((k) => k.rss)))}, ${mb(median(keepers.map((k) => k.pss)))} (${median(keepers.map((k) => k.count))} processes)`,
        '≤ 8 MB',
      );
      line('  the largest, RSS', mb(Math.max(...keepers.map((k) => k.rss))));
    }

    // serve stopped (SIGTERM) and started again, then killed (SIGKILL) and started again, its applications left serving:
    // requests go round every application meanwhile; each release must be taken over as it runs (no new release).
    const takeovers = [];
    for (const signal of ['SIGTERM', 'SIGKILL']) takeovers.push({ signal, ...(await timeTakeOver(host, live, signal)) });
    for (const t of takeovers) {
      line(`serve ${t.signal === 'SIGTERM' ? 'stopped (SIGTERM)' : 'killed (SIGKILL)'}, started again: "==> serving" (API, console, git, every app)`, s(t.servingMs), '≤ 5 s');
      line('  its applications taken over as they run, of those serving', `${t.takenOver} of ${live.length}`);
      line('  applications with a new release since (one deployed again)', `${t.redeployed.length}`, '0');
      line('  failed requests meanwhile, round every application', `${t.failed.length} of ${t.sent}`, '0');
      for (const f of [...t.redeployed, ...t.failed].slice(0, 10)) console.log(`    ${f}`);
    }
    line('RSS of serve after the take-overs', mb(rssMb(host.serve.pid)));

    // Restart of everything: serve stopped with its applications (stop-apps), started again, timed until every
    // application answers through the edge (each deployed again from its commit, as after a machine's restart).
    // --restarts K: the restart K times (the figures below are the last one's; each one's slowest is printed), as the load varies.
    let restart;
    for (let r = 0; r < restarts; r++) {
      restart = await timeRestart(host, live, swarm);
      if (restarts > 1) line(`  restart ${r + 1} of ${restarts}: slowest, median (load average after)`, `${s(restart.allBackMs)}, ${s(median(restart.back))} (${loadAverage()})`);
    }
    line(`serve and its applications stopped (stop-apps${swarm ? ": the applications' services removed" : ''})`, s(restart.stopMs));
    if (swarm) line('  services left in the swarm once serve had stopped', `${restart.servicesLeft}`);
    line('serve started → "==> serving"', s(restart.servingMs));
    line(`serve started → every application answers (slowest of ${live.length})`, s(restart.allBackMs), `≤ ${GOALS.backS} s`);
    if (restart.notBack.length > 0) line('  applications that did not answer within 5 min', restart.notBack.join(', '), 'none');
    line('  applications back: median', s(median(restart.back)));
    for (const [phase, list] of Object.entries(restart.phases))
      line(`  one bring-back's ${phase}: median, sum over ${list.length}`, `${median(list).toFixed(2)} s, ${list.reduce((a, b) => a + b, 0).toFixed(1)} s`);
    line('RSS of serve after the restart', mb(rssMb(host.serve.pid)));
    console.log(`  load average after the restart: ${loadAverage()}`);

    // Concurrent pushes: each its own clone with its own commit, two per application, all at once.
    const race = await concurrentPushes(host, live, probe, concurrent);
    line(`${concurrent} concurrent pushes to ${race.targets} applications: accepted, rejected`, `${race.accepted}, ${race.rejected} (${s(race.ms)} in all)`);
    for (const [reason, times] of Object.entries(race.reasons)) line(`  rejected as ${reason}`, `${times}`);
    for (const output of race.unexplained.slice(0, 2)) console.log(`    a refusal with no ref line:\n${output}`);
    line('  where git and the host disagree (a push accepted that does not serve, or the reverse)', `${race.disagreements.length}`, '0');
    line(`  applications whose master is not the serving commit (of ${live.length})`, `${race.mismatches.length}`, '0');
    line('  failed requests meanwhile on applications not being pushed', `${race.failed.length} of ${race.sent}`, '0');
    for (const d of [...race.disagreements, ...race.mismatches, ...race.failed].slice(0, 10)) console.log(`    ${d}`);
    line('load average at the end', loadAverage());
    line('the whole run (from init to the last check)', s(performance.now() - runStarted));
    if (swarm) line(`applications this machine reached on the swarm (of ${n} asked)`, `${live.length}`);

    target({
      what: `serve RSS with ${n} applications ≤ ${GOALS.serveMb} MB${swarm ? ' (swarm)' : ''}`,
      runplan: mb(serveMb),
      against: `${GOALS.serveMb} MB`,
      limit: `${(serveMb / GOALS.serveMb).toFixed(2)}× (≤ 1)`,
      met: serveMb <= GOALS.serveMb,
    });
    target({
      what: `every one of ${live.length} serving applications back ≤ ${GOALS.backS} s after serve restarts${swarm ? ' (swarm)' : ''}`,
      runplan: s(restart.allBackMs),
      against: `${GOALS.backS} s`,
      limit: `${(restart.allBackMs / 1000 / GOALS.backS).toFixed(2)}× (≤ 1)`,
      met: restart.allBackMs <= GOALS.backS * 1000 && restart.notBack.length === 0,
    });
    if (keepers.length > 0) {
      // PSS: the memory the machine spends on it (RSS counts the shared C library again in each process).
      const largest = keepers.reduce((a, k) => (k.pss > a.pss ? k : a));
      target({
        what: 'what keeps a release running apart from serve (s6), the largest of all, PSS ≤ 8 MB',
        runplan: `${mb(largest.pss)} (RSS ${mb(largest.rss)})`,
        against: '8 MB',
        limit: `${(largest.pss / 8).toFixed(2)}× (≤ 1)`,
        met: largest.pss <= 8,
      });
    }
    for (const t of takeovers) {
      target({
        what: `serve ${t.signal === 'SIGTERM' ? 'stopped' : 'killed'} and started again with ${live.length} applications: 0 failed requests, every one taken over, back ≤ 5 s${swarm ? ' (swarm)' : ''}`,
        runplan: `${t.failed.length} failed, ${t.takenOver} taken over, ${s(t.servingMs)}`,
        against: `0, ${live.length}, 5 s`,
        limit: `${t.failed.length + t.redeployed.length} (0), ${(t.servingMs / 5000).toFixed(2)}× (≤ 1)`,
        met: t.failed.length === 0 && t.redeployed.length === 0 && t.servingMs <= 5000,
      });
    }
    const failedTotal = failedElsewhere.length + race.failed.length;
    target({ what: `failed requests on applications not being deployed${swarm ? ' (swarm)' : ''}`, runplan: `${failedTotal}`, against: '0', limit: `${failedTotal} (0)`, met: failedTotal === 0 });
    target({
      what: `${concurrent} concurrent pushes: accepted or rejected as git says, master == serving${swarm ? ' (swarm)' : ''}`,
      runplan: `${race.accepted} accepted, ${race.rejected} rejected`,
      against: '0 disagreements',
      limit: `${race.disagreements.length + race.mismatches.length} (0)`,
      met: race.disagreements.length + race.mismatches.length === 0,
    });
  } finally {
    await host?.dispose(apps.filter(Boolean).map((a) => a.id));
    await mirror?.close();
    await swarm?.stop();
    if (kit?.ruby.cleanup) execFileSync('rm', ['-rf', kit.ruby.cleanup]);
    execFileSync('rm', ['-rf', scratch]);
  }
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function timedPush(host, app) {
  const started = performance.now();
  const pushed = await host.push(app.repo);
  return { ...pushed, ms: performance.now() - started };
}

/**
 * sshd drops some of many connections opened at once before they log in (its MaxStartups, 10 unauthenticated
 * by default): nothing reached the host, git says it could not read from the remote (host/test/atomic-pushes.test.ts).
 */
const droppedBySshd = (output) => !output.includes('remote:') && /kex_exchange_identification|Connection (reset|closed)/.test(output);

/**
 * `signal` to serve, started with its applications left serving, then serve started again: the time until it says it
 * serves (every application taken over; its API, console and git socket answer before that), the requests that failed
 * meanwhile going round every application, and the applications whose current release changed (deployed again).
 */
async function timeTakeOver(host, apps, signal) {
  const releasesBefore = await currentReleases(host);
  const asking = keepAsking(
    host,
    roundRobin(() => apps.map((a) => a.id)),
  );
  await new Promise((r) => setTimeout(r, 1000));
  await host.stop(signal);
  // Serving without serve for a moment, as during an upgrade.
  await new Promise((r) => setTimeout(r, 2000));
  const started = performance.now();
  await host.start();
  const servingMs = performance.now() - started;
  await new Promise((r) => setTimeout(r, 1000));
  const tally = await asking.stop();
  const releasesAfter = await currentReleases(host);
  const redeployed = apps.filter((a) => releasesAfter.get(a.id) !== releasesBefore.get(a.id)).map((a) => `${a.name}: release ${releasesBefore.get(a.id)} → ${releasesAfter.get(a.id)}`);
  const takenOver = (host.serveOutput.match(/==> \S+: release \d+ taken over as it runs/g) ?? []).length;
  return { servingMs, failed: tally.failed, sent: tally.sent, redeployed, takenOver };
}

async function currentReleases(host) {
  const { apps } = await host.json(['apps', '--org', ORG]);
  return new Map(apps.map((a) => [a.id, a.currentRelease]));
}

/** Stops serve and its applications (stop-apps), starts it, and polls each application through the edge until it answers 200. */
async function timeRestart(host, apps, swarm) {
  const stopStarted = performance.now();
  await host.stop();
  await host.cli(['stop-apps']);
  const stopMs = performance.now() - stopStarted;
  const servicesLeft = swarm ? swarm.docker(['service', 'ls', '--quiet']).split('\n').filter(Boolean).length : undefined;
  const started = performance.now();
  let servingMs;
  const serving = host.start().then(() => (servingMs = performance.now() - started));
  // Bounded: an application that never answers (its bring-back failed) is named, not waited for for ever.
  const notBack = [];
  const back = await Promise.all(
    apps.map(async (app) => {
      for (;;) {
        const answer = await host.get(app.id).catch(() => undefined);
        if (answer?.status === 200) return performance.now() - started;
        if (performance.now() - started > 300_000) {
          notBack.push(app.name);
          return Number.NaN;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    }),
  );
  await serving;
  // Where each bring-back's time went, from serve's own `==> release N took …: checkout 0.05 s, …` lines.
  const phases = {};
  for (const m of host.serveOutput.matchAll(/==> release \d+ took [\d.]+ s: (.*)/g)) {
    for (const part of m[1].split(', ')) {
      const [, phase, secs] = /^(.*) ([\d.]+) s$/.exec(part) ?? [];
      if (!phase) continue;
      phases[phase] ??= [];
      phases[phase].push(Number(secs));
    }
  }
  return { stopMs, servingMs, back: back.filter((ms) => !Number.isNaN(ms)), allBackMs: Math.max(...back.filter((ms) => !Number.isNaN(ms))), notBack, phases, servicesLeft };
}

/**
 * `count` pushes at once, two per application (Express ones other than the probe, when there are enough),
 * each from a clone of its own with a commit of its own on the same master: at most
 * one per application can be accepted. Then, for every application, git's master is
 * compared with the commit of the release that serves.
 */
async function concurrentPushes(host, apps, probe, count) {
  // Express applications first; with few applications, the others too.
  const candidates = apps.filter((a) => a !== probe).sort((a, b) => Number(b.type === 'node') - Number(a.type === 'node'));
  const targets = candidates.slice(0, Math.max(1, Math.min(candidates.length, Math.ceil(count / 2))));
  const clones = [];
  for (let i = 0; i < count; i++) {
    const app = targets[i % targets.length];
    const repo = `${app.repo}-push-${i}`;
    execFileSync('cp', ['-a', app.repo, repo]);
    writeFileSync(join(repo, 'PUSH'), `push ${i}\n`);
    await host.commit(repo, `push ${i}`);
    const commit = (await host.git(repo, ['rev-parse', 'HEAD'])).stdout.trim();
    clones.push({ app, repo, commit });
  }
  const pushedIds = new Set(targets.map((a) => a.id));
  const asking = keepAsking(
    host,
    roundRobin(() => apps.filter((a) => !pushedIds.has(a.id)).map((a) => a.id)),
  );
  const started = performance.now();
  const results = await Promise.all(clones.map((c) => host.push(c.repo)));
  const ms = performance.now() - started;
  const tally = await asking.stop();
  const disagreements = [];
  const mismatches = [];
  const { apps: views } = await host.json(['apps', '--org', ORG]);
  await pool(apps, WIDTH, async (app) => {
    const view = views.find((v) => v.id === app.id);
    const { releases } = await host.json(['releases', '--app', app.id]);
    const servingCommit = releases.find((r) => r.number === view?.serving?.release)?.commit;
    const master = await host.master(app.id);
    if (servingCommit !== master) mismatches.push(`${app.name}: master ${master.slice(0, 12)}, serving ${servingCommit?.slice(0, 12) ?? 'nothing'}`);
    clones.forEach((c, i) => {
      if (c.app !== app) return;
      // git's exit status says accepted exactly when that push's commit is the one master names and serves.
      const accepted = results[i].code === 0;
      if (accepted !== (c.commit === master && c.commit === servingCommit))
        disagreements.push(`${app.name} push ${i}: git said ${accepted ? 'accepted' : 'rejected'}\n${results[i].output.split('\n').slice(-8).join('\n')}`);
    });
  });
  for (const c of clones) execFileSync('rm', ['-rf', c.repo]);
  const accepted = results.filter((r) => r.code === 0).length;
  // How git reported each refusal: `[remote rejected]` (the host refused it: master had moved while it waited) or `[rejected]` (git itself: not a fast-forward).
  const reasons = {};
  for (const r of results.filter((x) => x.code !== 0)) {
    const reason =
      /! \[([^\]]+)\][^\n]*?(\([^)]*\))?$/m.exec(r.output)?.slice(1).filter(Boolean).join(' ') ?? (droppedBySshd(r.output) ? 'dropped by sshd before login (its MaxStartups)' : 'no ref line');
    reasons[reason] = (reasons[reason] ?? 0) + 1;
  }
  const unexplained = results.filter((r) => r.code !== 0 && !/! \[/.test(r.output) && !droppedBySshd(r.output)).map((r) => r.output.split('\n').slice(-8).join('\n'));
  return { targets: targets.length, accepted, rejected: count - accepted, reasons, unexplained, ms, disagreements, mismatches, failed: tally.failed, sent: tally.sent };
}

/** Swarm's name of an application's services, networks and containers' deployment label (host/src/addons/swarm-services.ts). */
const swarmName = (appId) => appId.toLowerCase().replace(/[^a-z0-9-]/g, '-');

/** Each application's containers (its web tasks and its proxy's) as `docker stats` reports their memory: name and MB, by the application's swarm name. */
function containerMemory(host) {
  const docker = (args) => execFileSync('/usr/bin/docker', args, { env: { ...process.env, DOCKER_HOST: host }, encoding: 'utf8', maxBuffer: 16 << 20 });
  const byApp = new Map();
  const ids = docker(['ps', '--quiet', '--filter', 'label=io.runplan.engine=swarm']).split('\n').filter(Boolean);
  if (ids.length === 0) return byApp;
  const deployment = new Map(
    docker(['inspect', '--format', '{{.Id}} {{index .Config.Labels "io.runplan.deployment"}} {{index .Config.Labels "com.docker.swarm.service.name"}}', ...ids])
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [id, app, service] = l.split(' ');
        return [id.slice(0, 12), { app, service }];
      }),
  );
  const units = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, kB: 1e3, MB: 1e6, GB: 1e9 };
  for (const l of docker(['stats', '--no-stream', '--format', '{{.ID}} {{.MemUsage}}', ...ids])
    .split('\n')
    .filter(Boolean)) {
    const [id, used] = l.split(' ');
    const m = /^([\d.]+)(\w+)$/.exec(used);
    const of = deployment.get(id.slice(0, 12));
    if (!m || !of) continue;
    // The proxy's service is named as the application, its processes' services with a suffix (`-web`).
    const name = of.service === of.app ? 'proxy (nginx)' : `${of.service.slice(of.app.length + 1)} task`;
    byApp.set(of.app, [...(byApp.get(of.app) ?? []), { name, rss: (Number(m[1]) * (units[m[2]] ?? 1)) / 1024 ** 2 }]);
  }
  return byApp;
}
