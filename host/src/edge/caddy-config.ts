import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import { APP_ID_SYNTAX } from '../git/app-id.js';
import type { AppNames, EdgeOptions, RouteOptions, Upstream } from './edge.js';

/** Where Caddy keeps its files under the edge's folder (its environment points HOME and XDG_* there). */
export interface CaddyFiles {
  readonly config: string;
  readonly adminSocket: string;
  readonly log: string;
  readonly pidFile: string;
  readonly dataDir: string;
  readonly configDir: string;
  /** The local CA's root certificate: Caddy keeps it under $XDG_DATA_HOME/caddy. */
  readonly rootCertificate: string;
}

export function caddyFiles(dir: string): CaddyFiles {
  const dataDir = join(dir, 'data');
  return {
    config: join(dir, 'caddy.json'),
    adminSocket: join(dir, 'admin.sock'),
    log: join(dir, 'caddy.log'),
    pidFile: join(dir, 'caddy.pid'),
    dataDir,
    configDir: join(dir, 'config'),
    rootCertificate: join(dataDir, 'caddy', 'pki', 'authorities', 'local', 'root.crt'),
  };
}

/** The one server: both listeners share its routes, so a route change is one admin call for HTTPS and HTTP alike. */
const SERVER = 'edge';
export const ROUTES_PATH = `/config/apps/http/servers/${SERVER}/routes`;
const ROUTE_ID_PREFIX = 'runplan-route-';
const UNKNOWN_HOST_ID = 'runplan-unknown-host';
const APPS_ROUTE_ID = 'runplan-apps';
const UNKNOWN_HOST_TEXT = 'No application at this address.\n';

/** The @id of the route of `host`: the admin API reaches it at /id/<id>. */
export function routeId(host: string): string {
  return `${ROUTE_ID_PREFIX}${host}`;
}

export interface CaddyRoute {
  readonly '@id'?: string;
  readonly match?: ReadonlyArray<{ readonly host?: readonly string[]; readonly [matcher: string]: unknown }>;
  readonly handle: ReadonlyArray<Record<string, unknown>>;
  readonly terminal?: boolean;
}

function dialOf(upstream: Upstream): string {
  return typeof upstream === 'number' ? `127.0.0.1:${upstream}` : `unix/${upstream.socket}`;
}

/** The upstream a route dials now. */
export function dialOfRoute(route: CaddyRoute): string | undefined {
  const proxy = route.handle.find((h) => h.handler === 'reverse_proxy');
  return (proxy?.upstreams as Array<{ dial?: string }> | undefined)?.[0]?.dial;
}

/** One year, as HSTS is usually given; never includeSubDomains: the applications' names are the domain's, and theirs to decide. */
const HSTS = 'max-age=31536000';

/** Whether the route is served over HTTPS only (the redirect and HSTS of RouteOptions.httpsOnly). */
export function isHttpsOnly(route: CaddyRoute): boolean {
  return route.handle.some((h) => h.handler === 'subroute');
}

export function appRoute(host: string, upstream: Upstream, options: RouteOptions & { readonly httpsPort: number } = { httpsPort: 443 }): CaddyRoute {
  const proxy = {
    handler: 'reverse_proxy',
    upstreams: [{ dial: dialOf(upstream) }],
    // A host's socket (an application's, re-pointed at each switch) gets a new connection per request, so
    // a request after a switch reaches the new release; a loopback port keeps Caddy's connection pool.
    ...(typeof upstream === 'number' ? {} : { transport: { protocol: 'http', keep_alive: { enabled: false } } }),
  };
  const httpsOnly = options.httpsOnly
    ? [
        // The plain listener's requests end here (a static response calls no handler after it): the redirect, to the
        // name of the route itself (never the Host header's words) and the edge's HTTPS port.
        {
          handler: 'subroute',
          routes: [
            {
              match: [{ protocol: 'http' }],
              handle: [
                {
                  handler: 'static_response',
                  status_code: 308,
                  headers: { Location: [`https://${host}${options.httpsPort === 443 ? '' : `:${options.httpsPort}`}{http.request.uri}`] },
                },
              ],
            },
          ],
        },
        { handler: 'headers', response: { set: { 'Strict-Transport-Security': [HSTS] } } },
      ]
    : [];
  return {
    '@id': routeId(host),
    match: [{ host: [host] }],
    // Caddy sets X-Forwarded-For/-Proto/-Host itself and, without trusted_proxies, drops the incoming ones.
    handle: [...httpsOnly, proxy],
    terminal: true,
  };
}

/** The host → port of an application route, or undefined for any other route. */
export function readAppRoute(route: CaddyRoute): { host: string; port: number } | undefined {
  const id = route['@id'];
  if (id === undefined || !id.startsWith(ROUTE_ID_PREFIX)) return undefined;
  const dial = dialOfRoute(route) ?? '';
  const port = dial.startsWith('unix/') ? Number.NaN : Number(/:(\d+)$/.exec(dial)?.[1]);
  return Number.isInteger(port) ? { host: id.slice(ROUTE_ID_PREFIX.length), port } : undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** An application's name, whole: `<app_id>.<domain>` in lower case, with a port or not (the Host header's). */
