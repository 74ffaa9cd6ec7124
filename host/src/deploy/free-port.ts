import { createServer } from 'node:net';

/** A loopback port nothing listens on now (the system's choice, or `port` when given), for a new release's web process. */
export function freePort(port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}

/** `kept` while nothing listens on it (a port a config file names, kept from its first writing), else a new free port. */
export function keptOrFreePort(kept: number | undefined): Promise<number> {
  return kept === undefined ? freePort() : freePort(kept).catch(() => freePort());
}
