// A real runplan-host for a bench, driven as its user drives it: `init`, `serve`, the
// CLI, `git push` over SSH and HTTPS through the edge, all on 127.0.0.1. What it
// starts it stops by PID (serve, which stops its releases, Caddy and sshd itself),
// and what it makes it removes: its data folder, the SSH account, each application's
// user and the per-application entries it added to runplan's cache.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { probeContainerExec, startTestEngine } from '../scripts/test-engine.mjs';
import { freePort, reachableTemp, root } from './lib.mjs';

const run = promisify(execFile);
// The command users run (its shebang holds node's options for serve), not host/dist/cli.js under a plain node.
const hostBinOf = (hostRoot) => join(hostRoot, 'host', 'bin', 'runplan-host.js');

/** The variables serve keeps (host/src/clean-environment.ts): given only these, serve does not start itself again in a clean environment, so its PID is the one spawned. */
const KEPT = /^(PATH|HOME|USER|LOGNAME|LANG|LANGUAGE|TZ|TERM|TMPDIR|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|(https?|no)_proxy|(HTTPS?|NO)_PROXY|LC_.*|RUNPLAN_.*)$/;
const cleanEnv = (extra) => ({ ...Object.fromEntries(Object.entries(process.env).filter(([name]) => KEPT.test(name))), ...extra });

/**
 * runplan's cache entries that are one application's, by top folder: its layers and npm
 * cache, named as its workspace under the host's runplan/work/ (runplan's appCacheKey).
 * Only those are removed: the cache may be shared with other hosts and tests.
 */
const PER_APP = ['layers', 'npm-cache'];
const listing = (dir) => (existsSync(dir) ? readdirSync(dir) : []);

/** `app_` and 28 hex digits of the application's UUID (host/src/tenancy/app-users.ts): the Unix user it runs as. */
/** An application's default name on a bench host (domain localhost): `app-<uuid>.localhost` (host/src/settings.ts appHostName). */
export const appHostOf = (appId) => `app-${appId.slice(4)}.localhost`;

export const appUserName = (appId) => `app_${appId.slice(4).replace(/-/g, '').slice(0, 28)}`;

export class BenchHost {
  /** serve's child process while it runs. */
  serve = undefined;
  serveOutput = '';

  constructor({ scratch, cacheDir, serveEnv, hostRoot = root }) {
    this.scratch = scratch;
    this.hostBin = hostBinOf(hostRoot);
    this.data = join(scratch, 'data');
    this.client = join(scratch, 'client');
    this.cacheDir = cacheDir;
    this.serveEnv = serveEnv;
    this.sshUser = `rpb-${randomBytes(3).toString('hex')}`;
  }

  /**
   * `runplan-host init` on free loopback ports, its cache the bench's (`initArgs`: more of init's options, e.g. the engine); and a client key allowed to push to `org`.
   * `hostRoot`: another checkout whose runplan-host to run (a baseline), built. `keepApps`: serve's stops leave the applications serving (dispose() stops them).
   */
  static async create({ cacheDir, serveEnv = {}, org, initArgs = [], hostRoot, keepApps = false, settings = {} }) {
    const host = new BenchHost({ scratch: reachableTemp('/tmp/runplan-bench-host-'), cacheDir, serveEnv, hostRoot });
    host.ports = { ssh: await freePort(), https: await freePort(), http: await freePort() };
    const p = host.ports;
    await host.cli(['init', '--ssh-port', `${p.ssh}`, '--https-port', `${p.https}`, '--http-port', `${p.http}`, '--ssh-user', host.sshUser, '--cache-dir', cacheDir, ...initArgs]);
    host.keepApps = keepApps;
    // releaseNetwork, diskMb: written into settings.json before serve starts, not given to init (a baseline's older init has no such flag).
    if (Object.keys(settings).length > 0) {
      const file = join(host.data, 'settings.json');
      // diskMb 0: no disk of its own, as init --disk-mb 0 leaves it out.
      const { diskMb, ...kept } = { ...JSON.parse(readFileSync(file, 'utf8')), ...settings };
      writeFileSync(file, `${JSON.stringify({ ...kept, ...(diskMb ? { diskMb } : {}) }, null, 2)}\n`, { mode: 0o600 });
    }
    await host.start();
    await run('mkdir', ['-m', '700', '-p', host.client]);
    host.key = join(host.client, 'id_ed25519');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bench', '-f', host.key]);
    await host.cli(['keys', 'add', org, `${host.key}.pub`]);
    return host;
  }

