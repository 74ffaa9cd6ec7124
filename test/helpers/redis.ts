import { spawn } from 'node:child_process';
import { freePort } from './ports.js';
import { probePort } from '../../src/health/probes.js';

export interface RedisServer {
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * A real redis-server for one test, on 127.0.0.1 and a free port, persisting
 * nothing; stopped by its PID. Installed services never start by themselves here.
 */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await probePort('127.0.0.1', port, 500))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
