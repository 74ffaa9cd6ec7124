// A Docker engine for the tests and the bench, started here and stopped here:
// dockerd with its own data root (kept in the given cache, so stack images are
// built once per machine), its own runtime directory and socket, its own bridge
// (so it never touches another engine's docker0), and no iptables rules
// (NOTES.md, "Container engines"). Installed services never start by themselves.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';

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
    ['--data-root', join(cacheDir, 'docker'), '--exec-root', join(run, 'exec'), '--pidfile', join(run, 'dockerd.pid'), '-H', `unix://${socket}`, '--iptables=false', '--bridge', bridge, '--ip-masq=false'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  dockerd.stderr.on('data', (c) => (log = (log + c).slice(-20_000)));
  const exited = new Promise((resolve) => dockerd.once('exit', () => resolve()));
  const stop = async () => {
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
