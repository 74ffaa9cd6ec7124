import { request } from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One real HTTP GET (no redirect following), for tests to observe what an app answers. */
export function get(url: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return send(url, 'GET', headers);
}

/** One real HTTP POST of `body` (an upload), likewise. */
export function post(url: string, body: Buffer, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return send(url, 'POST', { 'content-type': 'application/octet-stream', 'content-length': String(body.length), ...headers }, body);
}

function send(url: string, method: string, headers: Record<string, string>, body?: Buffer): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}
