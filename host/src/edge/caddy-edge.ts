import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:tls';
import { HostErrors } from '../errors.js';
import { accepts, connectAddress } from '../supervision/probes.js';
import { exitWords, type PartCheck, type PartRun } from '../supervision/supervisor.js';
import { type AdminAnswer, type AdminRequest, adminCall, adminError } from './caddy-admin.js';
import { type CaddyFiles, type CaddyRoute, ROUTES_PATH, appIdOfHost, appRoute, caddyFiles, dialOfRoute, initialConfig, isHostName, isHttpsOnly, readAppRoute, routeId } from './caddy-config.js';
import { type CaddyEnd, type RunningCaddy, findCaddy, logTail, portInUse, runCaddy } from './caddy-process.js';
import type { Edge, EdgeOptions, RouteOptions, Upstream } from './edge.js';

export interface CaddyEdgeOptions {
  /** The caddy program (default: the first on PATH, else /usr/bin/caddy). */
  readonly caddy?: string;
  /** Waits between two polls of Caddy (start, certificates, stop): injected by tests that need no real waiting. */
  readonly delay?: (ms: number) => Promise<void>;
  readonly now?: () => number;
  /** How long start() waits for the admin API and the CA's root certificate. */
  readonly startTimeoutMs?: number;
  /** How long setRoute() waits for Caddy to serve the host's certificate. */
  readonly certificateTimeoutMs?: number;
  /** How long stop() leaves Caddy after SIGTERM before SIGKILL. */
  readonly stopGraceMs?: number;
}

const POLL_MS = 50;
// A unix socket's path fits in sun_path (108 bytes, NUL included) or cannot be bound at all.
const MAX_SOCKET_PATH = 107;
// Another writer may change the routes between the read and the change (If-Match then fails): read again.
const CHANGE_ATTEMPTS = 3;

/** An unref'd timer: a poll never keeps the host's process alive by itself. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * The HTTPS edge run by Caddy: one server with a TLS listener and a plain HTTP one sharing the
 * routes, certificates from Caddy's own CA, and each route change one call of its admin API on a
 * unix socket, made against the ETag of the routes it read (Caddy applies it whole or keeps the old
 * config). Caddy keeps its configuration in memory only (no autosave): the edge keeps each route it
 * set, and a Caddy started again after it died starts with all of them.
 */
