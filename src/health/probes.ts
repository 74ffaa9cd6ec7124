/** Outcome of one GET: a status code, or a readable reason there was none. */
export type ProbeOutcome = { readonly status: number } | { readonly failure: string; readonly transient: boolean };

/**
 * GET `url` once, without following redirects (a 301 is reported as 301), with a
 * timeout. The body is discarded. With `socketPath`, the request goes to the
 * server listening on that unix socket (the URL then only gives the path).
 */
export async function probeHttp(url: URL, timeoutMs: number, socketPath?: string): Promise<ProbeOutcome> {
  // Loaded on the first check (then Node's own module cache answers): a CLI that only plans never loads them.
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: ProbeOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = request(url, { method: 'GET', agent: false, headers: { 'user-agent': 'runplan-health-check', connection: 'close' }, ...(socketPath ? { socketPath } : {}) }, (res) => {
      res.resume();
      finish({ status: res.statusCode ?? 0 });
      res.on('error', () => undefined);
    });
    const timer = setTimeout(() => {
      finish({ failure: `no response: timed out after ${formatSeconds(timeoutMs)}`, transient: true });
      req.destroy();
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => finish(describeSocketError(error)));
    req.end();
  });
}

/** Whether something accepts TCP connections on host:port. */
export async function probePort(host: string, port: number, timeoutMs: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Whether something accepts connections on the unix socket at `path` (nothing is sent). */
export async function probeUnixSocket(path: string, timeoutMs: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const socket = connect({ path });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function describeSocketError(error: NodeJS.ErrnoException): ProbeOutcome {
  switch (error.code) {
    case 'ECONNREFUSED':
      return { failure: 'no response: connection refused', transient: true };
    case 'ECONNRESET':
      return { failure: 'no response: connection reset', transient: true };
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return { failure: 'no response: host unreachable', transient: true };
    case 'ENOENT':
      return { failure: 'no response: socket not found', transient: true };
    case 'ENOTFOUND':
      return { failure: 'no response: host name not found', transient: false };
    default:
      return { failure: `no response: ${error.code ?? error.message}`, transient: true };
  }
}

export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
