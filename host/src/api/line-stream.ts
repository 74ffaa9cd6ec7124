import type { ServerResponse } from 'node:http';
import { EXIT_LINE_PREFIX } from '../git/hook-protocol.js';

/**
 * A long operation's answer (a push, a restart, a rollback): its lines as they
 * come, then one line `EXIT_LINE_PREFIX<status>`, and the code of a failure
 * after a space. A client of the API that goes away does not stop the deploy;
 * it only stops reading it (a push's hook is another matter: git-server.ts).
 */
export function lineStream(res: ServerResponse): { line(text: string): void; end(status: number, code?: string): void } {
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.flushHeaders();
  const write = (text: string) => {
    if (!res.destroyed && !res.writableEnded) res.write(`${text.replace(/\n/g, ' ')}\n`);
  };
  return {
    line: write,
    end(status, code) {
      if (res.destroyed || res.writableEnded) return;
      res.end(`${EXIT_LINE_PREFIX}${status}${code === undefined ? '' : ` ${code}`}\n`);
    },
  };
}
