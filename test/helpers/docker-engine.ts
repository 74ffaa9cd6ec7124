import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { probeHttp } from '../../src/health/probes.js';

/**
 * A Docker engine for the tests, started here and stopped here: dockerd with its
 * own data root (kept in the test cache, so stack images are built once per
 * machine), its own runtime directory and socket, its own bridge (so it never
 * touches another engine's docker0), and no iptables rules (NOTES.md,
 * "Container engines"). Installed services never start by themselves.
 */
export interface TestEngine {
  /** For DOCKER_HOST. */
  readonly host: string;
  stop(): Promise<void>;
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: 'ignore' });
}

function linkExists(name: string): boolean {
  try {
    execFileSync('ip', ['link', 'show', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function startTestEngine(cacheDir: string): Promise<TestEngine | undefined> {
  if (!existsSync('/usr/sbin/dockerd') && !existsSync('/usr/bin/dockerd')) return undefined;
  const tag = process.pid % 10_000;
  const run = `/run/rptd-${process.pid}`;
  const socket = join(run, 'docker.sock');
  const bridge = `rptd${tag}`;
  const subnet = `172.31.${tag % 250}`;
  mkdirSync(run, { recursive: true });
  const bridgesBefore = ['docker_gwbridge'].filter(linkExists);
  ip('link', 'add', bridge, 'type', 'bridge');
  ip('addr', 'add', `${subnet}.1/24`, 'dev', bridge);
  ip('link', 'set', bridge, 'up');
  const dockerd = spawn(
    'dockerd',
    ['--data-root', join(cacheDir, 'docker'), '--exec-root', join(run, 'exec'), '--pidfile', join(run, 'dockerd.pid'), '-H', `unix://${socket}`, '--iptables=false', '--bridge', bridge, '--ip-masq=false'],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: false },
  );
  let log = '';
  dockerd.stderr.on('data', (c: Buffer) => (log = (log + c).slice(-20_000)));
  const exited = new Promise<void>((resolve) => dockerd.once('exit', () => resolve()));
  const stop = async () => {
    if (dockerd.exitCode === null) dockerd.kill('SIGTERM');
    // Unref'd: once dockerd has exited, a pending timer must not keep vitest from exiting.
    await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000).unref())]);
    if (dockerd.exitCode === null) {
      dockerd.kill('SIGKILL');
      await exited;
    }
    // Ours only: the bridge made above, and the swarm's bridge when it was not there before.
    for (const name of [bridge, ...['docker_gwbridge'].filter((b) => !bridgesBefore.includes(b))]) {
      if (linkExists(name)) ip('link', 'del', name);
    }
    rmSync(run, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  while (!existsSync(socket) || !('status' in (await probeHttp(new URL('http://localhost/_ping'), 2_000, socket)))) {
    if (dockerd.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`dockerd did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { host: `unix://${socket}`, stop };
}

/** The engine's PID, from its pidfile (for checks that it is gone). */
export function enginePid(host: string): number | undefined {
  const file = join(host.replace(/^unix:\/\//, '').replace(/\/docker\.sock$/, ''), 'dockerd.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8')) : undefined;
}
