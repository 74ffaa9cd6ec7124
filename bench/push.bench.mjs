// Push to serving on runplan-host's local engine (issue 39): a real host (its own
// data folder, sshd, Caddy, serve) on loopback ports, the Express fixture pushed
// with git over SSH, and the clock stopped at the first answer of the new code
// through the HTTPS edge. A first push of a new application (Node.js and npm in
// the cache, primed by a `runplan build` first; its node_modules not), then
// one-line changes pushed one right after the other: each starts while the
// release it replaces still drains. Each push's phases are the ones serve tells
// the pusher (`==> release N took …`), beside what only the client sees (the
// receive: ssh, the pack, the hook, until serve's first line).
// Then the same on a single-node Docker swarm (`init --engine swarm`, the fifty-apps
// bench's swarm) wherever a Docker engine can be had: each release an image and services.
//   npm run bench -- --only push [--changes 3] [--cache-dir DIR] [--host-root DIR] [--engine local|swarm] [--release-network own|shared] [--disk-mb N]
// --host-root: another checkout whose host/dist/cli.js to measure (a baseline).
// Needs root, sshd, Caddy and git; the npm registry for the first push's install.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appHostOf, onEachEngine, startSwarm } from './host-lib.mjs';
import { cli, freePort, median, reachableTemp, root, target } from './lib.mjs';

export const title = 'host: push to serving (local engine, then a Docker swarm)';

/** The issue's goals by engine: a one-line change (and the first push of a new app, locally). */
const GOALS = { local: { change: 4, first: 10 }, swarm: { change: 10 } };
const SERVER_PHASES = ['wait', 'checkout', 'plan', 'build', 'start', 'stability window', 'switch'];
const now = () => Number(process.hrtime.bigint()) / 1e6;

function missing() {
  if (process.getuid?.() !== 0) return 'runplan-host runs as root (its SSH account, the applications’ users)';
  for (const program of ['sshd', 'caddy', 'git', 'ssh-keygen']) if (spawnSync('sh', ['-c', `command -v ${program} || test -x /usr/sbin/${program}`]).status !== 0) return `${program} is not installed`;
  return '';
}

