import { chmod, chown, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Server as NetServer } from 'node:net';

/**
 * An HTTP server on a unix socket of the data folder, 0600, owned by `owner`
 * when given (the git socket is the SSH account's): who may open the socket is
 * the first check of every request.
 */
export async function listenOnSocket(
  socket: string,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  owner?: { readonly uid: number; readonly gid: number },
): Promise<{ close(): Promise<void> }> {
  const server: Server = createServer((req, res) => void handle(req, res));
  await bindSocket(server, socket, owner);
  return {
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A server listening on `socket`, replacing a stale one, 0600 and owned by `owner` when given. */
async function bindSocket(server: NetServer, socket: string, owner?: { readonly uid: number; readonly gid: number }): Promise<void> {
  await rm(socket, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, resolve);
  });
  if (owner) await chown(socket, owner.uid, owner.gid);
  await chmod(socket, 0o600);
}
