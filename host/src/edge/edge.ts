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
   * Every application's name, `<app_id>.<domain>`, served by one route made at the edge's start: it dials
   * `<sockets>/<app_id>.sock` when that socket exists (an application that serves) and answers the unknown
   * host's 404 otherwise. Creating or deploying an application then changes nothing in Caddy's configuration.
   */
  readonly apps?: AppNames;
}

export interface AppNames {
  /** The applications' parent domain (`localhost`, `apps.example.com`). */
  readonly domain: string;
  /** The folder of the applications' sockets (AppUpstreams'). */
  readonly sockets: string;
}

/**
 * The HTTPS edge in front of every application: TLS from its own CA, one route for
 * every application's name to its socket (EdgeOptions.apps), routes of other names
 * (the console's) to a port or socket, and
 * X-Forwarded-Proto/-For/-Host set for the application. Each change is one call
 * of the edge's admin API, applied whole or not at all.
 */
export interface Edge extends Part {
  /** Starts the edge with the routes it has (none at first; all of them again after it died) and waits until it serves them. */
  start(): Promise<PartRun>;
  /** Sends `host` (e.g. app_….localhost) to 127.0.0.1:`port` (or to a unix socket of the host's own): added, or switched in one call. */
  setRoute(host: string, upstream: Upstream, options?: RouteOptions): Promise<void>;
  removeRoute(host: string): Promise<void>;
  /**
   * Until the edge serves the application name `host` (EdgeOptions.apps) over HTTPS: its certificate, issued at the
   * first TLS handshake with its name, is issued now. Changes nothing in Caddy's configuration.
   */
  serveApp(host: string): Promise<void>;
  /** The routes now: host name → port. */
  routes(): Promise<Record<string, number>>;
  /** The PEM file of the edge's root certificate (give it to curl --cacert). */
  readonly rootCertificate: string;
  /** Stops what start() started, by PID; nothing is left running. */
  stop(): Promise<void>;
}
