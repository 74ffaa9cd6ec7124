import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeReadiness, readinessTest, waitUntilReady } from '../../src/health/readiness.js';
import { systemClock } from '../../src/time/clock.js';
import { tempDir } from '../helpers/temp.js';

// Issue 36, item 6: Puma's readiness asked Rails for GET /, which an API-only application logs as a FATAL RoutingError.
describe('the unix-socket readiness', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('holds once the socket accepts a connection, and sends the server nothing', async () => {
    const socket = join(await tempDir(), 'puma.sock');
    const received: Buffer[] = [];
    let connections = 0;
    const waiting = waitUntilReady([{ kind: 'unix-socket', socket }], systemClock, new AbortController().signal);
    // Not there yet: the check polls until the server listens.
    await new Promise((resolve) => setTimeout(resolve, 300));
    server = createServer((c) => {
      connections++;
      c.on('data', (d) => received.push(d));
    });
    await new Promise<void>((resolve) => server?.listen(socket, resolve));
    expect(await waiting).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(connections).toBe(1);
    expect(Buffer.concat(received).length).toBe(0);
  });

  it('gives up when its signal aborts, and reads the same in an image (the socket file, which the server makes as it listens)', async () => {
    const socket = join(await tempDir(), 'none.sock');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    expect(await waitUntilReady([{ kind: 'unix-socket', socket }], systemClock, controller.signal)).toBe(false);
    expect(describeReadiness({ kind: 'unix-socket', socket })).toBe(`unix:${socket} accepting connections`);
    const test = readinessTest({ kind: 'unix-socket', socket });
    const holds = () => {
      try {
        execFileSync('sh', ['-c', test]);
        return true;
      } catch {
        return false;
      }
    };
    expect(holds()).toBe(false);
    server = createServer();
    await new Promise<void>((resolve) => server?.listen(socket, resolve));
    expect(holds()).toBe(true);
  });
});