/** runplan-host of `hostRoot` with the bench's data folder; its output, or throws with it. */
function hostCli(hostRoot, data, args) {
  return execFileSync(process.execPath, [join(hostRoot, 'host', 'dist', 'cli.js'), ...args, '--data', data], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

function git(dir, args, env = process.env) {
  return execFileSync('git', args, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** One GET through the edge (HTTPS, trusting only its root): the body, or undefined when nothing answered. */
function get(ports, appId, path, ca) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: ports.https, path, servername: appHostOf(appId), headers: { host: appHostOf(appId) }, ca, agent: false, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/**
 * One `git push`, timed from the command until `version` answers through the edge
 * (polled one request after another from the start: the old release answers
 * meanwhile). Each `remote:` line is stamped as it arrives.
 */
async function timedPush({ repo, env, ports, appId, ca, version }) {
  const started = now();
  let answered;
  let pushed = false;
  const polling = (async () => {
    while (answered === undefined) {
      const body = await get(ports, appId, '/bench-version', ca);
      if (body?.trim() === version) answered = now();
      else if (pushed && now() - started > 120_000) return;
      else await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const child = spawn('git', ['push', 'runplan', 'master'], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = [];
  let rest = '';
  child.stderr.on('data', (chunk) => {
    const at = now();
    rest += chunk;
    const parts = rest.split(/\r?\n/);
    rest = parts.pop() ?? '';
    for (const text of parts) lines.push({ at, text });
  });
  child.stdout.resume();
  const code = await new Promise((r) => child.on('exit', r));
  const exited = now();
  pushed = true;
  if (code !== 0) {
    answered = -1;
    throw new Error(`git push exited ${code}:\n${lines.map((l) => l.text).join('\n')}`);
  }
  await polling;
  if (answered === undefined) throw new Error(`version ${version} never answered through the edge`);
  const first = lines.find((l) => /remote: ==> release \d+ of /.test(l.text));
  const took = lines.find((l) => /remote: ==> release \d+ took /.test(l.text));
  const phases = {};
  for (const m of (took?.text ?? '').matchAll(/(\w[\w ]*?) (\d+\.\d+) s/g)) if (SERVER_PHASES.includes(m[1])) phases[m[1]] = Number(m[2]) * 1000;
  const serverMs = Object.values(phases).reduce((a, b) => a + b, 0);
  // Until serve's first line of the release, less the wait for the application's lock that serve measured (it comes before that line).
  const receive = first ? first.at - started - (phases.wait ?? 0) : Number.NaN;
  return {
    total: answered - started,
    exited: exited - started,
    receive,
    phases,
    // What neither side names: the hook's socket, serve's own lines on their way back, the edge's first answer after the switch.
    other: answered - started - receive - serverMs,
    waited: lines.some((l) => /this one waits for it/.test(l.text)),
    lines: lines.map((l) => ({ ms: l.at - started, text: l.text })),
  };
}

const s = (msValue) => (Number.isFinite(msValue) ? `${(msValue / 1000).toFixed(2)} s` : '—');

function row(name, r) {
  return `| ${name} | **${s(r.total)}** | ${s(r.receive)} | ${SERVER_PHASES.map((p) => (p in r.phases ? s(r.phases[p]) : '—')).join(' | ')} | ${s(r.other)} | ${s(r.exited)} | ${r.waited ? 'yes' : 'no'} |`;
}

/** The local engine, then a swarm where a Docker engine can be had, unless `--engine` names one. */
export async function run({ args }) {
  const why = missing();
  const hostRoot = args['host-root'] ?? root;
  if (why) return console.log(`skipped: ${why}`);
  if (!existsSync(join(hostRoot, 'host', 'dist', 'cli.js'))) return console.log(`skipped: ${hostRoot}/host/dist/cli.js is not built (node scripts/bootstrap.mjs --for-host)`);
  await onEachEngine(args.engine, (engine) => runOn({ args, hostRoot, engine }));
}

async function runOn({ args, hostRoot, engine }) {
  const goals = GOALS[engine];
  const changes = Number(args.changes ?? 3);
  const cacheDir = args['cache-dir'] ?? join(tmpdir(), 'runplan-bench-cache');
  const base = reachableTemp(join(tmpdir(), 'runplan-bench-push-'));
  const data = join(base, 'data');
  const ports = { ssh: await freePort(), https: await freePort(), http: await freePort() };
  const sshUser = `rpush-${process.pid.toString(16)}`;
  let serve;
  let swarm;
  try {
    swarm = engine === 'swarm' ? await startSwarm(cacheDir, new Set(['node'])) : undefined;
    // Node.js and npm in the cache, as on a host that deployed a Node application before.
    const prime = now();
    execFileSync(process.execPath, [cli, 'build', join(root, 'fixtures', 'node', 'express'), '--cache-dir', cacheDir, '--work-dir', join(base, 'prime')], { stdio: 'ignore' });
    console.log(`runtime primed in the cache by \`runplan build\` of the fixture: ${s(now() - prime)} (not counted)`);
    const options = {
      'ssh-port': ports.ssh,
      'https-port': ports.https,
      'http-port': ports.http,
      'ssh-user': sshUser,
      'cache-dir': cacheDir,
      ...(swarm ? { engine: 'swarm', 'docker-host': swarm.host } : {}),
    };
    hostCli(hostRoot, data, ['init', ...Object.entries(options).flatMap(([name, value]) => [`--${name}`, `${value}`])]);
    // --release-network own|shared: each release in its own network namespace (docs/design/network-per-release.md), or not.
    // --disk-mb N: each application's workspace on a disk of its own of N MiB, 0 for none (docs/security.md, "Disk space").
    // Left out: what the host's init gives (this version's: own, 4096; an older baseline's: shared, none).
    const settingsChange = {
      ...(args['release-network'] === undefined ? {} : { releaseNetwork: args['release-network'] }),
      ...(args['disk-mb'] === undefined ? {} : { diskMb: Number(args['disk-mb']) }),
    };
    if (Object.keys(settingsChange).length > 0) {
      const file = join(data, 'settings.json');
      const { diskMb, ...kept } = { ...JSON.parse(readFileSync(file, 'utf8')), ...settingsChange };
      writeFileSync(file, `${JSON.stringify({ ...kept, ...(diskMb ? { diskMb } : {}) }, null, 2)}\n`, { mode: 0o600 });
    }
    // A host of before serve kept its applications running has no flag: its serve stops them anyway.
    const help = execFileSync(process.execPath, [join(hostRoot, 'host', 'dist', 'cli.js'), '--help'], { encoding: 'utf8' });
    const stopApps = help.includes('--stop-apps-on-exit') ? ['--stop-apps-on-exit'] : [];
    serve = spawn(process.execPath, [join(hostRoot, 'host', 'dist', 'cli.js'), 'serve', ...stopApps, '--data', data], { stdio: ['ignore', 'pipe', 'pipe'] });
    let serveOutput = '';
    await new Promise((resolve, reject) => {
      const on = (c) => {
        serveOutput += c;
        if (serveOutput.includes('==> serving')) resolve();
      };
      serve.stdout.on('data', on);
      serve.stderr.on('data', on);
      serve.once('exit', (code) => reject(new Error(`serve exited ${code}:\n${serveOutput}`)));
    });
    const key = join(base, 'key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bench', '-f', key]);
    hostCli(hostRoot, data, ['keys', 'add', 'bench', `${key}.pub`, '--json']);
    const app = JSON.parse(hostCli(hostRoot, data, ['create', '--type', 'node', 'express', '--region', 'par', '--org', 'bench', '--json']));
    const repo = join(base, 'repo');
    cpSync(join(root, 'fixtures', 'node', 'express'), repo, { recursive: true, filter: (src) => !src.includes('node_modules') });
    // The line each change edits: an answer that says which commit serves.
    appendFileSync(join(repo, 'server.js'), "app.get('/bench-version', (req, res) => res.send('v0'));\n");
    git(repo, ['init', '-q', '-b', 'master']);
    const commit = (message) => {
      git(repo, ['add', '-A']);
      git(repo, ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-m', message]);
    };
    commit('first');
    git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
    const env = {
      ...process.env,
      GIT_SSH_COMMAND: `ssh -i ${key} -o IdentitiesOnly=yes -o UserKnownHostsFile=${join(base, 'known_hosts')} -o StrictHostKeyChecking=accept-new -o BatchMode=yes`,
      GIT_TERMINAL_PROMPT: '0',
    };
    const ca = readFileSync(join(data, 'edge', 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt'));
    const push = (version) => timedPush({ repo, env, ports, appId: app.id, ca, version });
    // Part of the receive: an SSH session whose forced command (git-program.cjs, a Node.js program) refuses a fetch at once.
    const probes = [];
    for (let i = 0; i < 5; i++) {
      const t = now();
      spawnSync('git', ['ls-remote', 'runplan'], { cwd: repo, env, stdio: 'ignore' });
      probes.push(now() - t);
    }

    // The rest of the receive: each start of that program (twice per push: the forced command, the hook), against `node -e 0`,
    // interleaved. Run with no arguments it only prints its usage: what it costs before it does anything.
    const program = join(data, 'bin', 'git-program.cjs');
    const starts = { bare: [], program: [] };
    for (let i = 0; i < 11; i++) {
      for (const [which, args] of [
        ['bare', ['-e', '0']],
        ['program', [program]],
      ]) {
        const t = now();
        spawnSync(process.execPath, args, { stdio: 'ignore' });
        starts[which].push(now() - t);
      }
    }

    const results = [['first push (new app, runtime cached)', await push('v0')]];
    for (let i = 1; i <= changes; i++) {
      // One line changed, pushed as soon as the previous one serves: its release still drains.
      const file = join(repo, 'server.js');
      writeFileSync(file, readFileSync(file, 'utf8').replace(/res\.send\('v\d+'\)/, `res.send('v${i}')`));
      commit(`change ${i}`);
      results.push([`one-line change ${i}`, await push(`v${i}`)]);
    }
    console.log(
      `host: ${hostRoot === root ? 'this checkout' : hostRoot}, ${engine} engine; stability window 3 s (default), drain 5 s (default); times from \`git push\` to the first answer of the new code through the HTTPS edge`,
    );
    console.log(`| push | to serving | receive | ${SERVER_PHASES.join(' | ')} | other | git push exited | waited |`);
    console.log(`|---|---|---|${SERVER_PHASES.map(() => '---').join('|')}|---|---|---|`);
    for (const [name, r] of results) console.log(row(name, r));
    console.log(
      `of the receive: an SSH session and the forced command's refusal (git ls-remote) take ${s(median(probes))} (median of 5); node -e 0 here: ${s(
        median(
          Array.from({ length: 5 }, () => {
            const t = now();
            spawnSync(process.execPath, ['-e', '0']);
            return now() - t;
          }),
        ),
      )}`,
    );
    console.log(
      `each start of bin/git-program.cjs (${Math.round(statSync(program).size / 1024)} kB): node -e 0 + ${Math.round(median(starts.program) - median(starts.bare))} ms (medians of 11, interleaved; node -e 0: ${Math.round(median(starts.bare))} ms)`,
    );
    if (args.verbose) for (const l of results.at(-1)[1].lines) console.log(`  ${(l.ms / 1000).toFixed(3)} ${l.text}`);
    const warm = median(results.slice(1).map(([, r]) => r.total));
    const first = results[0][1].total;
    const where = engine === 'local' ? 'local engine' : 'a one-machine swarm';
    console.log(`goal: one-line change ≤ ${goals.change} s (median of ${changes}: ${s(warm)})${goals.first ? `, first push ≤ ${goals.first} s (${s(first)})` : ''}`);
    target({
      what: `push to serving, one-line change of the Express fixture (${where}, warm host)`,
      runplan: s(warm),
      against: `goal ${goals.change} s`,
      limit: `≤ ${goals.change} s`,
      met: warm <= goals.change * 1000,
      note: `median of ${changes}, each pushed while the release before drains`,
    });
    if (goals.first)
      target({
        what: `push to serving, first push of a new app (${where}, runtime cached)`,
        runplan: s(first),
        against: `goal ${goals.first} s`,
        limit: `≤ ${goals.first} s`,
        met: first <= goals.first * 1000,
        note: 'npm ci of its node_modules included',
      });
  } finally {
    if (serve && serve.exitCode === null) {
      const exited = new Promise((r) => serve.once('exit', r));
      serve.kill('SIGTERM');
      await exited;
    }
    spawnSync('userdel', [sshUser]);
    // The application's own user, made at its creation (app_<28 hex>).
    for (const name of existsSync(join(data, 'git')) ? readdirSync(join(data, 'git')).filter((n) => n.startsWith('app_')) : []) {
      const user = `app_${name
        .replace(/^app_|\.git$/g, '')
        .replace(/-/g, '')
        .slice(0, 28)}`;
      spawnSync('userdel', [user]);
      spawnSync('groupdel', [user]);
    }
    rmSync(base, { recursive: true, force: true });
    await swarm?.stop();
  }
}
