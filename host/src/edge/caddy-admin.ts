import { request } from 'node:http';

/** One answer of Caddy's admin API. */
export interface AdminAnswer {
  readonly status: number;
  readonly body: string;
  /** The ETag of the config at the path read ("<path> <hash>"), sent back as If-Match to change it only if unchanged. */
  readonly etag: string | undefined;
}

export interface AdminRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly body?: unknown;
  readonly ifMatch?: string;
  /** Rejects when no answer came within this long: a Caddy that is stopped (SIGSTOP) or stuck still accepts on its socket. */
  readonly timeoutMs?: number;
}

/** Calls Caddy's admin API on its unix socket; rejects only when the socket does not answer. */
export function adminCall(socket: string, call: AdminRequest): Promise<AdminAnswer> {
  const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: socket,
        method: call.method,
        path: call.path,
        headers: {
          // The one Host the admin endpoint allows (its config's origins).
          host: 'localhost',
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          ...(call.ifMatch === undefined ? {} : { 'if-match': call.ifMatch }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          // Caddy sends the ETag of a GET as a trailer (the config is streamed), of the others as a header.
          const etag = res.trailers.etag ?? (res.headers.etag as string | undefined);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), etag });
        });
      },
    );
    if (call.timeoutMs !== undefined) req.setTimeout(call.timeoutMs, () => req.destroy(new Error(`no answer within ${call.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Caddy's own words from an error answer ({"error": "…"}), else the raw body. */
export function adminError(answer: AdminAnswer): string {
  try {
    const parsed = JSON.parse(answer.body) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
  } catch {
    // Not JSON: the body as it came.
  }
  return answer.body.trim() || `HTTP ${answer.status}`;
}
