// The edge's data path (issue 45): a real runplan-host (BenchHost) serving the Express
// fixture, loaded with wrk (16 connections, 8 s, HTTPS) side by side with (a) a plain Caddy of
// the bench's own, the same program, proxying over TLS straight to the release's port with
// Caddy's default keep-alive, the floor an edge in front of this application can reach, and
// (c) the application alone (plain HTTP to its port). The three are run in turn, round after
// round, (a) and (b) one after the other, each first in turn; best and median of the rounds, and
// the median of each round's (b)/(a), which the goal is read from: the host's edge keeps 0.8× of
// (a)'s throughput and at most 1.2× its p99.
//   npm run bench -- --only edge [--rounds 8] [--seconds 8] [--connections 16] [--cache-dir DIR] [--host-root DIR]
// --host-root: another checkout whose runplan-host to measure as (b), built (a baseline).
// Needs root, sshd, Caddy, git and wrk; the npm registry for the push's install.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appHostOf, BenchHost } from './host-lib.mjs';
import { freePort, median, reachableTemp, root, target } from './lib.mjs';

export const title = 'host: the edge in front of an application (wrk through HTTPS, against a plain Caddy)';

const ORG = 'bench';
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

function missing() {
  if (process.getuid?.() !== 0) return 'runplan-host runs as root (its SSH account, the applications’ users)';
  for (const program of ['sshd', 'caddy', 'git', 'ssh-keygen', 'wrk', 'unshare'])
    if (spawnSync('sh', ['-c', `command -v ${program} || test -x /usr/sbin/${program}`]).status !== 0) return `${program} is not installed`;
  return '';
}

/**
 * wrk against `url` with `Host: <host>`. wrk takes the TLS server name from the URL, whose host name must
 * resolve and must not hold an `_` (its URL parser refuses one; an application's name has one): the URL names
 * the console's name, which the edge has a certificate for, resolved to 127.0.0.1 as curl's --resolve would
 * (wrk runs in a mount namespace of its own whose /etc/hosts names it; the machine's file is untouched), and
 * the Host header names the application. Caddy does not hold the Host to the server name (strict_sni_host is
 * off without client certificates). wrk does not verify certificates.
 */
function wrk(url, { seconds, connections, hostsFile, host }) {
  const args = ['-t', '2', '-c', String(connections), '-d', `${seconds}s`, '--latency', ...(host ? ['-H', `'Host: ${host}'`] : []), url];
  const script = hostsFile ? `mount --bind ${hostsFile} /etc/hosts && exec wrk ${args.join(' ')}` : `exec wrk ${args.join(' ')}`;
  const ran = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], { encoding: 'utf8' });
  if (ran.status !== 0) throw new Error(`wrk ${url} failed (${ran.status}): ${ran.stderr}${ran.stdout}`);
  return parseWrk(ran.stdout);
}

function parseWrk(output) {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]);
  const unit = { us: 0.001, ms: 1, s: 1000, m: 60_000 };
  const p99Match = /^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$/m.exec(output);
  const p99 = p99Match ? Number(p99Match[1]) * unit[p99Match[2]] : Number.NaN;
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const errors = non2xx + (socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  if (!Number.isFinite(rps)) throw new Error(`wrk said nothing measurable:\n${output}`);
  return { rps, p99, errors, output };
}

/** One HTTPS GET to 127.0.0.1:port with this server name (no verification): its status, or 0 when nothing answered. */
function status(port, name) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, servername: name, headers: { host: name }, rejectUnauthorized: false, agent: false, timeout: 2_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/**
 * (a): Caddy, the same program as the host's edge, on its own TLS port, proxying `name` to the release's address
 * with its defaults (keep-alive on); a certificate for `serverName` too. Caddy 2.6 now and then deletes a
 * certificate it is issuing at its start (its storage cleaning reads the key file half written) and tries again
 * only a minute later: a start that does not serve within 30 s is stopped and made again, in a new folder.
 */
async function startPlainCaddy(dir, name, serverName, upstream) {
  const failures = [];
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      return await startPlainCaddyOnce(join(dir, `attempt-${attempt}`), name, serverName, upstream);
    } catch (error) {
      failures.push(error.message);
    }
  }
  throw new Error(`the plain Caddy did not serve ${name}:\n${failures.join('\n')}`);
}

