import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRunplanError } from 'runplan';
import { HostErrors } from '../errors.js';

/** A request body is small JSON: a larger one is refused before it is read whole. */
const MAX_BODY_BYTES = 1024 * 1024;

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw HostErrors.INPUT_USAGE.create({ message: `the request body is larger than ${MAX_BODY_BYTES} bytes.` });
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {}
  throw HostErrors.INPUT_USAGE.create({ message: 'the request body is not a JSON object.' });
}

/**
 * Reads, and drops, what is left of a request's body before an early answer (a refusal, a page not found).
 * A server that closes a connection with unread bytes resets it, and the proxy in front may then lose the
 * answer: Caddy says 502 where the answer was 403. Past the body limit the request is cut off instead.
 */
export async function discardBody(req: IncomingMessage): Promise<void> {
  if (req.readableEnded || req.destroyed) return;
  let size = 0;
  await new Promise<void>((resolve) => {
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy();
    });
    req.once('end', resolve);
    req.once('close', resolve);
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const STATUS_OF_KIND: Record<string, number> = { input: 400, deployment: 500, internal: 500 };

/** The codes of a request that was right but conflicts with the state of what it names. */
const CONFLICTS = new Set([HostErrors.ADDON_LINKED.code, HostErrors.DOMAIN_TAKEN.code]);

function statusOf(code: string, kind: string): number {
  if (/_NOT_FOUND$/.test(code)) return 404;
  if (code === HostErrors.API_UNAUTHORIZED.code) return 401;
  if (CONFLICTS.has(code)) return 409;
  return STATUS_OF_KIND[kind] ?? 500;
}

/** A coded error as the API answers it: 404 for what does not exist, 401 without the token, 409 for a conflict, 400 for bad input. */
export function sendError(res: ServerResponse, error: unknown): void {
  if (isRunplanError(error)) {
    sendJson(res, statusOf(error.code, error.kind), { error: error.toJSON() });
    return;
  }
  sendJson(res, 500, { error: { code: null, kind: 'internal', message: (error as Error)?.message ?? String(error) } });
}

export function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw HostErrors.INPUT_USAGE.create({ message: `${what} must be a string.` });
  return value;
}

export function optionalText(value: unknown, what: string): string | undefined {
  return value === undefined || value === null ? undefined : text(value, what);
}
