import type { Part, PartRun } from '../supervision/supervisor.js';

/** Where a route sends its requests: an application's loopback port, or a unix socket of the host's own (the console's). */
export type Upstream = number | { readonly socket: string };

/** How a host is served beside its upstream. */
export interface RouteOptions {
  /**
   * HTTPS only (the console's name): a request on the plain HTTP listener is answered a permanent redirect
   * (308, which keeps a POST a POST) to the same path over HTTPS, and never reaches the upstream; every
   * HTTPS answer carries Strict-Transport-Security, so a browser that saw it goes straight to HTTPS.
   */
  readonly httpsOnly?: boolean;
}

/** Where the HTTPS edge listens, and where it keeps its state. */
export interface EdgeOptions {
  /** The edge's own folder (Caddy's config, data, PKI and admin socket live under it). */
  readonly dir: string;
  /** The address both listeners bind: 127.0.0.1 in tests, 0.0.0.0 on a host. */
  readonly listenAddress: string;
  readonly httpsPort: number;
  readonly httpPort: number;
  /**
   * Every application's name, `app-<uuid>.<domain>`, served by one route made at the edge's start: it dials the
   * address `<upstreams>/app_<uuid>/` names (its one file's name, `127.0.0.1:41233`) when there is one (a
   * release serves) and answers the unknown host's 404 otherwise. Creating an application or switching its
   * release then changes nothing in Caddy's configuration.
   */
  readonly apps?: AppNames;
  /**
   * How long a replaced release keeps answering before it is stopped (settings.drainMs, 5 s by default):
   * the edge closes its idle connections to a release well before that (caddy-config.ts, upstreamIdleMs).
   */
  readonly drainMs?: number;
  /**
   * Certificates from this ACME CA (settings.acme): its directory, the account's email, and the root of the directory's
   * HTTPS for a private one. Without it, from the edge's own CA, which no browser trusts.
   */
  readonly acme?: { readonly email: string; readonly directory: string; readonly caRoot?: string };
}

export interface AppNames {
  /** The applications' parent domain (`localhost`, `apps.example.com`). */
  readonly domain: string;
  /** The folder of the applications' upstream folders, `<app_id>/<address>` (AppUpstreams'). */
  readonly upstreams: string;
  /** The folder of the custom domains: `<name>`, a link to its application's upstream folder (AppDomains'). None: no custom domain is served. */
  readonly domains?: string;
  /** The old names `app_<uuid>.<domain>` answer a 308 to `app-<uuid>.<domain>` (settings.redirectOldAppNames); false: the unknown host's 404. */
  readonly redirectOldNames?: boolean;
}

/** A custom domain and the application it serves. */
export interface ServedDomain {
  readonly name: string;
  readonly appId: string;
}

/**
 * The HTTPS edge in front of every application: TLS from its own CA, one route for
 * every application's name to its serving release (EdgeOptions.apps), routes of other names
 * (the console's) to a port or socket, and
 * X-Forwarded-Proto/-For/-Host set for the application. Each change is one call
 * of the edge's admin API, applied whole or not at all.
 */
export interface Edge extends Part {
  /**
   * Starts the edge with the routes it has (none at first; all of them again after it died) and waits until it serves
   * them; or adopts the Caddy an earlier serve of this data folder left running, with the routes it serves.
   */
  start(): Promise<PartRun>;
  /** Sends `host` (e.g. console.localhost) to 127.0.0.1:`port` (or to a unix socket of the host's own): added, or switched in one call. */
  setRoute(host: string, upstream: Upstream, options?: RouteOptions): Promise<void>;
  removeRoute(host: string): Promise<void>;
  /**
   * Until the edge serves the application name `host` (EdgeOptions.apps) over HTTPS: the name is allowed a
   * certificate (edge/names/<host>), and that certificate, issued at the first TLS handshake with the name, is
   * issued now (`wait` false: at the name's first TLS handshake; from an ACME CA: asked for now, and told to the host's
   * log when it does not come in time). Changes nothing in Caddy's configuration.
   */
  serveApp(host: string, options?: { readonly wait?: boolean }): Promise<void>;
  /**
   * Serves the custom domain `name` as the application `appId`'s, at once and whatever release serves it: the name is
   * allowed a certificate (edge/names/<name>, issued at its first TLS handshake) and linked to the application's
   * upstream folder. Changes nothing in Caddy's configuration. EDGE_FAILED when the edge serves no custom domains.
   */
  serveDomain(domain: ServedDomain): Promise<void>;
  /** Stops serving the custom domain `name` at once (the unknown host's 404 from the next request on). */
  stopServingDomain(name: string): Promise<void>;
  /** Serves exactly these custom domains (serve's start: the store's, whatever the folder held). */
  serveDomains(domains: readonly ServedDomain[]): Promise<void>;
  /** The routes now: host name → port. */
  routes(): Promise<Record<string, number>>;
  /** The PEM file of the edge's root certificate (give it to curl --cacert). */
  readonly rootCertificate: string;
  /** Stops what start() started or adopted, by its identity; nothing is left running. */
  stop(): Promise<void>;
  /** Lets go of Caddy without stopping it: no longer watched, and serve may exit while it serves; the next serve adopts it. */
  detach(): void;
}
