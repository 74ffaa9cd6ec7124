import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import { UUID_SYNTAX } from '../git/app-id.js';
import type { AppNames, EdgeOptions, RouteOptions, Upstream } from './edge.js';
import { HOST_NAME_SYNTAX } from './host-names.js';

/** Where Caddy keeps its files under the edge's folder (its environment points HOME and XDG_* there). */
export interface CaddyFiles {
  readonly config: string;
  readonly adminSocket: string;
  readonly log: string;
  readonly pidFile: string;
  /** Its identity (PID, start time, boot), written at its start: the next serve adopts that very Caddy. */
  readonly identityFile: string;
  /** One empty file per name the edge may get a certificate for: Caddy's own on-demand `ask` server reads them. */
  readonly namesDir: string;
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
    identityFile: join(dir, 'caddy.identity'),
    namesDir: join(dir, 'names'),
    dataDir,
    configDir: join(dir, 'config'),
    rootCertificate: join(dataDir, 'caddy', 'pki', 'authorities', 'local', 'root.crt'),
  };
}

/** The one server: both listeners share its routes, so a route change is one admin call for HTTPS and HTTP alike. */
const SERVER = 'edge';
/** Caddy's own answer to its on-demand TLS `ask`, on the loopback interface: a name is allowed when its file exists. */
const ASK_SERVER = 'ask';
export const ROUTES_PATH = `/config/apps/http/servers/${SERVER}/routes`;
/**
 * The format of the configuration this runplan-host writes, stamped as the @id of its server: a Caddy
 * left running by a runplan-host that wrote another format is given this one (admin API's /load) when
 * adopted. 1 (no stamp): the applications' unix sockets piped by serve, the `ask` answered by serve.
 * 2: Caddy dials the release named by run/apps/<app_id>/<address> itself, and answers the `ask` itself.
 * 3: applications are named `app-<uuid>.<domain>` (the old `app_<uuid>` names redirected), and custom domains
 * are served through run/domains/<name>.
 */
export const EDGE_FORMAT = 3;
const FORMAT_ID_PREFIX = 'runplan-edge-format-';
const ROUTE_ID_PREFIX = 'runplan-route-';
const UNKNOWN_HOST_ID = 'runplan-unknown-host';
const APPS_ROUTE_ID = 'runplan-apps';
const OLD_APP_NAMES_ROUTE_ID = 'runplan-old-app-names';
const DOMAINS_ROUTE_ID = 'runplan-domains';
const UNKNOWN_HOST_TEXT = 'No application at this address.\n';
/** settings.drainMs's default, for an edge given none. */
const DEFAULT_DRAIN_MS = 5_000;

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
    // A socket of serve's own (the console's) gets a new connection per request: Caddy outlives serve, and a
    // pooled connection would be one to a serve that is gone; and an answer given before the body was read
    // closes the connection (host/test/early-answers.test.ts sends requests so). A port keeps Caddy's pool.
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

/** A name of the applications' domain, whole: `<prefix><uuid>.<domain>` in lower case, with a port or not (the Host header's). */
function appHostPattern(prefix: 'app-' | 'app_', domain: string): string {
  return `^${prefix}(${UUID_SYNTAX})\\.${escapeRegExp(domain)}(?::[0-9]{1,5})?$`;
}

/** The application id of `host` (an `app-<uuid>` name the route of every application serves), or undefined. */
export function appIdOfHost(apps: AppNames, host: string): string | undefined {
  const uuid = new RegExp(appHostPattern('app-', apps.domain)).exec(host)?.[1];
  return uuid === undefined ? undefined : `app_${uuid}`;
}

/**
 * How long Caddy keeps an idle connection to a release: its connection pool is keyed by the address it
 * dials, so after a switch new requests open connections to the new release and the old pool only idles,
 * closed after this (at most 1.5 s, a third of the drain), well before the drained release is stopped.
 */
function upstreamIdleMs(drainMs: number): number {
  return Math.min(1_500, Math.floor(drainMs / 3));
}

function upstreamTransport(drainMs: number): Record<string, unknown> {
  const idleMs = upstreamIdleMs(drainMs);
  // Go keeps 2 idle connections per host unless told: under load, throughput halves (measured).
  return { protocol: 'http', keep_alive: idleMs > 0 ? { idle_timeout: `${idleMs}ms`, max_idle_conns_per_host: 64 } : { enabled: false } };
}

function unknownHostAnswer(): Record<string, unknown> {
  return { handler: 'static_response', status_code: 404, headers: { 'Content-Type': ['text/plain; charset=utf-8'] }, body: UNKNOWN_HOST_TEXT };
}

/**
 * The one route of every application's name, `app-<uuid>.<domain>`. Its UUID, taken by a strict regular
 * expression from the Host header (lower-case hex and dashes only, so no Host names a path outside the
 * upstreams' folder), names the folder run/apps/app_<uuid>/, whose one file's name is the address of the
 * release that serves (`127.0.0.1:41233`). Caddy reads it per request and dials it ({http.matchers.file.relative}
 * is `/127.0.0.1:41233`: Caddy takes what comes before the first `/` as the network, none). A folder with no
 * such file (no release serves) gets the unknown host's 404. The file matcher is in a subroute so that it
 * runs once the Host's expression has matched: the matchers of one set run in no set order.
 */