export class CaddyEdge implements Edge {
  readonly id = 'edge';
  readonly name = 'the edge (Caddy)';
  readonly rootCertificate: string;
  private readonly files: CaddyFiles;
  private readonly program: string;
  private readonly delay: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private running: RunningCaddy | undefined;
  private runEnded: Promise<string> | undefined;
  private rootPem: string | undefined;
  /** Each route as this edge last set it, by host name: what a Caddy started again is given. */
  private readonly set = new Map<string, CaddyRoute>();
  /** The application names serveApp() was given: Caddy may issue their certificates. */
  private readonly appNames = new Set<string>();
  /** Answers Caddy's question before each certificate it would issue (its on-demand TLS `ask`). */
  private ask: { server: Server; url: string } | undefined;
  // Route changes of this edge, one after the other (each reads the routes it changes).
  private changes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly options: EdgeOptions,
    private readonly caddyOptions: CaddyEdgeOptions = {},
  ) {
    this.files = caddyFiles(options.dir);
    this.rootCertificate = this.files.rootCertificate;
    this.program = findCaddy(caddyOptions.caddy);
    this.delay = caddyOptions.delay ?? sleep;
    this.now = caddyOptions.now ?? Date.now;
  }

  /** The PID of the running Caddy, if any. */
  get pid(): number | undefined {
    return this.running?.pid;
  }

  /** Starts Caddy with every route the edge has (none at serve's start) and resolves once it serves each of them. */
  async start(): Promise<PartRun> {
    return this.serialized(() => this.startCaddy());
  }

  private async startCaddy(): Promise<PartRun> {
    if (this.running !== undefined && this.runEnded !== undefined) return { pid: this.running.pid, ended: this.runEnded };
    const { dir } = this.options;
    if (Buffer.byteLength(this.files.adminSocket) > MAX_SOCKET_PATH) {
      throw this.partFailed(`the admin socket path ${this.files.adminSocket} is longer than a unix socket allows (${MAX_SOCKET_PATH} bytes)`, {
        fix: 'Use a shorter data folder (--data).',
      });
    }
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await this.clearStaleSocket();
    const routes = [...this.set.values()];
    const ask = await this.askServer();
    await writeFile(this.files.config, `${JSON.stringify(initialConfig(this.options, this.files, ask, routes), null, 2)}\n`, { mode: 0o600 });

    const running = runCaddy(this.program, dir, this.files);
    let end: CaddyEnd | undefined;
    const ended = running.ended.then((e) => {
      end = e;
      // Dead, asked or not: the next start() starts a new one.
      if (this.running === running) this.running = undefined;
      return 'error' in e ? `could not be run: ${e.error.message}` : exitWords(e.code, e.signal);
    });
    this.running = running;
    this.runEnded = ended;
    const deadline = this.now() + (this.caddyOptions.startTimeoutMs ?? 30_000);
    for (;;) {
      // A settled `ended` is seen after one turn of the event loop: the poll below gives it that turn.
      if (end !== undefined) {
        this.running = undefined;
        await this.removeRunFiles();
        throw await this.startFailure(running, end);
      }
      if ((await this.adminAnswers()) && existsSync(this.rootCertificate)) break;
      if (this.now() > deadline) {
        await this.stopCaddy();
        throw this.partFailed(`Caddy did not answer on ${this.files.adminSocket} within ${this.caddyOptions.startTimeoutMs ?? 30_000} ms: ${await logTail(this.files.log, running.logOffset)}`);
      }
      await this.delay(POLL_MS);
    }
    this.rootPem = await readFile(this.rootCertificate, 'utf8');
    // Started again with routes: it serves once each name's certificate (kept in its data folder) is served.
    try {
      await Promise.all(routes.map((route) => this.waitForCertificate(route.match?.[0]?.host?.[0] ?? '')));
    } catch (error) {
      await this.stopCaddy();
      throw error;
    }
    return { pid: running.pid, ended };
  }

  async setRoute(host: string, upstream: Upstream, options: RouteOptions = {}): Promise<void> {
    const name = this.checkHost(host);
    if (typeof upstream === 'number' && !(Number.isInteger(upstream) && upstream >= 1 && upstream <= 65535)) throw this.edgeFailed(`the port ${upstream} of ${name} is not a TCP port`, { host: name });
    const route = appRoute(name, upstream, { ...options, httpsPort: this.options.httpsPort });
    return this.serialized(async () => {
      await this.changeRoutes(name, (existing) => {
        if (existing === undefined) {
          // PUT at an index inserts: the new route goes before the catch-all 404, which must stay last.
          return { method: 'PUT', path: `${ROUTES_PATH}/0`, body: route };
        }
        // Compared by what they do: Caddy gives a route back in its own key order.
        if (dialOfRoute(existing) === dialOfRoute(route) && isHttpsOnly(existing) === isHttpsOnly(route)) return undefined;
        // The whole route (its @id included) replaced in place: the switch is atomic for every new request.
        return { method: 'PATCH', path: `/id/${encodeURIComponent(routeId(name))}`, body: route };
      });
      this.set.set(name, route);
      await this.waitForCertificate(name);
    });
  }

  async removeRoute(host: string): Promise<void> {
    const name = this.checkHost(host);
    return this.serialized(async () => {
      await this.changeRoutes(name, (existing) => (existing === undefined ? undefined : { method: 'DELETE', path: `/id/${encodeURIComponent(routeId(name))}` }));
      this.set.delete(name);
    });
  }

  async serveApp(host: string): Promise<void> {
    const name = this.checkHost(host);
    if (this.options.apps === undefined || appIdOfHost(this.options.apps, name) === undefined) {
      throw this.edgeFailed(`${name} is not an application's name of this edge (<app_id>.${this.options.apps?.domain ?? '<domain>'})`, { host: name });
    }
    this.appNames.add(name);
    await this.waitForCertificate(name);
  }

  /**
   * Caddy's on-demand TLS asks over HTTP (GET ?domain=<name>, a 200 allows it) before it issues a certificate for a
   * name it has none of: yes for the names of the edge's routes and the applications serveApp() was given, so no
   * TLS handshake can make Caddy issue one for any other name. On the loopback interface: Caddy runs on this machine.
   */
  private async askServer(): Promise<string> {
    if (this.ask !== undefined) return this.ask.url;
    const server = createServer((req, res) => {
      const name = new URL(req.url ?? '/', 'http://ask').searchParams.get('domain') ?? '';
      res.writeHead(this.set.has(name) || this.appNames.has(name) ? 200 : 404).end();
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    // It never keeps serve's process alive by itself.
    server.unref();
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    this.ask = { server, url };
    return url;
  }

  /** Whether the edge serves: its admin API answers with its routes, and both listeners accept. */
  async check(): Promise<PartCheck> {
    const { listenAddress, httpsPort, httpPort } = this.options;
    const [admin, https, http] = await Promise.all([this.adminAnswers(), accepts(listenAddress, httpsPort), accepts(listenAddress, httpPort)]);
    const down = [
      ...(admin ? [] : [`its admin API does not answer on ${this.files.adminSocket}`]),
      ...(https ? [] : [`nothing accepts on its HTTPS port ${listenAddress}:${httpsPort}`]),
      ...(http ? [] : [`nothing accepts on its HTTP port ${listenAddress}:${httpPort}`]),
    ];
    return { up: down.length === 0, detail: down.length === 0 ? `its admin API answers, and ${listenAddress}:${httpsPort} (HTTPS) and :${httpPort} (HTTP) accept` : down.join('; ') };
  }

  async routes(): Promise<Record<string, number>> {
    const { routes } = await this.readRoutes();
    const out: Record<string, number> = {};
    for (const route of routes) {
      const app = readAppRoute(route);
      if (app !== undefined) out[app.host] = app.port;
    }
    return out;
  }

  async stop(): Promise<void> {
    await this.stopCaddy();
  }

  private async stopCaddy(): Promise<void> {
    const running = this.running;
    this.running = undefined;
    // By its PID, once it has one: a stop asked for while it is being started is sent once it has started.
    if (running !== undefined) {
      let ended = false;
      void running.ended.then(() => {
        ended = true;
      });
      running.kill('SIGTERM');
      const grace = this.delay(this.caddyOptions.stopGraceMs ?? 10_000).then(() => false);
      const graceful = await Promise.race([running.ended.then(() => true), grace]);
      if (!graceful && !ended) {
        running.kill('SIGKILL');
        await running.ended;
      }
    }
    await this.removeRunFiles();
  }

  /** Reads the routes, asks `change` for the one admin call to make, and makes it against their ETag. */
  private async changeRoutes(host: string, change: (existing: CaddyRoute | undefined) => AdminRequest | undefined): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const { routes, etag } = await this.readRoutes();
      const call = change(routes.find((r) => r['@id'] === routeId(host)));
      if (call === undefined) return;
      const answer = await this.call({ ...call, ifMatch: etag });
      if (answer.status === 200) return;
      if (answer.status === 412 && attempt < CHANGE_ATTEMPTS) continue;
      throw this.edgeFailed(`Caddy refused to ${call.method} ${call.path} (HTTP ${answer.status}): ${adminError(answer)}`, { host, status: answer.status });
    }
  }

  private async readRoutes(): Promise<{ routes: CaddyRoute[]; etag: string | undefined }> {
    const answer = await this.call({ method: 'GET', path: ROUTES_PATH });
    if (answer.status !== 200) throw this.edgeFailed(`Caddy did not give its routes (HTTP ${answer.status}): ${adminError(answer)}`, { status: answer.status });
    return { routes: (JSON.parse(answer.body) as CaddyRoute[] | null) ?? [], etag: answer.etag };
  }

  private async call(request: AdminRequest): Promise<AdminAnswer> {
    try {
      return await adminCall(this.files.adminSocket, request);
    } catch (cause) {
      throw this.edgeFailed(`the edge does not answer on ${this.files.adminSocket} (${(cause as Error).message})`, {
        cause,
        fix: 'The edge (Caddy) is not running: serve starts it again by itself (runplan-host logs --host says when, and why it stopped); try again once runplan-host status says it serves.',
      });
    }
  }

  /** Until Caddy serves `host`'s certificate from its CA (it issues it in the background after the change). */
  private async waitForCertificate(host: string): Promise<void> {
    const timeout = this.caddyOptions.certificateTimeoutMs ?? 30_000;
    const deadline = this.now() + timeout;
    let last = '';
    for (;;) {
      try {
        await handshake(connectAddress(this.options.listenAddress), this.options.httpsPort, host, this.rootPem ?? '');
        return;
      } catch (error) {
        last = (error as Error).message;
      }
      if (this.running === undefined) throw this.edgeFailed(`Caddy stopped while it was getting the certificate of ${host} (${last})`, { host });
      if (this.now() > deadline) {
        throw this.edgeFailed(`Caddy serves no valid certificate for ${host} after ${timeout} ms (${last}): ${await logTail(this.files.log, this.running?.logOffset ?? 0)}`, { host });
      }
      await this.delay(POLL_MS);
    }
  }

  private async adminAnswers(): Promise<boolean> {
    try {
      return (await adminCall(this.files.adminSocket, { method: 'GET', path: '/config/' })).status === 200;
    } catch {
      return false;
    }
  }

  /** A socket left by a Caddy that was killed is removed; one that answers belongs to a live Caddy. */
  private async clearStaleSocket(): Promise<void> {
    if (!existsSync(this.files.adminSocket)) return;
    if (await this.adminAnswers()) {
      const pid = (await readFile(this.files.pidFile, 'utf8').catch(() => '')).trim();
      throw this.partFailed(`another Caddy${pid ? ` (PID ${pid})` : ''} already answers on ${this.files.adminSocket}`, {
        fix: `Stop the other Caddy${pid ? ` (kill ${pid})` : ''} or the runplan-host serve that started it, then start again.`,
      });
    }
    await rm(this.files.adminSocket, { force: true });
  }

  private async removeRunFiles(): Promise<void> {
    const ask = this.ask;
    this.ask = undefined;
    if (ask !== undefined) {
      const closed = new Promise<void>((resolve) => ask.server.close(() => resolve()));
      ask.server.closeAllConnections();
      await closed;
    }
    await rm(this.files.adminSocket, { force: true });
    await rm(this.files.pidFile, { force: true });
  }

  private async startFailure(running: RunningCaddy, end: CaddyEnd): Promise<Error> {
    if ('error' in end) {
      const missing = (end.error as NodeJS.ErrnoException).code === 'ENOENT';
      return this.partFailed(missing ? `Caddy is not installed: there is no ${this.program}` : `Caddy (${this.program}) could not be started: ${end.error.message}`, {
        cause: end.error,
      });
    }
    const output = await logTail(this.files.log, running.logOffset);
    const port = portInUse(output);
    const how = end.code === null ? `was killed by ${end.signal}` : `exited with status ${end.code}`;
    return this.partFailed(`Caddy ${how}${port === undefined ? '' : `: port ${port} is in use`}. Its last lines (${this.files.log}):\n${output}`, {
      details: port === undefined ? {} : { port },
      // Debian's package starts its own caddy.service on 80/443 where systemd runs.
      ...(port === undefined
        ? {}
        : { fix: `Free port ${port} (ss -ltnp 'sport = :${port}' names its owner; Debian's caddy.service: systemctl disable --now caddy), or choose other ports, and start again.` }),
    });
  }

  private partFailed(message: string, extra: { fix?: string; cause?: unknown; details?: Record<string, unknown> } = {}): Error {
    const { httpsPort, httpPort, listenAddress } = this.options;
    return HostErrors.HOST_PART_FAILED.create({
      message: `${message} (edge on ${listenAddress}, HTTPS port ${httpsPort}, HTTP port ${httpPort})`,
      file: this.files.config,
      ...(extra.fix === undefined ? {} : { fix: extra.fix }),
      cause: extra.cause,
      details: { part: 'caddy', httpsPort, httpPort, ...extra.details },
    });
  }

  private edgeFailed(message: string, extra: { host?: string; status?: number; cause?: unknown; fix?: string } = {}): Error {
    const { cause, fix, ...details } = extra;
    return HostErrors.EDGE_FAILED.create({ message, cause, ...(fix === undefined ? {} : { fix }), details });
  }

  private checkHost(host: string): string {
    const name = host.toLowerCase();
    if (!isHostName(name)) throw this.edgeFailed(`${JSON.stringify(host)} is not a host name`, { host });
    return name;
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const result = this.changes.then(work, work);
    this.changes = result.catch(() => undefined);
    return result;
  }
}

/** A TLS handshake with `servername`, verified against the edge's root certificate. */
function handshake(address: string, port: number, servername: string, ca: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port, servername, ca, ALPNProtocols: ['http/1.1'] }, () => {
      socket.destroy();
      resolve();
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error('TLS handshake timed out')));
    socket.once('error', reject);
  });
}
