import type { IncomingMessage, ServerResponse } from 'node:http';
import { diffPlans, isRunplanError, type RunPlan } from 'runplan';
import { Routes } from '../api/routes.js';
import { listenOnSocket } from '../api/socket-server.js';
import { discardBody } from '../api/http-util.js';
import type { ApiClient } from '../api/api-client.js';
import { HostErrors } from '../errors.js';
import type { AddonView, AppView, DomainView, ReleaseView, VariableView } from '../service.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { type Html, html } from './html.js';
import {
  type AppTab,
  addonPage,
  addonsPage,
  appPage,
  dependenciesBody,
  environmentBody,
  errorBox,
  errorPage,
  homePage,
  informationBody,
  logsBody,
  type NewAddonValues,
  type NewAppValues,
  newAppPage,
  type PageContext,
  releaseBody,
  releasesBody,
  signInPage,
} from './pages.js';
import { csrfMatches, memberOfToken, type Session, Sessions } from './sessions.js';

const COOKIE = 'runplan_console';
/** A form is small: anything larger is refused before it is read whole. */
const MAX_FORM_BYTES = 128 * 1024;

const SECURITY_HEADERS = {
  // No inline script or style, no other origin, no framing: the pages' only code is /assets/console.js.
  'content-security-policy': "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** A request of a signed-in member. */
interface Signed {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly session: Session;
  readonly context: PageContext;
  /** The form's fields (POST only, its CSRF token checked). */
  readonly form: URLSearchParams;
  readonly params: Record<string, string>;
}

type Handler = (r: Signed) => Promise<void>;

/**
 * The web console: server-rendered pages on a unix socket of the data folder, which
 * only the edge reaches (https://console.<domain>). Every change goes through the
 * host's API with the same calls as the CLI; the console adds sign-in, sessions,
 * CSRF tokens, its organization's scope, and staged variable changes.
 */
export class ConsoleServer {
  private server: { close(): Promise<void> } | undefined;
  private readonly routes = new Routes<Handler>();
  private readonly sessions: Sessions;
  /** Followers of log streams, stopped when the console closes. */
  private readonly streams = new Set<AbortController>();

  constructor(
    private readonly api: ApiClient,
    private readonly hostToken: string,
    options: { readonly now?: () => number } = {},
  ) {
    this.sessions = new Sessions(options.now);
    this.get('/', async (r) => this.page(r, homePage(r.context, await this.apps(r.session))));
    this.get('/apps/new', async (r) => this.page(r, newAppPage(r.context, {})));
    this.post('/apps', async (r) => {
      const values: NewAppValues = { name: r.form.get('name') ?? '', org: this.orgOf(r.session, r.form.get('org') ?? ''), type: r.form.get('type') ?? '', zone: r.form.get('zone') ?? '' };
      try {
        const { app } = await this.api.json<{ app: AppView }>('POST', '/apps', values);
        this.after(r, `/apps/${app.id}`, { notice: 'Created.' });
      } catch (error) {
        this.page(r, newAppPage(r.context, values, describe(error)), 400);
      }
    });
    this.get('/apps/:app', async (r) => {
      const app = await this.app(r);
      this.appPage(r, app, 'information', informationBody(r.context, app, await this.domains(r, app)));
    });
    // A custom domain added or removed through the API, with the member's organization as the caller's (DOMAIN_TAKEN names only what it may see).
    for (const [action, method, path, notice] of [
      ['add', 'POST', (app: AppView) => `/apps/${app.id}/domains`, 'Added: the application answers at it now.'],
      ['remove', 'DELETE', (_app: AppView, name: string) => `/domains/${encodeURIComponent(name)}`, 'Removed: the application no longer answers at it.'],
    ] as const) {
      this.post(`/apps/:app/domains/${action}`, async (r) => {
        const app = await this.app(r);
        const name = (r.form.get('name') ?? '').trim();
        try {
          await this.api.json(method, `${path(app, name)}${this.orgQuery(r.session)}`, method === 'POST' ? { name } : undefined);
        } catch (error) {
          return this.after(r, `/apps/${app.id}`, { error: describe(error) });
        }
        this.after(r, `/apps/${app.id}`, { notice: `${name}: ${notice}` });
      });
    }
    this.get('/apps/:app/env', async (r) => {
      const app = await this.app(r);
      const reveal = r.url.searchParams.get('reveal') === '1';
      const { variables, removed } = await this.api.json<{ variables: VariableView[]; removed: string[] }>('GET', `/apps/${app.id}/env${reveal ? '?show=1' : ''}`);
      this.appPage(r, app, 'environment', environmentBody(r.context, app, variables, removed, r.session.pending.get(app.id), reveal));
    });
    this.post('/apps/:app/env/add', async (r) => {
      const app = await this.app(r);
      const name = (r.form.get('name') ?? '').trim();
      const pending = this.pending(r.session, app.id);
      pending.remove.delete(name);
      pending.set.set(name, r.form.get('value') ?? '');
      this.after(r, `/apps/${app.id}/env`, { notice: PENDING });
    });
    this.post('/apps/:app/env/remove', async (r) => {
      const app = await this.app(r);
      const name = r.form.get('name') ?? '';
      const pending = this.pending(r.session, app.id);
      // Removing a staged addition only forgets it; removing a saved variable is staged itself.
      if (!pending.set.delete(name)) pending.remove.add(name);
      this.after(r, `/apps/${app.id}/env`, { notice: PENDING });
    });
    this.post('/apps/:app/env/discard', async (r) => {
      const app = await this.app(r);
      r.session.pending.delete(app.id);
      this.after(r, `/apps/${app.id}/env`, { notice: 'Pending changes discarded.' });
    });
    this.post('/apps/:app/env/update', async (r) => {
      const app = await this.app(r);
      const pending = r.session.pending.get(app.id);
      if (pending && pending.set.size + pending.remove.size > 0) {
        try {
          // The host checks every name and value, and saves all of them or none.
          await this.api.json('PATCH', `/apps/${app.id}/env`, { set: Object.fromEntries(pending.set), remove: [...pending.remove] });
        } catch (error) {
          return this.after(r, `/apps/${app.id}/env`, { error: describe(error) });
        }
        r.session.pending.delete(app.id);
      }
      this.after(r, `/apps/${app.id}/env`, { notice: 'Saved: the application sees them at its next restart or deploy.' });
    });
    this.get('/apps/:app/dependencies', async (r) => {
      const app = await this.app(r);
      const [addons, apps, links] = await Promise.all([this.addons(r.session, app.org), this.apps(r.session, app.org), this.linkedApps(app)]);
      this.appPage(r, app, 'dependencies', dependenciesBody(r.context, app, addons, apps, links));
    });
    for (const [kind, field, path] of [
      ['addons', 'addon', 'addons'],
      ['links', 'app', 'links'],
    ] as const) {
      this.post(`/apps/:app/${kind}/link`, async (r) => this.operation(r, 'POST', (app) => `/apps/${app.id}/${path}`, { [field]: r.form.get(field) ?? '' }));
      this.post(`/apps/:app/${kind}/unlink`, async (r) => this.operation(r, 'DELETE', (app) => `/apps/${app.id}/${path}/${encodeURIComponent(r.form.get(field) ?? '')}`));
    }
    this.get('/apps/:app/releases', async (r) => {
      const app = await this.app(r);
      const { releases } = await this.api.json<{ releases: ReleaseView[] }>('GET', `/apps/${app.id}/releases`);
      this.appPage(r, app, 'releases', releasesBody(app, releases));
    });
    this.get('/apps/:app/releases/:number', async (r) => {
      const app = await this.app(r);
      const number = Number(r.params.number);
      type Detail = { release: ReleaseView; plan: unknown; log: string[] };
      const detail = await this.api.json<Detail>('GET', `/apps/${app.id}/releases/${encodeURIComponent(r.params.number ?? '')}`);
      const previous = number > 1 ? await this.api.json<Detail>('GET', `/apps/${app.id}/releases/${number - 1}`).catch(() => undefined) : undefined;
      const changes = previous?.plan && detail.plan ? diffPlans(previous.plan as RunPlan, detail.plan as RunPlan) : undefined;
      this.appPage(r, app, 'releases', releaseBody(app, detail.release, detail.log, changes));
    });
    this.get('/apps/:app/logs', async (r) => {
      const app = await this.app(r);
      const { lines } = await this.api.json<{ lines: string[] }>('GET', `/apps/${app.id}/logs?lines=200`);
      this.appPage(r, app, 'logs', logsBody(app, lines));
    });
    this.get('/apps/:app/logs/events', async (r) => this.logEvents(r, await this.app(r)));
    this.post('/apps/:app/build-instance', async (r) => {
      const app = await this.app(r);
      const on = r.form.get('dedicated') === 'on';
      try {
        await this.api.json('PATCH', `/apps/${app.id}`, { dedicatedBuildInstance: on });
      } catch (error) {
        return this.after(r, `/apps/${app.id}`, { error: describe(error) });
      }
      this.after(r, `/apps/${app.id}`, { notice: `${on ? 'Dedicated build instance on' : 'Dedicated build instance off'}: applies from the next deploy or restart.` });
    });
    this.post('/apps/:app/restart', async (r) => this.operation(r, 'POST', (app) => `/apps/${app.id}/restart`));
    this.post('/apps/:app/rollback', async (r) => this.operation(r, 'POST', (app) => `/apps/${app.id}/rollback`, {}));
    this.get('/addons', async (r) => {
      const [addons, apps] = await Promise.all([this.addons(r.session), this.apps(r.session)]);
      const flash = this.takeFlash(r.session);
      this.page(r, addonsPage(r.context, addons, apps, {}, flash.error, flash.notice));
    });
    this.post('/addons', async (r) => this.createAddon(r));
    this.get('/addons/:addon', async (r) => {
      const id = r.params.addon ?? '';
      const addon = (await this.addons(r.session)).find((a) => a.id === id);
      if (addon === undefined)
        throw HostErrors.ADDON_NOT_FOUND.create({ message: `no add-on ${JSON.stringify(id.slice(0, 80))}${r.session.member.kind === 'org' ? ` in organization ${r.session.member.org}` : ''}.` });
      const reveal = r.url.searchParams.get('reveal') === '1';
      const query = new URLSearchParams({ org: addon.org, ...(reveal ? { show: '1' } : {}) });
      const { variables } = await this.api.json<{ variables: { name: string; value: string; secret: boolean }[] }>('GET', `/addons/${addon.id}/env?${query}`);
      this.page(r, addonPage(r.context, addon, variables, reveal));
    });
    this.post('/addons/remove', async (r) => {
      const id = r.form.get('addon') ?? '';
      const org = r.session.member.kind === 'org' ? `?org=${encodeURIComponent(r.session.member.org)}` : '';
      try {
        await this.api.json('DELETE', `/addons/${encodeURIComponent(id)}${org}`);
      } catch (error) {
        return this.after(r, '/addons', { error: describe(error) });
      }
      this.after(r, '/addons', { notice: 'Removed.' });
    });
  }

  private get(path: string, handler: Handler): void {
    this.route('GET', path, handler);
  }

  private post(path: string, handler: Handler): void {
    this.route('POST', path, handler);
  }

  private route(method: string, path: string, handler: Handler): void {
    this.routes.add(method, path, handler);
  }

  private orgOf(session: Session, asked: string): string {
    return session.member.kind === 'org' ? session.member.org : asked;
  }

  private orgQuery(session: Session, org?: string): string {
    const scope = session.member.kind === 'org' ? session.member.org : org;
    return scope === undefined ? '' : `?org=${encodeURIComponent(scope)}`;
  }

  private async apps(session: Session, org?: string): Promise<AppView[]> {
    return (await this.api.json<{ apps: AppView[] }>('GET', `/apps${this.orgQuery(session, org)}`)).apps;
  }

  private async addons(session: Session, org?: string): Promise<AddonView[]> {
    return (await this.api.json<{ addons: AddonView[] }>('GET', `/addons${this.orgQuery(session, org)}`)).addons;
  }

  /** The application of the URL, looked up in the member's organization only: another organization's is "not found". */
  private async app(r: Signed): Promise<AppView> {
    return (await this.api.json<{ app: AppView }>('GET', `/apps/${encodeURIComponent(r.params.app ?? '')}${this.orgQuery(r.session)}`)).app;
  }

  private async domains(r: Signed, app: AppView): Promise<DomainView[]> {
    return (await this.api.json<{ domains: DomainView[] }>('GET', `/apps/${app.id}/domains${this.orgQuery(r.session)}`)).domains;
  }

  private async linkedApps(app: AppView): Promise<string[]> {
    return (await this.api.json<{ links: string[] }>('GET', `/apps/${app.id}/links`)).links;
  }

  private pending(session: Session, appId: string) {
    let changes = session.pending.get(appId);
    if (changes === undefined) {
      changes = { set: new Map<string, string>(), remove: new Set<string>() };
      session.pending.set(appId, changes);
    }
    return changes;
  }

  /**
   * An operation that makes a release (restart, rollback, link, unlink): started
   * through the API, then the page of the application's logs, where its lines
   * arrive as the host writes them. A refusal before it starts is shown at once.
   */
  private async operation(r: Signed, method: string, path: (app: AppView) => string, body?: unknown): Promise<void> {
    const app = await this.app(r);
    try {
      const { done } = await this.api.start(method, path(app), body, () => {});
      // The lines are the application's log too (the logs page streams them); the outcome is their last line.
      void done.catch(() => {});
    } catch (error) {
      return this.appPage(r, app, 'information', errorBox(describe(error)), undefined, 400);
    }
    this.redirect(r.res, `/apps/${app.id}/logs`);
  }

  private async createAddon(r: Signed): Promise<void> {
    const values: NewAddonValues = { kind: r.form.get('kind') ?? '', name: r.form.get('name') ?? '', org: this.orgOf(r.session, r.form.get('org') ?? ''), zone: r.form.get('zone') ?? 'par' };
    const links = r.form.getAll('link');
    const apps = await this.apps(r.session, values.org);
    try {
      // The Link toggles name applications of the add-on's organization: checked before the add-on is made.
      const chosen = links.map((id) => {
        const app = apps.find((a) => a.id === id);
        if (app === undefined) throw HostErrors.APP_NOT_FOUND.create({ message: `no application ${JSON.stringify(id.slice(0, 80))} in organization ${values.org}.` });
        return app;
      });
      const { addon } = await this.api.json<{ addon: AddonView }>('POST', '/addons', values);
      for (const app of chosen) {
        const { done } = await this.api.start('POST', `/apps/${app.id}/addons`, { addon: addon.name }, () => {});
        void done.catch(() => {});
      }
      this.after(r, '/addons', { notice: chosen.length > 0 ? 'Created; each application toggled is being linked (a new release of each that serves).' : 'Created.' });
    } catch (error) {
      const [addons, all] = await Promise.all([this.addons(r.session), this.apps(r.session)]);
      this.page(r, addonsPage(r.context, addons, all, values, describe(error)), 400);
    }
  }

  /** The application's log as server-sent events: its last lines, then each new one, until the page goes away. */
  private async logEvents(r: Signed, app: AppView): Promise<void> {
    const { res, req } = r;
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    res.flushHeaders();
    const stop = new AbortController();
    this.streams.add(stop);
    req.on('close', () => stop.abort());
    const send = (line: string) => {
      if (!res.destroyed) res.write(`data: ${line.replace(/[\r\n]/g, ' ')}\n\n`);
    };
    try {
      await this.api.lines('GET', `/apps/${app.id}/logs?follow=1&lines=200`, undefined, send, stop.signal);
    } catch {
      // The page went away, or serve is stopping.
    } finally {
      this.streams.delete(stop);
      res.end();
    }
  }

  private appPage(r: Signed, app: AppView, tab: AppTab, body: Html, notice?: string, status = 200): void {
    const flash = this.takeFlash(r.session);
    this.page(r, appPage(r.context, app, tab, flash.error ? html`${errorBox(flash.error)}${body}` : body, notice ?? flash.notice), status);
  }

  private page(r: { res: ServerResponse }, page: Html, status = 200): void {
    send(r.res, status, 'text/html; charset=utf-8', page.text);
  }

  /** After a change: the page to see, and what it says of the change. */
  private after(r: Signed, to: string, flash: NonNullable<Session['flash']>): void {
    r.session.flash = flash;
    this.redirect(r.res, to);
  }

  private takeFlash(session: Session): NonNullable<Session['flash']> {
    const flash = session.flash ?? {};
    session.flash = undefined;
    return flash;
  }

  private redirect(res: ServerResponse, to: string, headers: Record<string, string | string[]> = {}): void {
    res.writeHead(303, { ...SECURITY_HEADERS, location: to, ...headers });
    res.end();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://console');
    // Once the session is known, an error page keeps the navigation, the organization and Sign out.
    let context: PageContext | undefined;
    try {
      const asset = ASSETS[url.pathname];
      if (req.method === 'GET' && asset) return send(res, 200, asset.type, asset.body, { 'cache-control': 'public, max-age=300' });
      // A form of another site: refused before anything else, the sign-in form too (signing a member in as someone else).
      if (req.method !== 'GET' && !sameOrigin(req))
        throw HostErrors.CONSOLE_FORM_TOKEN.create({ message: `${req.method} ${url.pathname} came from another site (${String(req.headers.origin).slice(0, 100)}).` });
      if (url.pathname === '/sign-in') return await this.signIn(req, res);
      const id = cookieOf(req, COOKIE);
      const session = this.sessions.find(id);
      if (session === undefined) {
        if (req.method === 'GET' && !url.pathname.endsWith('/events')) return this.redirect(res, '/sign-in');
        throw HostErrors.CONSOLE_SIGNED_OUT.create({ message: `${req.method} ${url.pathname} needs a session of the console, and this request has none.` });
      }
      context = { member: session.member, csrf: session.csrf };
      const form = req.method === 'POST' ? await readForm(req) : new URLSearchParams();
      // Every change needs the session's own token: a form of another site (or a forged request) has none.
      if (req.method !== 'GET' && !csrfMatches(session, form.get('_csrf') ?? undefined)) {
        throw HostErrors.CONSOLE_FORM_TOKEN.create({ message: `${req.method} ${url.pathname} came without this session's form token: it is out of date, or did not come from the console.` });
      }
      if (url.pathname === '/sign-out' && req.method === 'POST') {
        this.sessions.close(id);
        return this.redirect(res, '/sign-in', { 'set-cookie': `${COOKIE}=; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=0` });
      }
      const route = this.routes.find(req.method, url.pathname);
      if (route) return await route.handler({ req, res, url, session, context, form, params: route.params });
      throw HostErrors.CONSOLE_PAGE_NOT_FOUND.create({ message: `there is no page ${req.method} ${url.pathname.slice(0, 200)}.` });
    } catch (error) {
      if (res.headersSent) return void res.end();
      await discardBody(req);
      send(res, statusOf(error), 'text/html; charset=utf-8', errorPage(describe(error), context).text);
    }
  }

  private async signIn(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') return send(res, 200, 'text/html; charset=utf-8', signInPage().text);
    const member = memberOfToken(this.hostToken, ((await readForm(req)).get('token') ?? '').trim());
    if (member === undefined) {
      const error = HostErrors.CONSOLE_SIGN_IN.create({ message: "the token given is neither the host's API token nor one of an organization." });
      return send(res, statusOf(error), 'text/html; charset=utf-8', signInPage(describe(error)).text);
    }
    const { id } = this.sessions.open(member);
    this.redirect(res, '/', { 'set-cookie': `${COOKIE}=${id}; Path=/; HttpOnly; Secure; SameSite=Strict` });
  }

  async listen(socket: string): Promise<void> {
    this.server = await listenOnSocket(socket, (req, res) => this.handle(req, res));
  }

  async close(): Promise<void> {
    for (const stream of this.streams) stream.abort();
    await this.server?.close();
  }
}

const PENDING = 'Pending: nothing changes until Update Changes.';

const ASSETS: Record<string, { type: string; body: string }> = {
  '/assets/console.css': { type: 'text/css; charset=utf-8', body: CONSOLE_CSS },
  '/assets/console.js': { type: 'text/javascript; charset=utf-8', body: CONSOLE_JS },
};

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * What a member of the console does about an error, where the error's own fix is for the command
 * line (`Give --app <name|id>…`): what is not found was removed, or is another organization's.
 */
const CONSOLE_FIXES: Record<string, string> = {
  [HostErrors.APP_NOT_FOUND.code]: 'Open the application from the Applications page: the address is out of date (the application was removed) or is not one of your organization.',
  [HostErrors.ADDON_NOT_FOUND.code]: 'Open the add-on from the Add-ons page: the address is out of date (the add-on was removed) or is not one of your organization.',
  [HostErrors.RELEASE_NOT_FOUND.code]: "Open the release from the application's Releases page.",
};

/** A coded error as a person reads it: the code and what happened (its message, once), then the fix for the console. */
function describe(error: unknown): string {
  if (isRunplanError(error)) {
    const fix = CONSOLE_FIXES[error.code] ?? error.fix;
    return `${error.message}${fix ? ` Fix: ${fix}` : ''}`;
  }
  return (error as Error)?.message ?? String(error);
}

const STATUS_OF_CODE: Record<string, number> = {
  [HostErrors.CONSOLE_SIGN_IN.code]: 401,
  [HostErrors.CONSOLE_SIGNED_OUT.code]: 401,
  [HostErrors.CONSOLE_FORM_TOKEN.code]: 403,
};

/** The HTTP status of a page that shows an error: as the API's (404 for what does not exist, 400 for bad input), and the console's own. */
function statusOf(error: unknown): number {
  if (!isRunplanError(error)) return 500;
  return STATUS_OF_CODE[error.code] ?? (/_NOT_FOUND$/.test(error.code) ? 404 : error.kind === 'input' ? 400 : 500);
}

/** Browsers send Origin with every POST: it must be the console's own (the edge passes the Host it was asked for). */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw HostErrors.INPUT_USAGE.create({ message: `the form is larger than ${MAX_FORM_BYTES} bytes.` });
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