function appsRoute(apps: AppNames, drainMs: number): CaddyRoute {
  return {
    '@id': APPS_ROUTE_ID,
    match: [{ header_regexp: { Host: { name: 'app', pattern: appHostPattern('app-', apps.domain) } } }],
    handle: [upstreamOfFolder(join(apps.upstreams, 'app_{http.regexp.app.1}'), drainMs)],
    terminal: true,
  };
}

/** Dials the address that `folder`'s one `host:port` file names, or answers the unknown host's 404 when it has none. */
function upstreamOfFolder(folder: string, drainMs: number): Record<string, unknown> {
  return {
    handler: 'subroute',
    routes: [
      {
        match: [{ file: { root: folder, try_files: ['/*:*'], try_policy: 'first_exist' } }],
        handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: '{http.matchers.file.relative}' }], transport: upstreamTransport(drainMs) }],
      },
      { handle: [unknownHostAnswer()] },
    ],
  };
}

/**
 * The names applications had before (`app_<uuid>.<domain>`: an `_` is no letter of a DNS host name) answer a
 * permanent redirect (308: a POST stays a POST) to the same path at the `app-<uuid>` name, on the same scheme
 * and the edge's port of it, so bookmarks and clients of the old names keep working.
 */
function oldAppNamesRoute(apps: AppNames, ports: { readonly httpsPort: number; readonly httpPort: number }): CaddyRoute {
  const to = (scheme: 'http' | 'https', port: number, standard: number) => `${scheme}://app-{http.regexp.old.1}.${apps.domain}${port === standard ? '' : `:${port}`}{http.request.uri}`;
  const redirect = (location: string) => ({ handler: 'static_response', status_code: 308, headers: { Location: [location] } });
  return {
    '@id': OLD_APP_NAMES_ROUTE_ID,
    match: [{ header_regexp: { Host: { name: 'old', pattern: appHostPattern('app_', apps.domain) } } }],
    handle: [
      {
        handler: 'subroute',
        routes: [{ match: [{ protocol: 'http' }], handle: [redirect(to('http', ports.httpPort, 80))] }, { handle: [redirect(to('https', ports.httpsPort, 443))] }],
      },
    ],
    terminal: true,
  };
}

/**
 * Every custom domain: the Host, taken only when it is a lower-case RFC 1123 name (no `..`, no `/`), names
 * run/domains/<name>, a link to its application's upstream folder (AppDomains), so a domain follows the
 * application's releases as its default name does, and adding or removing one changes no configuration.
 * A name with no link there is the unknown host's 404.
 */
function domainsRoute(domains: string, drainMs: number): CaddyRoute {
  return {
    '@id': DOMAINS_ROUTE_ID,
    match: [{ header_regexp: { Host: { name: 'domain', pattern: `^(${HOST_NAME_SYNTAX})(?::[0-9]{1,5})?$` } } }],
    handle: [upstreamOfFolder(join(domains, '{http.regexp.domain.1}'), drainMs)],
    terminal: true,
  };
}

/** The routes of the applications' names, in order: the default names, the old names' redirect, the custom domains. */
function applicationRoutes(options: EdgeOptions): CaddyRoute[] {
  const { apps } = options;
  if (apps === undefined) return [];
  const drainMs = options.drainMs ?? DEFAULT_DRAIN_MS;
  return [appsRoute(apps, drainMs), ...(apps.redirectOldNames === false ? [] : [oldAppNamesRoute(apps, options)]), ...(apps.domains === undefined ? [] : [domainsRoute(apps.domains, drainMs)])];
}

/**
 * Caddy's own answer to its on-demand TLS question (GET ?domain=<name>, 200 allows a certificate): the
 * file edge/names/<name> exists. Caddy cleans the path (no `../` leaves the folder). It answers while
 * serve is down or restarting, so a certificate can still be issued then.
 */
function askServer(files: CaddyFiles, askPort: number): Record<string, unknown> {
  return {
    listen: [`127.0.0.1:${askPort}`],
    automatic_https: { disable: true },
    protocols: ['h1'],
    routes: [
      { match: [{ file: { root: files.namesDir, try_files: ['/{http.request.uri.query.domain}'] } }], handle: [{ handler: 'static_response', status_code: 200 }], terminal: true },
      { handle: [{ handler: 'static_response', status_code: 404 }] },
    ],
  };
}

/**
 * Who signs the certificates: the edge's own CA, or the ACME CA of the settings, with its account's email. Its
 * HTTP-01 and TLS-ALPN-01 challenges are answered on the edge's own ports (the CA validates on the ports it
 * was told: 80 and 443 for a public CA, so the edge must listen there): Caddy answers a challenge request on the
 * plain listener before any route (caddyhttp.Server.ServeHTTP: the console's redirect never sees it), and adds the
 * acme-tls/1 protocol to the HTTPS listener's TLS. Caddy would fill these ports in itself from http_port and
 * https_port; written here, they are what the configuration says.
 */