async function startPlainCaddyOnce(dir, name, serverName, upstream) {
  const httpsPort = await freePort();
  const config = {
    admin: { disabled: true },
    apps: {
      http: {
        http_port: await freePort(),
        https_port: httpsPort,
        servers: {
          plain: {
            listen: [`127.0.0.1:${httpsPort}`],
            automatic_https: { disable_redirects: true },
            protocols: ['h1', 'h2'],
            routes: [{ match: [{ host: [name] }], handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: upstream }] }], terminal: true }],
          },
        },
      },
      // Caddy manages the names of its routes; the server name wrk sends is added by hand.
      tls: { certificates: { automate: [serverName] }, automation: { policies: [{ subjects: [name, serverName], issuers: [{ module: 'internal' }] }] } },
      pki: { certificate_authorities: { local: { install_trust: false } } },
    },
  };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'caddy.json'), JSON.stringify(config));
  const env = { PATH: process.env.PATH, HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') };
  const child = spawn('caddy', ['run', '--config', join(dir, 'caddy.json')], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  child.stderr.on('data', (chunk) => {
    said = (said + chunk).slice(-4000);
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && child.exitCode === null) {
    if ((await status(httpsPort, name)) === 200 && (await status(httpsPort, serverName)) !== 0) return { port: httpsPort, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`in ${dir}: ${said.split('\n').slice(-6).join('\n')}`);
}

/** The address the edge dials: the one file of the application's upstream folder (before issue 45, the port `releases` names). */
async function releaseAddress(host, appId) {
  try {
    const [address] = readdirSync(join(host.data, 'run', 'apps', appId));
    if (address) return address;
  } catch {
    // A host from before upstream folders.
  }
  const { releases } = await host.json(['releases', '--app', appId]);
  const port = releases.find((r) => r.port)?.port;
  if (!port) throw new Error(`no release of ${appId} names a port`);
  return `127.0.0.1:${port}`;
}

const fixed = (x, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '—');

export async function run({ args }) {
  const why = missing();
  if (why) return console.log(`skipped: ${why}`);
  const rounds = Number(args.rounds ?? 8);
  const seconds = Number(args.seconds ?? 8);
  const connections = Number(args.connections ?? 16);
  const cacheDir = args['cache-dir'] ?? process.env.RUNPLAN_TEST_CACHE_DIR ?? join(tmpdir(), 'runplan-test-cache');
  const scratch = reachableTemp(join(tmpdir(), 'runplan-bench-edge-'));
  let host;
  let plain;
  let appId;
  try {
    host = await BenchHost.create({ cacheDir, org: ORG, ...(args['host-root'] ? { hostRoot: args['host-root'] } : {}) });
    const app = await host.json(['create', '--type', 'node', 'hello', '--region', 'par', '--org', ORG]);
    appId = app.id;
    const repo = await host.repository(join(root, 'fixtures', 'node', 'express'), 'hello', app.gitRemote);
    const pushed = await host.push(repo);
    if (pushed.code !== 0) throw new Error(`the push failed:\n${pushed.output}`);
    const name = appHostOf(app.id);
    const upstream = await releaseAddress(host, app.id);
    // The TLS server name wrk sends (see wrk()): the console's, served by the host's edge, and given to (a) too.
    const serverName = 'console.localhost';
    plain = await startPlainCaddy(join(scratch, 'plain-caddy'), name, serverName, upstream);
    const hostsFile = join(scratch, 'hosts');
    writeFileSync(hostsFile, `127.0.0.1 localhost\n127.0.0.1 ${serverName}\n`);
    const paths = {
      a: { what: '(a) a plain Caddy, TLS, straight to the port', url: `https://${serverName}:${plain.port}/`, hostsFile, host: name },
      b: { what: "(b) the host's edge (HTTPS)", url: `https://${serverName}:${host.ports.https}/`, hostsFile, host: name },
      c: { what: '(c) the application alone (HTTP)', url: `http://${upstream}/` },
    };
    console.log(
      `fixtures/node/express on runplan-host's local engine, wrk -t 2 -c ${connections} -d ${seconds}s, ${rounds} rounds, (a) and (b) side by side, each first in turn; caddy ${spawnSync('caddy', ['version'], { encoding: 'utf8' }).stdout.trim()}; load average before: ${loadAverage()}`,
    );
    // Warm: each path's connections, certificates and the application's JIT, before any round counts.
    for (const path of Object.values(paths)) {
      const warm = wrk(path.url, { seconds: 2, connections, hostsFile: path.hostsFile, host: path.host });
      if (warm.errors > 0 || warm.rps === 0) throw new Error(`${path.what}: ${warm.errors} errors while warming up:\n${warm.output}`);
    }
    const results = { a: [], b: [], c: [] };
    // (a) and (b) side by side in every round, each first in turn: on a shared machine the load drifts, and
    // a round's (b)/(a) compares two runs a few seconds apart. (c) is a reference only.
    const orders = [
      ['a', 'b', 'c'],
      ['b', 'a', 'c'],
    ];
    for (let round = 0; round < rounds; round++) {
      for (const key of orders[round % orders.length]) results[key].push(wrk(paths[key].url, { seconds, connections, hostsFile: paths[key].hostsFile, host: paths[key].host }));
      console.log(
        `  round ${round + 1}: ${Object.keys(paths)
          .map((k) => `${k} ${fixed(results[k].at(-1).rps)} req/s, p99 ${fixed(results[k].at(-1).p99, 1)} ms`)
          .join('; ')}`,
      );
    }
    console.log(`  load average after: ${loadAverage()}`);
    console.log('| Path | req/s best | req/s median | p99 best | p99 median | errors |');
    console.log('|---|---|---|---|---|---|');
    const summary = {};
    for (const [key, path] of Object.entries(paths)) {
      const rps = results[key].map((r) => r.rps);
      const p99 = results[key].map((r) => r.p99);
      summary[key] = { bestRps: Math.max(...rps), medianRps: median(rps), bestP99: Math.min(...p99), medianP99: median(p99) };
      const s = summary[key];
      console.log(`| ${path.what} | ${fixed(s.bestRps)} | ${fixed(s.medianRps)} | ${fixed(s.bestP99, 2)} ms | ${fixed(s.medianP99, 2)} ms | ${results[key].reduce((n, r) => n + r.errors, 0)} |`);
    }
    const { a, b, c } = summary;
    const paired = (field) => median(results.b.map((r, i) => r[field] / results.a[i][field]));
    const throughput = paired('rps');
    const tail = paired('p99');
    console.log(
      `  (b)/(a), the median of each round's: throughput ${throughput.toFixed(2)}×, p99 ${tail.toFixed(2)}×; of the medians: ${(b.medianRps / a.medianRps).toFixed(2)}×, p99 ${(b.medianP99 / a.medianP99).toFixed(2)}×; of the bests: ${(b.bestRps / a.bestRps).toFixed(2)}×, p99 ${(b.bestP99 / a.bestP99).toFixed(2)}×; (b)/(c) throughput ${(b.medianRps / c.medianRps).toFixed(2)}×`,
    );
    target({
      what: "Edge throughput (the host's edge vs a plain Caddy to the same release, wrk over HTTPS)",
      runplan: `${fixed(b.medianRps)} req/s (median)`,
      against: `${fixed(a.medianRps)} req/s (median)`,
      limit: `${throughput.toFixed(2)}× (≥ 0.8; the median of each round's ratio)`,
      met: throughput >= 0.8,
    });
    target({
      what: "Edge p99 (the host's edge vs a plain Caddy to the same release)",
      runplan: `${fixed(b.medianP99, 2)} ms (median)`,
      against: `${fixed(a.medianP99, 2)} ms (median)`,
      limit: `${tail.toFixed(2)}× (≤ 1.2; the median of each round's ratio)`,
      met: tail <= 1.2,
    });
  } finally {
    await plain?.stop();
    await host?.dispose(appId ? [appId] : []);
    rmSync(scratch, { recursive: true, force: true });
  }
}
