import { connect } from 'node:net';

/** Where to reach a listener bound to `address` from this machine. */
export function connectAddress(address: string): string {
  if (address === '0.0.0.0' || address === '') return '127.0.0.1';
  if (address === '::') return '::1';
  return address;
}

/**
 * Whether something accepts a TCP connection on host:port right now and, when
 * `greeting` is given, first says something that starts with it (sshd's
 * "SSH-2.0-"): a process that accepts and never answers is not serving.
 */
export function accepts(host: string, port: number, greeting?: string, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: connectAddress(host), port });
    let said = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => {
      if (greeting === undefined) done(true);
    });
    socket.on('data', (chunk: Buffer) => {
      said += chunk.toString('latin1');
      if (said.length >= (greeting ?? '').length) done(said.startsWith(greeting ?? ''));
    });
    socket.once('end', () => done(false));
    socket.once('error', () => done(false));
  });
}
