import { mkdir, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { bindSocket } from '../api/socket-server.js';

interface Upstream {
  readonly server: Server;
  /** The loopback port of the release serving now: each new connection goes there. */
  port: number;
  readonly open: Set<Socket>;
}

/**
 * One unix socket per application, which the edge's route dials, piped to the
 * loopback port of the release that serves now. A switch re-points the socket
 * and the edge's configuration stays as it is: every change of Caddy's
 * configuration is a reload, and a reload empties its certificate cache until
 * it has read them again (caddyserver/caddy#5589), failing a TLS handshake that
 * comes in between. Connections already open stay on the release they reached,
 * which drains them; the route asks for a new connection per request.
 */
export class AppUpstreams {
  private readonly upstreams = new Map<string, Upstream>();

  constructor(private readonly dir: string) {}

  private socketOf(appId: string): string {
    return join(this.dir, `${appId}.sock`);
  }

  /** Sends the application's new connections to 127.0.0.1:`port` from now on. */
  async point(appId: string, port: number): Promise<void> {
    const existing = this.upstreams.get(appId);
    if (existing) {
      existing.port = port;
      return;
    }
    const open = new Set<Socket>();
    const upstream: Upstream = {
      port,
      open,
      server: createServer((client) => {
        const target = connect({ host: '127.0.0.1', port: upstream.port });
        for (const socket of [client, target]) {
          open.add(socket);
          socket.once('close', () => open.delete(socket));
          // One side failing ends both; an orderly end is passed on by pipe() once the data before it is written.
          socket.once('error', () => {
            client.destroy();
            target.destroy();
          });
        }
        client.pipe(target);
        target.pipe(client);
      }),
    };
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // Caddy (root) connects; nobody else.
    await bindSocket(upstream.server, this.socketOf(appId));
    this.upstreams.set(appId, upstream);
  }

  /** Closes every socket and the connections through them (serve stopping, after the releases). */
  async closeAll(): Promise<void> {
    await Promise.all(
      [...this.upstreams.entries()].map(async ([appId, upstream]) => {
        for (const socket of upstream.open) socket.destroy();
        await new Promise<void>((resolve) => upstream.server.close(() => resolve()));
        await rm(this.socketOf(appId), { force: true });
      }),
    );
    this.upstreams.clear();
  }
}
