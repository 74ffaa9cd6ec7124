// A Docker engine for the tests and the bench, started here and stopped here:
// dockerd with its own data root (kept in the given cache, so stack images are
// built once per machine), its own runtime directory and socket, its own bridge
// (so it never touches another engine's docker0), and no iptables rules
// (NOTES.md, "Container engines"). Installed services never start by themselves.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

function ip(...args) {
  execFileSync('ip', args, { stdio: 'ignore' });
}

function linkExists(name) {
  try {
    execFileSync('ip', ['link', 'show', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether the engine answers /_ping on its socket. */
function ping(socket) {
  return new Promise((resolve) => {
    const req = request({ socketPath: socket, path: '/_ping', timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/**
 * The data root is kept for the stack images, which take minutes to build. The
 * application images are not: each carries its own Node.js (about 200 MB), and
 * they would pile up run after run. Their layer cache and build contexts go with
 * them; the cache mounts (dependencies) stay, so the next run's builds still skip
 * the downloads.
 */
function dropApplicationImages(host) {
  const env = { ...process.env, DOCKER_HOST: host };
  const docker = (...args) => spawnSync('/usr/bin/docker', args, { env, encoding: 'utf8', timeout: 60_000 });
  const images = docker('image', 'ls', '--quiet', '--filter', 'label=io.runplan.plan-digest').stdout?.split('\n').filter(Boolean) ?? [];
  if (images.length > 0) docker('image', 'rm', '--force', ...new Set(images));
  // Layers, and the build contexts BuildKit keeps per context directory (each holds a Node.js).
  for (const type of ['regular', 'source.local']) docker('builder', 'prune', '--force', '--filter', `type=${type}`);
}

/** Starts dockerd (undefined when this machine has none); `stop()` stops it by PID and removes what it made. */
export async function startTestEngine(cacheDir) {
  if (!existsSync('/usr/sbin/dockerd') && !existsSync('/usr/bin/dockerd')) return undefined;
  const tag = process.pid % 10_000;
  const run = `/run/rptd-${process.pid}`;
  const socket = join(run, 'docker.sock');
  const bridge = `rptd${tag}`;
  mkdirSync(run, { recursive: true });
  const bridgesBefore = ['docker_gwbridge'].filter(linkExists);
  ip('link', 'add', bridge, 'type', 'bridge');
  ip('addr', 'add', `172.31.${tag % 250}.1/24`, 'dev', bridge);
  ip('link', 'set', bridge, 'up');
  const dockerd = spawn(
    'dockerd',
    [
      '--data-root',
      join(cacheDir, 'docker'),
      '--exec-root',
      join(run, 'exec'),
      '--pidfile',
      join(run, 'dockerd.pid'),
      '-H',
      `unix://${socket}`,
      '--iptables=false',
      '--bridge',
      bridge,
      '--ip-masq=false',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  dockerd.stderr.on('data', (c) => (log = (log + c).slice(-20_000)));
  const exited = new Promise((resolve) => dockerd.once('exit', () => resolve()));
  const stop = async () => {
    if (dockerd.exitCode === null) dropApplicationImages(`unix://${socket}`);
    if (dockerd.exitCode === null) dockerd.kill('SIGTERM');
    let timer;
    await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
    clearTimeout(timer);
    if (dockerd.exitCode === null) {
      dockerd.kill('SIGKILL');
      await exited;
    }
    dockerd.stderr.destroy();
    // Ours only: the bridge made above, and the swarm's bridge when it was not there before.
    for (const name of [bridge, ...['docker_gwbridge'].filter((b) => !bridgesBefore.includes(b))]) {
      if (linkExists(name)) ip('link', 'del', name);
    }
    rmSync(run, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  while (!existsSync(socket) || !(await ping(socket))) {
    if (dockerd.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`dockerd did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { host: `unix://${socket}`, pid: dockerd.pid, stop };
}

/**
 * Whether a command run with `docker exec` (and so a HEALTHCHECK) runs inside
 * the container: '' when it does, else why not. A dockerd started inside a
 * chroot makes containers whose mount namespace keeps the outer root, so exec
 * lands on the outer machine's files (fresh-debian's roots are such chroots).
 * The probe image holds only the host's `sleep`, its libraries and a directory
 * that exists nowhere else.
 */
export function probeContainerExec(host) {
  const env = { ...process.env, DOCKER_HOST: host };
  const docker = (...args) => execFileSync('/usr/bin/docker', args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  const root = mkdtempSync(join(tmpdir(), 'runplan-exec-probe-'));
  const image = `runplan-test/exec-probe:${process.pid}`;
  let container = '';
  try {
    const files = ['/usr/bin/sleep', ...[...execFileSync('ldd', ['/usr/bin/sleep'], { encoding: 'utf8' }).matchAll(/(\/\S+) \(0x/g)].map((m) => m[1])];
    for (const file of files) {
      mkdirSync(join(root, dirname(file)), { recursive: true });
      copyFileSync(file, join(root, file));
      chmodSync(join(root, file), 0o755);
    }
    mkdirSync(join(root, 'runplan-exec-probe'));
    execFileSync('/bin/sh', ['-c', `tar -C '${root}' -c . | /usr/bin/docker import - '${image}'`], { env, stdio: 'ignore' });
    container = docker('run', '--detach', '--network', 'none', image, '/usr/bin/sleep', '60');
    docker('exec', '--workdir', '/runplan-exec-probe', container, '/usr/bin/sleep', '0');
    return '';
  } catch (error) {
    const said = `${error.stdout ?? ''}${error.stderr ?? ''}`.trim().split('\n').pop() || error.message;
    return `docker exec does not run inside the container (${said})${isChroot() ? '; this dockerd runs inside a chroot' : ''}`;
  } finally {
    if (container) spawnSync('/usr/bin/docker', ['rm', '--force', container], { env, stdio: 'ignore' });
    spawnSync('/usr/bin/docker', ['image', 'rm', '--force', image], { env, stdio: 'ignore' });
    rmSync(root, { recursive: true, force: true });
  }
}

function isChroot() {
  return spawnSync('ischroot', [], { stdio: 'ignore' }).status === 0;
}
