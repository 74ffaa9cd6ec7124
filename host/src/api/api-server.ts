import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HostErrors } from '../errors.js';
import type { HostService } from '../service.js';
import type { AppRecord } from '../store/store.js';
import { discardBody, optionalText, readJson, sendError, sendJson, text } from './http-util.js';
import { lineStream } from './line-stream.js';
import { Routes } from './routes.js';
import { listenOnSocket } from './socket-server.js';

type Handler = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, query: URLSearchParams) => Promise<void>;

/**
 * The host's API: HTTP on a unix socket of the data folder (0600, root's), and the
 * token on every request all the same (a console or a proxy in front of it sends
 * it too). JSON in and out; a push-like operation answers with its lines.
 */
export class ApiServer {
  private server: { close(): Promise<void> } | undefined;
  private readonly routes = new Routes<Handler>();

  constructor(
    s: HostService,
    private readonly token: string,
  ) {
    this.route('GET', '/apps', async (_req, res, _p, q) => sendJson(res, 200, { apps: await s.apps(q.get('org') ?? undefined) }));
    this.route('POST', '/apps', async (req, res) => {
      const b = await readJson(req);
      sendJson(res, 201, { app: await s.createApp({ name: text(b.name, 'name'), org: text(b.org, 'org'), zone: text(b.zone, 'zone'), type: text(b.type, 'type') }) });
    });
    this.route('GET', '/apps/:app', async (_req, res, p, q) => sendJson(res, 200, { app: await s.appView(p.app as string, q.get('org') ?? undefined) }));
    // The application's options: its dedicated build instance (taking effect at its next deploy or restart).
    this.route('PATCH', '/apps/:app', async (req, res, p, q) => {
      const b = await readJson(req);
      if (typeof b.dedicatedBuildInstance !== 'boolean') throw HostErrors.INPUT_USAGE.create({ message: 'dedicatedBuildInstance must be true or false.' });
      sendJson(res, 200, { app: await s.setDedicatedBuildInstance(p.app as string, b.dedicatedBuildInstance, q.get('org') ?? undefined) });
    });
    // The application's own variables, and those it exposes to the applications linked to it.
    for (const [path, which] of [
      ['env', 'own'],
      ['exposed', 'exposed'],
    ] as const) {
      this.route('GET', `/apps/:app/${path}`, async (_req, res, p, q) => {
        const app = await s.app(p.app as string);
        sendJson(res, 200, await s.variables(app.id, q.get('show') === '1', which));
      });
      this.route('PATCH', `/apps/:app/${path}`, async (req, res, p) => {
        const app = await s.app(p.app as string);
        const b = await readJson(req);
        const set = (b.set ?? {}) as Record<string, unknown>;
        const remove = (b.remove ?? []) as unknown[];
        if (typeof set !== 'object' || Array.isArray(set) || !Array.isArray(remove)) throw HostErrors.INPUT_USAGE.create({ message: 'set must be an object of strings and remove a list of names.' });
        await s.changeVariables(
          app.id,
          Object.fromEntries(Object.entries(set).map(([k, v]) => [k, text(v, `the value of ${k}`)])),
          remove.map((n) => text(n, 'a name to remove')),
          which,
        );
        sendJson(res, 200, await s.variables(app.id, false, which));
      });
    }
    this.route('GET', '/apps/:app/releases', async (_req, res, p) => sendJson(res, 200, { releases: await s.releases(p.app as string) }));
    this.route('GET', '/apps/:app/releases/:number', async (_req, res, p) => sendJson(res, 200, await s.release(p.app as string, Number(p.number))));
    this.route('POST', '/apps/:app/restart', async (_req, res, p) => {
      // Checked before the answer starts: an application never deployed is a plain coded error, not a stream that ends without one.
      const target = await s.restartTarget(p.app as string);
      const stream = lineStream(res);
      const result = await s.restart(target, 'cli', stream.line);
      stream.end(result.ok ? 0 : 1);
    });
    this.route('POST', '/apps/:app/rollback', async (req, res, p) => {
      const b = await readJson(req);
      const target = b.release === undefined || b.release === null ? undefined : Number(b.release);
      if (target !== undefined && !(Number.isInteger(target) && target > 0)) throw HostErrors.INPUT_USAGE.create({ message: 'release must be a release number.' });
      // Checked before the answer starts: a release that does not exist is a plain coded error.
      const { app, release } = await s.rollbackTarget(p.app as string, target);
      const stream = lineStream(res);
      const result = await s.rollbackTo(app, release, 'cli', stream.line);
      stream.end(result.ok ? 0 : 1);
    });
    this.route('GET', '/apps/:app/logs', async (req, res, p, q) => {
      const app = await s.app(p.app as string);
      const logs = s.logs;
      if (q.get('follow') !== '1') return sendJson(res, 200, { lines: logs.tail(app.id, Number(q.get('lines') ?? 200)) });
      const stream = lineStream(res);
      for (const line of logs.tail(app.id, Number(q.get('lines') ?? 200))) stream.line(line);
      const stop = logs.follow(app.id, stream.line);
      req.on('close', stop);
    });
    // The host's own state and log: the API token's alone (the console, which signs organizations in, shows neither).
    this.route('GET', '/status', async (_req, res) => sendJson(res, 200, await s.status()));
    this.route('GET', '/logs', async (req, res, _p, q) => {
      const lines = Number(q.get('lines') ?? 200);
      if (q.get('follow') !== '1') return sendJson(res, 200, { lines: s.hostLog.tail(lines) });
      const stream = lineStream(res);
      for (const line of s.hostLog.tail(lines)) stream.line(line);
      req.on('close', s.hostLog.follow(stream.line));
    });
    this.route('GET', '/addons', async (_req, res, _p, q) => sendJson(res, 200, { addons: await s.addons(q.get('org') ?? undefined) }));
    this.route('POST', '/addons', async (req, res) => {
      const b = await readJson(req);
      sendJson(res, 201, { addon: await s.createAddon({ kind: text(b.kind, 'kind'), name: text(b.name, 'name'), org: text(b.org, 'org'), zone: text(b.zone ?? 'par', 'zone') }) });
    });
    this.route('GET', '/addons/:addon/env', async (_req, res, p, q) => sendJson(res, 200, { variables: await s.addonVariables(p.addon as string, q.get('org') ?? undefined, q.get('show') === '1') }));
    this.route('DELETE', '/addons/:addon', async (_req, res, p, q) => {
      await s.removeAddon(p.addon as string, q.get('org') ?? undefined);
      sendJson(res, 200, {});
    });
    // Checked and changed before the answer starts: an unknown add-on or application, or another organization's, is a plain coded error.
    const linkRoute = (link: boolean, to: 'addon' | 'app') => async (req: IncomingMessage, res: ServerResponse, p: Record<string, string>) => {
      const other = link ? text((await readJson(req))[to], to) : (p.other as string);
      let app: AppRecord;
      let what: string;
      let changed: boolean;
      if (to === 'addon') {
        const target = await s.linkTarget(p.app as string, other);
        [app, what, changed] = [target.app, `add-on ${target.addon.name}`, await s.setLink(target, link)];
      } else {
        const target = await s.appLinkTarget(p.app as string, other);
        [app, what, changed] = [target.app, `application ${target.target.name}`, await s.setAppLink(target, link)];
      }
      const stream = lineStream(res);
      const result = await s.releaseLinks(app, what, link, changed, 'cli', stream.line);
      stream.end(result.ok ? 0 : 1);
    };
    this.route('POST', '/apps/:app/addons', linkRoute(true, 'addon'));
    this.route('DELETE', '/apps/:app/addons/:other', linkRoute(false, 'addon'));
    this.route('GET', '/apps/:app/links', async (_req, res, p) => sendJson(res, 200, { links: await s.appLinks(p.app as string) }));
    this.route('POST', '/apps/:app/links', linkRoute(true, 'app'));
    this.route('DELETE', '/apps/:app/links/:other', linkRoute(false, 'app'));
    // Custom domains: `org` scopes the caller (the console's member, the CLI's --org), as for applications.
    this.route('GET', '/domains', async (_req, res, _p, q) => sendJson(res, 200, { domains: await s.domains(q.get('app') ?? undefined, q.get('org') ?? undefined) }));
    this.route('GET', '/apps/:app/domains', async (_req, res, p, q) => sendJson(res, 200, { domains: await s.domains(p.app as string, q.get('org') ?? undefined) }));
    this.route('POST', '/apps/:app/domains', async (req, res, p, q) => {
      const b = await readJson(req);
      sendJson(res, 201, { domain: await s.addDomain(p.app as string, text(b.name, 'name'), q.get('org') ?? undefined) });
    });
    this.route('DELETE', '/domains/:name', async (_req, res, p, q) => sendJson(res, 200, { domain: await s.removeDomain(p.name as string, q.get('org') ?? undefined) }));
    this.route('GET', '/keys', async (_req, res, _p, q) => sendJson(res, 200, { keys: await s.keys(q.get('org') ?? undefined) }));
    this.route('POST', '/keys', async (req, res) => {
      const b = await readJson(req);
      sendJson(res, 201, { key: await s.addKey(text(b.org, 'org'), text(b.publicKey, 'publicKey'), optionalText(b.file, 'file') ?? 'the key') });
    });
    this.route('DELETE', '/keys/:key', async (_req, res, p) => {
      await s.removeKey(p.key as string);
      sendJson(res, 200, {});
    });
  }

  private route(method: string, path: string, handler: Handler): void {
    this.routes.add(method, path, handler);
  }

  private authorized(req: IncomingMessage): boolean {
    // Only the Bearer scheme: a bare token (or another scheme) is refused as the fix says.
    const given = Buffer.from(/^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
    const token = Buffer.from(this.token);
    return given.length === token.length && timingSafeEqual(given, token);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (!this.authorized(req)) throw HostErrors.API_UNAUTHORIZED.create({ message: 'the request has no valid token.' });
      const url = new URL(req.url ?? '/', 'http://host');
      const route = this.routes.find(req.method, url.pathname);
      if (route) return await route.handler(req, res, route.params, url.searchParams);
      await discardBody(req);
      sendJson(res, 404, { error: { code: null, message: `no ${req.method} ${url.pathname}` } });
    } catch (error) {
      if (res.headersSent) return void res.end();
      await discardBody(req);
      sendError(res, error);
    }
  }

  async listen(socket: string): Promise<void> {
    this.server = await listenOnSocket(socket, (req, res) => this.handle(req, res));
  }

  async close(): Promise<void> {
    await this.server?.close();
  }
}
