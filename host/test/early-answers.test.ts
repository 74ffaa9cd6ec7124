import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../src/api/api-client.js';
import { ApiServer } from '../src/api/api-server.js';
import type { HostService } from '../src/service.js';
import { ConsoleServer } from '../src/console/console-server.js';

/**
 * A refusal is answered before the handler reads the body. Closing a connection with unread bytes resets it,
 * and a proxy still sending the body may lose the answer: Caddy then says 502 where the console said 403 (a
 * CI run of the console's browser test saw exactly that). Each request here is sent the way Caddy sends one
 * to a socket: `Connection: close`, the body streamed after the headers.
 */
async function refusedMany(socketPath: string, path: string, headers: Record<string, string>): Promise<{ statuses: Set<number>; errors: string[] }> {
  const statuses = new Set<number>();
  const errors: string[] = [];
  for (let i = 0; i < 150; i++) {
    await new Promise<void>((resolve) => {
      const req = request({ socketPath, method: 'POST', path, headers: { connection: 'close', 'transfer-encoding': 'chunked', ...headers } }, (res) => {
        statuses.add(res.statusCode ?? 0);
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', (error) => {
        errors.push(error.message);
        resolve();
      });
      req.flushHeaders();
      setTimeout(() => req.end('token=x&'.repeat(8_000)), 1);
    });
  }
  return { statuses, errors };
}

describe('early answers of the host’s own servers', () => {
  let folder: string;
  const closers: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'runplan-early-'));
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await rm(folder, { recursive: true, force: true });
  });

  it("the console refuses another site's form, and a form without a session, with its answer never lost", async () => {
    // Neither refusal reaches the API.
    const console_ = new ConsoleServer({} as ApiClient, 'host-token');
    const socket = join(folder, 'console.sock');
    await console_.listen(socket);
    closers.push(() => console_.close());
    const crossSite = await refusedMany(socket, '/sign-in', { host: 'console.localhost', origin: 'https://evil.example' });
    expect(crossSite).toEqual({ statuses: new Set([403]), errors: [] });
    const signedOut = await refusedMany(socket, '/apps', { host: 'console.localhost' });
    expect(signedOut).toEqual({ statuses: new Set([401]), errors: [] });
  });

  it('the API refuses a request without its token, with its answer never lost', async () => {
    const api = new ApiServer({} as HostService, 'api-token');
    const socket = join(folder, 'api.sock');
    await api.listen(socket);
    closers.push(() => api.close());
    expect(await refusedMany(socket, '/apps', { authorization: 'Bearer wrong' })).toEqual({ statuses: new Set([401]), errors: [] });
  });
});