function appHostPattern(domain: string): string {
  return `^(${APP_ID_SYNTAX})\\.${escapeRegExp(domain)}(?::[0-9]{1,5})?$`;
}

/** The application id of `host` (a name the route of every application serves), or undefined. */
export function appIdOfHost(apps: AppNames, host: string): string | undefined {
  return new RegExp(appHostPattern(apps.domain)).exec(host)?.[1];
}

/**
 * The one route of every application's name: its id, taken by a strict regular expression from the Host
 * header (the app-id syntax, lower-case hex and dashes only, so no Host can name a path outside the
 * sockets' folder), picks the socket to dial. Caddy expands placeholders in `dial` per request. The file
 * matcher sends a name whose socket does not exist (no release serves it) on to the unknown host's 404;
 * it reads the same label by its index from the right ({http.request.host.labels.N}, the port left out),
 * since the matchers of one set run in no set order and the regexp's capture may not be there yet.
 */
function appsRoute(apps: AppNames): CaddyRoute {
  const label = `{http.request.host.labels.${apps.domain.split('.').length}}`;
  return {
    '@id': APPS_ROUTE_ID,
    match: [
      {
        header_regexp: { Host: { name: 'app', pattern: appHostPattern(apps.domain) } },
        file: { root: apps.sockets, try_files: [`/${label}.sock`] },
      },
    ],
    handle: [
      {
        handler: 'reverse_proxy',
        upstreams: [{ dial: `unix/${join(apps.sockets, '{http.regexp.app.1}.sock')}` }],
        // A new connection per request: a request after a switch (the socket re-pointed) reaches the new release.
        transport: { protocol: 'http', keep_alive: { enabled: false } },
      },
    ],
    terminal: true,
  };
}

function listen(address: string, port: number): string {
  return isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`;
}

/**
 * Caddy's whole configuration at its start: the routes the edge has (none at serve's start; every one it had
 * when Caddy is started again after it died), the route of every application, then the answer for unknown
 * host names, which stays last. `askUrl` answers whether Caddy may issue a certificate for a name.
 */
export function initialConfig(options: EdgeOptions, files: CaddyFiles, askUrl: string, routes: readonly CaddyRoute[] = []): Record<string, unknown> {
  return {
    // Never the default localhost:2019: any local user could reconfigure the edge there. Caddy checks the
    // Host header even on a unix socket, and an empty one is not valid HTTP/1.1: "localhost" is the one allowed.
    admin: { listen: `unix/${files.adminSocket}`, origins: ['localhost'], config: { persist: false } },
    apps: {
      http: {
        // Caddy serves plain HTTP on a listener whose port is http_port, TLS on the others.
        http_port: options.httpPort,
        https_port: options.httpsPort,
        servers: {
          [SERVER]: {
            listen: [listen(options.listenAddress, options.httpsPort), listen(options.listenAddress, options.httpPort)],
            // HTTP to HTTPS is the application's choice (its force_https), never the edge's: Caddy's own redirects would
            // take every name it serves. The console's name has a redirect of its own route (RouteOptions.httpsOnly).
            automatic_https: { disable_redirects: true },
            // TLS on the HTTPS listener even before the first route names a host.
            tls_connection_policies: [{}],
            // No HTTP/3: it would take the UDP port as well.
            protocols: ['h1', 'h2'],
            routes: [
              ...routes,
              ...(options.apps === undefined ? [] : [appsRoute(options.apps)]),
              {
                '@id': UNKNOWN_HOST_ID,
                handle: [{ handler: 'static_response', status_code: 404, headers: { 'Content-Type': ['text/plain; charset=utf-8'] }, body: UNKNOWN_HOST_TEXT }],
              },
            ],
          },
        },
      },
      // Every name gets its certificate from the edge's own CA at its first TLS handshake, once the edge says yes
      // (its routes' names and the applications it serves): a new name is no change of the configuration, which
      // Caddy 2.6 applies by emptying its certificate cache, refusing handshakes meanwhile (caddyserver/caddy#5589).
      tls: { automation: { policies: [{ issuers: [{ module: 'internal' }], on_demand: true }], on_demand: { ask: askUrl } } },
      // The CA stays in Caddy's data folder; the machine's trust store is never touched.
      pki: { certificate_authorities: { local: { install_trust: false } } },
    },
  };
}

/** A DNS name as the host builds them (app_….localhost): "_" is allowed, as Caddy's matcher and its CA accept it. */
export function isHostName(host: string): boolean {
  const label = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
  return host.length <= 253 && new RegExp(`^${label}(?:\\.${label})*$`).test(host);
}