  /** runplan-host with this data folder; throws with its output when it fails. */
  async cli(args) {
    const { stdout } = await run(this.hostBin, [...args, '--data', this.data], { maxBuffer: 64 << 20 }).catch((e) => {
      throw new Error(`runplan-host ${args.join(' ')} exited ${e.code}: ${e.stdout}${e.stderr}`);
    });
    return stdout;
  }

  async json(args) {
    return JSON.parse(await this.cli([...args, '--json']));
  }

  /**
   * Starts serve; resolves once it says it serves (every application taken over or brought back). `onLine` sees
   * its output as it comes. `keepApps`: serve's stop leaves the applications serving (an operator's serve);
   * by default it takes them down with it.
   */
  start(onLine = () => {}, { keepApps = this.keepApps ?? false } = {}) {
    this.serveOutput = '';
    if (keepApps) this.keptApps = true;
    // RUNPLAN_BENCH_SERVE_NODE_ARGS: node's options for serve when profiling it (e.g. --trace-gc), in place of its shebang's.
    const nodeArgs = (process.env.RUNPLAN_BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const [file, ...first] = nodeArgs.length > 0 ? [process.execPath, ...nodeArgs, this.hostBin] : [this.hostBin];
    // A runplan-host of before serve left its applications running has no flag: its serve stops them anyway.
    this.stopsApps ??= execFileSync(this.hostBin, ['--help'], { encoding: 'utf8' }).includes('--stop-apps-on-exit');
    const stopApps = keepApps || !this.stopsApps ? [] : ['--stop-apps-on-exit'];
    const child = spawn(file, [...first, 'serve', ...stopApps, '--data', this.data], { stdio: ['ignore', 'pipe', 'pipe'], env: cleanEnv(this.serveEnv) });
    this.serve = child;
    return new Promise((resolve, reject) => {
      const onData = (chunk) => {
        const text = chunk.toString();
        this.serveOutput += text;
        onLine(text);
        if (this.serveOutput.includes('==> serving')) resolve();
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => reject(new Error(`serve exited ${code}:\n${this.serveOutput.slice(-4000)}`)));
    });
  }

  /** `signal` to serve (SIGTERM: it stops as it was started to; SIGKILL: a crash); resolves once it has exited. */
  async stop(signal = 'SIGTERM') {
    const child = this.serve;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.removeAllListeners('exit');
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
    this.serve = undefined;
  }

  /** Stops serve (and what a serve that kept its applications left), removes the accounts and cache entries this host made, then its folder. */
  async dispose(appIds) {
    await this.stop();
    if (this.keptApps) await this.cli(['stop-apps']).catch(() => undefined);
    for (const id of appIds) {
      await run('userdel', [appUserName(id)]).catch(() => undefined);
      await run('groupdel', [appUserName(id)]).catch(() => undefined);
    }
    await run('userdel', [this.sshUser]).catch(() => undefined);
    for (const key of listing(join(this.data, 'runplan', 'work'))) for (const dir of PER_APP) rmSync(join(this.cacheDir, dir, key), { recursive: true, force: true });
    rmSync(this.scratch, { recursive: true, force: true });
  }

  get rootCertificate() {
    return join(this.data, 'edge', 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');
  }

  /** GET through the edge over HTTPS, a new connection each time (as a new visitor): status, body and the milliseconds it took. */
  get(appId, path = '/') {
    this.ca ??= readFileSync(this.rootCertificate);
    const host = appHostOf(appId);
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: this.ports.https, path, servername: host, headers: { host }, ca: this.ca, agent: false, timeout: 10_000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode, body, ms: performance.now() - started }));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end();
    });
  }

  /** A git repository of `dir` (node_modules left out), committed on master, its remote `runplan` the application's. */
  async repository(dir, name, gitRemote) {
    const repo = join(this.client, name);
    cpSync(dir, repo, { recursive: true, filter: (src) => !src.includes('node_modules') });
    await this.git(repo, ['init', '-q', '-b', 'master']);
    await this.commit(repo, 'first');
    await this.git(repo, ['remote', 'add', 'runplan', gitRemote]);
    return repo;
  }

  async commit(repo, message) {
    await this.git(repo, ['add', '-A']);
    await this.git(repo, ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '--allow-empty', '-m', message]);
  }

  /** git with the client's key and known_hosts, nothing of the shell's own configuration. */
  async git(repo, args) {
    const env = {
      PATH: process.env.PATH,
      HOME: this.client,
      GIT_TERMINAL_PROMPT: '0',
      GIT_SSH_COMMAND: `ssh -i ${this.key} -o IdentitiesOnly=yes -o UserKnownHostsFile=${join(this.client, 'known_hosts')} -o StrictHostKeyChecking=accept-new -o BatchMode=yes`,
    };
    return run('git', args, { cwd: repo, env, maxBuffer: 64 << 20 });
  }

  /** `git push runplan master`: its exit status and output (a rejected push is an answer, not an error). */
  push(repo) {
    return this.git(repo, ['push', 'runplan', 'master']).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (e) => ({ code: typeof e.code === 'number' ? e.code : 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
    );
  }

  /** The commit git's master of the application's bare repository names: what the host accepted. */
  async master(appId) {
    const { stdout } = await run('git', ['--git-dir', join(this.data, 'git', `${appId}.git`), 'rev-parse', 'master']);
    return stdout.trim();
  }
}

