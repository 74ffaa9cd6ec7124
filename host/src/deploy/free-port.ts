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

/**
 * The loopback ports of this serve's releases (starting, serving, draining): none is handed out twice.
 * The system gives any port nothing listens on, and a release that has its port but does not listen
 * yet (it is booting) looks free: two deploys at once (serve bringing applications back) got the same
 * one, and one release's health check was answered by the other (issue 45's fifty-applications bench).
 */
export class PortBook {
  private readonly taken = new Set<number>();

  /** A free port no release of this serve holds, until the function returned is called. */
  async take(): Promise<{ readonly port: number; readonly give: () => void }> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = await freePort();
      if (this.taken.has(port)) continue;
      return { port, give: this.hold(port) };
    }
    throw new Error('no free loopback port could be found in 50 attempts');
  }

  /** Holds `port` (a release taken over from an earlier serve), until the function returned is called. */
  hold(port: number): () => void {
    this.taken.add(port);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.taken.delete(port);
    };
  }
}
