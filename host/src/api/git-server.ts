import type { IncomingMessage, ServerResponse } from 'node:http';
import { describeError } from '../deploy/describe-error.js';
import { HostErrors } from '../errors.js';
import { type PushRequest, PUSH_PATH } from '../git/hook-protocol.js';
import type { HostService } from '../service.js';
import { discardBody, readJson, sendError, sendJson, text } from './http-util.js';
import { lineStream } from './line-stream.js';
import { listenOnSocket } from './socket-server.js';

/** A commit id as git sends them (SHA-1 or SHA-256, hex): serve passes it to git. */
function commitId(value: unknown, what: string): string {
  const id = text(value, what);
  if (!/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(id)) throw HostErrors.INPUT_USAGE.create({ message: `${what} must be a commit id (hex).` });
  return id;
}

/**
 * The git transport's way in: a unix socket only the SSH user (and root) can
 * open, which the forced command asks whether a key may push to an application,
 * and the proc-receive hook asks to deploy what was pushed. Whatever the hook
 * says, the key is checked again here. A hook that goes away (killed, or its
 * receive-pack gone with the pusher) leaves git reporting the push rejected:
 * its deploy stops, unless master had moved already.
 */
export class GitServer {
  private server: { close(): Promise<void> } | undefined;

  constructor(private readonly service: HostService) {}

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://host');
      if (req.method === 'GET' && url.pathname === '/authorize') {
        const allowed = await this.service.mayPush(url.searchParams.get('key') ?? '', url.searchParams.get('app') ?? '');
        return sendJson(res, allowed ? 200 : 403, { allowed });
      }
      if (req.method === 'POST' && url.pathname === PUSH_PATH) {
        const b = await readJson(req);
        const request: PushRequest = {
          app: text(b.app, 'app'),
          key: text(b.key, 'key'),
          ref: text(b.ref, 'ref'),
          oldCommit: commitId(b.oldCommit, 'oldCommit'),
          newCommit: commitId(b.newCommit, 'newCommit'),
        };
        const gone = new AbortController();
        res.once('close', () => {
          if (!res.writableFinished) gone.abort(HostErrors.PUSH_ABANDONED.create({ message: 'the push ended (its git hook went away) before its release was accepted: master did not move.' }));
        });
        const stream = lineStream(res);
        try {
          const result = await this.service.push(request, stream.line, gone.signal);
          stream.end(result.ok ? 0 : 1, result.code);
        } catch (error) {
          for (const line of describeError(error).lines) stream.line(line);
          stream.end(1);
        }
        return;
      }
      await discardBody(req);
      sendJson(res, 404, { error: { message: `no ${req.method} ${url.pathname}` } });
    } catch (error) {
      if (res.headersSent) return void res.end();
      await discardBody(req);
      sendError(res, error);
    }
  }

  async listen(socket: string, owner: { uid: number; gid: number }): Promise<void> {
    this.server = await listenOnSocket(socket, (req, res) => this.handle(req, res), owner);
  }

  async close(): Promise<void> {
    await this.server?.close();
  }
}