function issuer(options: EdgeOptions): Record<string, unknown> {
  const { acme } = options;
  if (acme === undefined) return { module: 'internal' };
  return {
    module: 'acme',
    ca: acme.directory,
    email: acme.email,
    ...(acme.caRoot === undefined ? {} : { trusted_roots_pem_files: [acme.caRoot] }),
    challenges: { http: { alternate_port: options.httpPort }, 'tls-alpn': { alternate_port: options.httpsPort } },
  };
}

function listen(address: string, port: number): string {
  return isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`;
}

/**
 * Caddy's whole configuration at its start: the routes the edge has (none at serve's start; every one it had
 * when Caddy is started again after it died), the route of every application, then the answer for unknown
 * host names, which stays last; and the `ask` server on 127.0.0.1:`askPort`.
 */
export function initialConfig(options: EdgeOptions, files: CaddyFiles, askPort: number, routes: readonly CaddyRoute[] = []): Record<string, unknown> {
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
            '@id': `${FORMAT_ID_PREFIX}${EDGE_FORMAT}`,
            listen: [listen(options.listenAddress, options.httpsPort), listen(options.listenAddress, options.httpPort)],
            // HTTP to HTTPS is the application's choice (its force_https), never the edge's: Caddy's own redirects would
            // take every name it serves. The console's name has a redirect of its own route (RouteOptions.httpsOnly).
            automatic_https: { disable_redirects: true },
            // TLS on the HTTPS listener even before the first route names a host.
            tls_connection_policies: [{}],
            // No HTTP/3: it would take the UDP port as well.
            protocols: ['h1', 'h2'],
            routes: [...routes, ...applicationRoutes(options), { '@id': UNKNOWN_HOST_ID, handle: [unknownHostAnswer()] }],
          },
          [ASK_SERVER]: askServer(files, askPort),
        },
      },
      // Every name gets its certificate at its first TLS handshake, once the edge says yes (its routes' names, the
      // applications it serves, their custom domains: a file in edge/names). Caddy's docs advise on-demand TLS where
      // names come and go while it runs, as here: a new name is no change of the configuration, which Caddy 2.6
      // applies by emptying its certificate cache, refusing handshakes meanwhile (caddyserver/caddy#5589). The
      // console's name, known at the start, gets no eager policy of its own: the edge makes its first handshake itself
      // as soon as its route is set (CaddyEdge.waitForCertificate), so it is issued at serve's start all the same,
      // and renewed at a handshake once two thirds of its life have passed (certmagic 0.17 renews on-demand
      // certificates during handshakes, not in its background maintenance).
      tls: { automation: { policies: [{ issuers: [issuer(options)], on_demand: true }], on_demand: { ask: `http://127.0.0.1:${askPort}/` } } },
      // The CA stays in Caddy's data folder; the machine's trust store is never touched.
      pki: { certificate_authorities: { local: { install_trust: false } } },
    },
  };
}

/** A name the edge may route (the console's, an application's): "_" is allowed, as Caddy's matcher and its CA accept it. */
export function isHostName(host: string): boolean {
  const label = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
  return host.length <= 253 && new RegExp(`^${label}(?:\\.${label})*$`).test(host);
}

/** The format a configuration was written in (EDGE_FORMAT): 1 for one with no stamp, written before the stamp. */
export function formatOf(config: unknown): number {
  const id = (config as { apps?: { http?: { servers?: Record<string, { '@id'?: unknown }> } } } | null)?.apps?.http?.servers?.[SERVER]?.['@id'];
  const stamped = typeof id === 'string' && id.startsWith(FORMAT_ID_PREFIX) ? Number(id.slice(FORMAT_ID_PREFIX.length)) : Number.NaN;
  return Number.isInteger(stamped) ? stamped : 1;
}

/** The port of the `ask` server a configuration names, if it names one (kept from the first caddy.json on). */
export function askPortOf(config: unknown): number | undefined {
  const listen = (config as { apps?: { http?: { servers?: Record<string, { listen?: unknown }> } } } | null)?.apps?.http?.servers?.[ASK_SERVER]?.listen;
  const port = Array.isArray(listen) && typeof listen[0] === 'string' ? Number(/^127\.0\.0\.1:(\d+)$/.exec(listen[0])?.[1]) : Number.NaN;
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
}

/** The routes of a configuration that the edge set (setRoute): what an adopted Caddy serves, taken back into the edge's record. */
export function setRoutesOf(config: unknown): CaddyRoute[] {
  const routes = (config as { apps?: { http?: { servers?: Record<string, { routes?: unknown }> } } } | null)?.apps?.http?.servers?.[SERVER]?.routes;
  return Array.isArray(routes) ? (routes as CaddyRoute[]).filter((r) => typeof r['@id'] === 'string' && r['@id'].startsWith(ROUTE_ID_PREFIX)) : [];
}

/** The host name a route the edge set serves. */
export function hostOfRoute(route: CaddyRoute): string {
  return route.match?.[0]?.host?.[0] ?? '';
}
