import { type Server, createServer, request as httpRequest } from 'node:http';
import { type Agent, request as httpsRequest } from 'node:https';
import { freePort } from '../../../test/helpers/ports.js';

/** A stand-in application: a real HTTP server answering with its port and the request headers it received. */
export interface EchoApp {
  readonly port: number;
  served: number;
  readonly server: Server;
}

export async function startApp(): Promise<EchoApp> {
  const port = await freePort();
  const server = createServer((req, res) => {
    app.served++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ port, headers: req.headers }));
  });
  const app: EchoApp = { port, served: 0, server };
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return app;
}

export function stopApp(app: EchoApp): Promise<void> {
  app.server.closeAllConnections();
  return new Promise((resolve) => app.server.close(() => resolve()));
}

/** The address an upstream folder names for the app (AppUpstreams.point). */
export const address = (app: EchoApp) => `127.0.0.1:${app.port}`;

export interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** A GET to the edge's HTTPS port for `host`, verified against the edge's root certificate only. */
export function httpsGet(port: number, host: string, ca: string, headers: Record<string, string> = {}, agent?: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, servername: host, path: '/', ca, headers: { host: `${host}:${port}`, ...headers }, ...(agent ? { agent } : { agent: false }) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timed out')));
    // Whether the request went on a kept-alive connection that the server may have closed meanwhile.
    req.on('error', (error) => reject(Object.assign(error, { reusedSocket: req.reusedSocket })));
    req.end();
  });
}

export function httpGet(
  port: number,
  host: string,
  headers: Record<string, string> = {},
  { method = 'GET', path = '/', body: sent }: { method?: string; path?: string; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { host, ...headers }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(sent);
  });
}