/**
 * A single-node swarm for the host: DOCKER_HOST's engine when set (a swarm manager already, left as it is),
 * else a dockerd of the bench's own on the tests' data root (its stack images built once per machine), made a
 * swarm on 127.0.0.1, which `stop()` leaves and stops.
 */
export async function startSwarm(cacheDir, types) {
  const given = process.env.DOCKER_HOST;
  const engine = given ? undefined : await startTestEngine(cacheDir);
  if (!given && !engine) throw new Error("--engine swarm needs dockerd (Debian's docker.io) or DOCKER_HOST naming a swarm manager");
  const host = given ?? engine.host;
  const docker = (args) => execFileSync('/usr/bin/docker', args, { env: { ...process.env, DOCKER_HOST: host }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = async () => {
    if (!engine) return;
    try {
      docker(['swarm', 'leave', '--force']);
    } catch {
      // Not in a swarm (it failed before joining one).
    }
    await engine.stop();
  };
  try {
    // Swarm counts a task as running once its HEALTHCHECK passes, which the engine runs with exec.
    const execProblem = probeContainerExec(host);
    if (execProblem) throw new Error(`--engine swarm: ${execProblem}`);
    const { DockerCli, STACKS, ensureStackImage } = await import(join(root, 'dist', 'engines', 'docker.js'));
    const client = await DockerCli.connect({ host });
    const stacksStarted = performance.now();
    // Minutes each on an engine that has none yet (a Debian bootstrap), as for a host's operator, who makes them once.
    for (const stack of [...[...types].map((t) => STACKS[t]), STACKS.proxy]) await ensureStackImage(client, stack, { log: () => {} });
    console.log(`  stack images ready in ${((performance.now() - stacksStarted) / 1000).toFixed(1)} s (built once per data root)`);
    if (engine) {
      // The data root is kept between runs: a run that stopped half-way may have left it in a swarm.
      try {
        docker(['swarm', 'leave', '--force']);
      } catch {
        // It was not in one.
      }
      docker(['swarm', 'init', '--advertise-addr', '127.0.0.1', '--listen-addr', `127.0.0.1:${await freePort()}`]);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const containerdPid = Number(
    readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .find((p) => {
        try {
          return readFileSync(`/proc/${p}/status`, 'utf8').match(/^PPid:\s+(\d+)/m)?.[1] === String(engine?.pid) && readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'containerd';
        } catch {
          return false;
        }
      }) ?? 0,
  );
  return { host, pid: engine?.pid, containerdPid, docker, stop };
}

/** Runs `each` on the local engine, then on a single-node swarm where a Docker engine can be had; `named` (local or swarm) picks one. */
export async function onEachEngine(named, each) {
  if (named !== undefined && named !== 'local' && named !== 'swarm') throw new Error(`--engine takes local or swarm, not ${named}`);
  if (named !== 'swarm') await each('local');
  if (named === 'swarm' || (named === undefined && (process.env.DOCKER_HOST || existsSync('/usr/sbin/dockerd') || existsSync('/usr/bin/dockerd')))) {
    console.log('\n### the same on a single-node Docker swarm');
    await each('swarm');
  } else if (named === undefined) console.log('\n  (no dockerd on this machine, nor DOCKER_HOST: the swarm run is left out)');
}
