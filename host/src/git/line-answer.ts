import type { IncomingMessage } from 'node:http';
import { EXIT_LINE_PREFIX } from './hook-protocol.js';

/**
 * Reads an answer in the host's line protocol (a push, a restart, a rollback;
 * hook-protocol.ts): each line to `onLine` as it arrives, then `done` once with
 * the status of the exit line and the code it may name — or undefined when the
 * answer ended without one (serve stopped mid-deploy, or dropped the connection).
 */
export function readLineAnswer(res: IncomingMessage, onLine: (line: string) => void, done: (status: number | undefined, code?: string) => void): void {
  res.setEncoding('utf8');
  let partial = '';
  let status: number | undefined;
  let code: string | undefined;
  let ended = false;
  const take = (line: string) => {
    if (line.startsWith(EXIT_LINE_PREFIX)) {
      const [value = '', named] = line.slice(EXIT_LINE_PREFIX.length).trim().split(' ');
      status = /^[0-9]+$/.test(value) ? Number(value) : 1;
      code = named;
    } else {
      onLine(line);
    }
  };
  res.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) take(line);
  });
  // 'close' comes after 'end', and also when the connection drops mid-answer.
  res.once('close', () => {
    if (ended) return;
    ended = true;
    if (partial !== '') take(partial);
    done(status, code);
  });
  res.on('error', () => {
    // Reported by 'close'.
  });
}
