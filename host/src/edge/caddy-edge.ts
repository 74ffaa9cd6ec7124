import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkServerIdentity, connect, type PeerCertificate } from 'node:tls';
import { keptOrFreePort } from '../deploy/free-port.js';
import { HostErrors } from '../errors.js';
import { stopByIdentity } from '../supervision/adopted-process.js';
import { type FoundProcess, liveProcessOf, liveProcessOfPidFile, removeIdentityFile, writeIdentityFile } from '../supervision/identity-file.js';
import { logTail } from '../supervision/log-tail.js';
import { accepts, connectAddress } from '../supervision/probes.js';
import { exitWords, type PartCheck, type PartRun } from '../supervision/supervisor.js';
import { type AdminAnswer, type AdminRequest, adminCall, adminError } from './caddy-admin.js';
import {
  askPortOf,
  type CaddyFiles,
  type CaddyRoute,
  EDGE_FORMAT,
  formatOf,
  hostOfRoute,
  ROUTES_PATH,
  appIdOfHost,
  appRoute,
  caddyFiles,
  dialOfRoute,
  initialConfig,
  isHostName,
  isHttpsOnly,
  readAppRoute,
  routeId,
  setRoutesOf,
} from './caddy-config.js';
import { adoptedCaddy, type CaddyEnd, findCaddy, isThisEdgesCaddy, portInUse, type RunningCaddy, runCaddy } from './caddy-process.js';
import { AppDomains } from './app-domains.js';
import type { Edge, EdgeOptions, RouteOptions, ServedDomain, Upstream } from './edge.js';

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
  /** What the edge tells the host's log: a Caddy adopted, replaced or given a new configuration, and why. */
  readonly log?: (line: string) => void;
}

const POLL_MS = 50;
// A unix socket's path fits in sun_path (108 bytes, NUL included) or cannot be bound at all.
const MAX_SOCKET_PATH = 107;
// Another writer may change the routes between the read and the change (If-Match then fails): read again.
const CHANGE_ATTEMPTS = 3;
// An ACME CA answers in seconds (Let's Encrypt: an order, a validation, a certificate); a slow one is told to the log.
const ACME_CERTIFICATE_TIMEOUT_MS = 60_000;
const ACME_POLL_MS = 1_000;
// A Caddy that answers at all answers its configuration at once: one that accepts and says nothing for this long is not serving.
const ADMIN_PROBE_MS = 5_000;

/** An unref'd timer: a poll never keeps the host's process alive by itself. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * The HTTPS edge run by Caddy: one server with a TLS listener and a plain HTTP one sharing the
 * routes, certificates from Caddy's own CA, and each route change one call of its admin API on a
 * unix socket, made against the ETag of the routes it read (Caddy applies it whole or keeps the old
 * config). Caddy keeps its configuration in memory only (no autosave): the edge keeps each route it
 * set, and a Caddy started again after it died starts with all of them. Caddy outlives serve: the
 * next serve adopts it by its identity (caddy.identity) and takes its routes back.
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
  private readonly log: (line: string) => void;
  /** The custom domains' links, when the edge serves them (EdgeOptions.apps.domains). */
  private readonly domains: AppDomains | undefined;
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
    this.log = caddyOptions.log ?? (() => undefined);
    const apps = options.apps;
    this.domains = apps?.domains === undefined ? undefined : new AppDomains(apps.domains, apps.upstreams);
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
    await mkdir(this.files.namesDir, { recursive: true, mode: 0o700 });
    const adopted = await this.adoptLeftover();
    if (adopted !== undefined) return adopted;
    await this.clearStaleSocket();
    const routes = [...this.set.values()];
    const askPort = await keptOrFreePort(askPortOf(await this.writtenConfig()));
    await this.writeConfig(initialConfig(this.options, this.files, askPort, routes));

    const running = runCaddy(this.program, dir, this.files);
    let end: CaddyEnd | undefined;
    const ended = this.endOf(running, (e) => {
      end = e;
    });
    this.running = running;
    this.runEnded = ended;
    const deadline = this.now() + (this.caddyOptions.startTimeoutMs ?? 30_000);
    let identified = false;
    for (;;) {
      // A settled `ended` is seen after one turn of the event loop: the poll below gives it that turn.
      if (end !== undefined) {
        this.running = undefined;
        await this.removeRunFiles();
        throw await this.startFailure(running, end);
      }
      // Written as soon as it has a PID: a serve that dies from now on leaves a Caddy the next one finds again.
      if (!identified && running.pid !== undefined) identified = (await writeIdentityFile(this.files.identityFile, running.pid)) !== undefined;
      if (identified && (await this.adminAnswers()) && existsSync(this.rootCertificate)) break;
      if (this.now() > deadline) {
        await this.stopCaddy();
        throw this.partFailed(`Caddy did not answer on ${this.files.adminSocket} within ${this.caddyOptions.startTimeoutMs ?? 30_000} ms: ${await logTail(this.files.log, running.logOffset)}`);
      }
      await this.delay(POLL_MS);
    }
    return this.serving(running, ended, routes);
  }

  /** Once Caddy answers: its root certificate read, and (started again with routes) each name's certificate served, kept in its data folder. */
  private async serving(running: RunningCaddy, ended: Promise<string>, routes: readonly CaddyRoute[]): Promise<PartRun> {
    try {
      this.rootPem = await readFile(this.rootCertificate, 'utf8');
      await Promise.all(routes.map((route) => this.waitForCertificate(hostOfRoute(route))));
    } catch (error) {
      await this.stopCaddy();
      throw error;
    }
    return { pid: running.pid, ended };
  }

  /** How a run ended, in the host log's words; forgets it, asked or not, so that the next start() starts (or adopts) another. */
  private endOf(running: RunningCaddy, seen: (end: CaddyEnd) => void = () => undefined): Promise<string> {
    return running.ended.then((e) => {
      seen(e);
      if (this.running === running) this.running = undefined;
      if ('adopted' in e) return e.adopted;
      return 'error' in e ? `could not be run: ${e.error.message}` : exitWords(e.code, e.signal);
    });
  }

  /**
   * A Caddy an earlier serve of this folder left running, found by its identity file (or, left by a runplan-host
   * from before identity files, by its pid file and arguments): adopted when it runs this edge's caddy.json and
   * its admin API answers; stopped by its identity otherwise, so that a new one can take the ports.
   */
  private async adoptLeftover(): Promise<PartRun | undefined> {
    const found = (await liveProcessOf(this.files.identityFile)) ?? (await liveProcessOfPidFile(this.files.pidFile, (args) => isThisEdgesCaddy(args, this.files)));
    if (found === undefined) {
      await removeIdentityFile(this.files.identityFile);
      return undefined;
    }
    const { pid } = found.identity;
    // Only a `caddy run --config …` is ever signalled: the identity names the very process the file recorded.
    const isCaddyRun = found.args[1] === 'run' && found.args[2] === '--config';
    const ours = isThisEdgesCaddy(found.args, this.files);
    const answer = ours ? await adminCall(this.files.adminSocket, { method: 'GET', path: '/config/', timeoutMs: ADMIN_PROBE_MS }).catch(() => undefined) : undefined;
    if (answer?.status === 200) return this.adopt(found, JSON.parse(answer.body) as unknown);
    if (!isCaddyRun) {
      await removeIdentityFile(this.files.identityFile);
      return undefined;
    }
    const why = ours ? `its admin API does not answer on ${this.files.adminSocket}` : `it runs another configuration (${found.args.slice(1).join(' ')})`;
    this.log(`the edge (Caddy, PID ${pid}) an earlier serve left running is stopped, ${why}; a new one is started`);
    await stopByIdentity(found.identity, this.caddyOptions.stopGraceMs ?? 10_000);
    await this.removeRunFiles();
    return undefined;
  }

  /** Takes a live Caddy over: its routes back into the edge's record, this runplan-host's configuration given to it once if it runs another. */
  private async adopt(found: FoundProcess, live: unknown): Promise<PartRun> {
    const { pid } = found.identity;
    const routes = setRoutesOf(live);
    this.set.clear();
    for (const route of routes) {
      this.set.set(hostOfRoute(route), route);
      // A Caddy of format 1 had its names answered by its serve, from memory.
      await this.allowName(hostOfRoute(route));
    }
    const askPort = askPortOf(live) ?? (await keptOrFreePort(askPortOf(await this.writtenConfig())));
    const wanted = initialConfig(this.options, this.files, askPort, routes);
    await writeIdentityFile(this.files.identityFile, pid);
    const running = adoptedCaddy(found.identity, this.files);
    const ended = this.endOf(running);
    this.running = running;
    this.runEnded = ended;
    const format = formatOf(live);
    if (canonical(live) === canonical(wanted)) {
      this.log(`the edge (Caddy, PID ${pid}) an earlier serve left running is adopted, with its ${routes.length} route(s) and the applications' upstreams`);
    } else {
      const why =
        format === EDGE_FORMAT
          ? "its configuration is not the one this edge's settings make (ports, domain or drain changed, or another admin client changed it)"
          : `it runs the configuration of an older runplan-host (format ${format}; this one writes format ${EDGE_FORMAT})`;
      this.log(`the edge (Caddy, PID ${pid}) an earlier serve left running is adopted; ${why}: it is given this one once through its admin API (/load), keeping its ${routes.length} route(s)`);
      await this.writeConfig(wanted);
      const loaded = await this.call({ method: 'POST', path: '/load', body: wanted });
      if (loaded.status !== 200) {
        await this.stopCaddy();
        throw this.partFailed(`Caddy (PID ${pid}) refused this runplan-host's configuration (HTTP ${loaded.status}): ${adminError(loaded)}`);
      }
    }
    return this.serving(running, ended, routes);
  }

  /** The caddy.json written for the last start, if any (it keeps the `ask` server's port). */
  private async writtenConfig(): Promise<unknown> {
    try {
      return JSON.parse(await readFile(this.files.config, 'utf8')) as unknown;
    } catch {
      return undefined;
    }
  }

  private async writeConfig(config: Record<string, unknown>): Promise<void> {
    await writeFile(this.files.config, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  }

  async setRoute(host: string, upstream: Upstream, options: RouteOptions = {}): Promise<void> {
    const name = this.checkHost(host);
    if (typeof upstream === 'number' && !(Number.isInteger(upstream) && upstream >= 1 && upstream <= 65535)) throw this.edgeFailed(`the port ${upstream} of ${name} is not a TCP port`, { host: name });
    const route = appRoute(name, upstream, { ...options, httpsPort: this.options.httpsPort });
    return this.serialized(async () => {
      await this.allowName(name);
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
      await rm(join(this.files.namesDir, name), { force: true });
    });
  }

  async serveApp(host: string, { wait = true }: { readonly wait?: boolean } = {}): Promise<void> {
    const name = this.checkHost(host);
    if (this.options.apps === undefined || appIdOfHost(this.options.apps, name) === undefined) {
      throw this.edgeFailed(`${name} is not an application's name of this edge (app-<uuid>.${this.options.apps?.domain ?? '<domain>'})`, { host: name });
    }
    await this.allowName(name);
    if (wait) await this.waitForCertificate(name);
  }

  /**
   * No wait for the certificate: a name whose DNS does not point here yet (or a CA that cannot reach it) would
   * fail the change; it is issued at the name's first TLS handshake, as the `ask` now allows it.
   */
  async serveDomain({ name, appId }: ServedDomain): Promise<void> {
    const domains = this.requireDomains();
    const host = this.checkHost(name);
    await this.allowName(host);
    await domains.point(host, appId);
  }

  async stopServingDomain(name: string): Promise<void> {
    const domains = this.requireDomains();
    const host = this.checkHost(name);
    await domains.remove(host);
    await rm(join(this.files.namesDir, host), { force: true });
  }

  async serveDomains(wanted: readonly ServedDomain[]): Promise<void> {
    const domains = this.requireDomains();
    const names = new Set(wanted.map((d) => d.name));
    for (const name of await domains.names()) if (!names.has(name)) await this.stopServingDomain(name);
    for (const domain of wanted) await this.serveDomain(domain);
  }

  private requireDomains(): AppDomains {
    if (this.domains === undefined) throw this.edgeFailed('this edge serves no custom domains (EdgeOptions.apps.domains is not set)');
    return this.domains;
  }

  /**
   * Lets Caddy issue a certificate for `name`: its `ask` server answers yes for a name whose file exists in
   * edge/names, so no TLS handshake can make Caddy issue one for any other name, and the answer does not
   * need serve to be running.
   */
  private async allowName(name: string): Promise<void> {
    await mkdir(this.files.namesDir, { recursive: true, mode: 0o700 });
    await writeFile(join(this.files.namesDir, name), '', { mode: 0o600 });
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

  detach(): void {
    const running = this.running;
    this.running = undefined;
    this.runEnded = undefined;
    running?.letGo();
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
    if (this.options.acme !== undefined) return this.waitForAcmeCertificate(host);
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

  /**
   * The first handshake with `host`, which makes Caddy get its certificate from the ACME CA (the handshake waits for
   * it), until one for that name is served. Its chain is the CA's, which the edge need not trust (a private ACME
   * server's issuing root is known only to it): the name is checked. A certificate that does not come in time is
   * told to the host's log, not thrown: the CA, DNS and ports 80/443 are out of the host's hands, the route is set
   * all the same, and Caddy tries again at the next handshake. A handshake every second at most: each failed one is
   * an attempt at the CA, whose rate limits count failures.
   */
  private async waitForAcmeCertificate(host: string): Promise<void> {
    const refused = acmeRefusal(host);
    if (refused !== undefined) {
      this.log(`no certificate of ${host} from the ACME CA ${this.options.acme?.directory}: ${refused}`);
      return;
    }
    const timeout = this.caddyOptions.certificateTimeoutMs ?? ACME_CERTIFICATE_TIMEOUT_MS;
    const deadline = this.now() + timeout;
    let last = '';
    for (;;) {
      const started = this.now();
      try {
        const certificate = await peerCertificate(connectAddress(this.options.listenAddress), this.options.httpsPort, host, Math.max(1, deadline - started));
        const mismatch = checkServerIdentity(host, certificate);
        if (mismatch === undefined) return;
        last = mismatch.message;
      } catch (error) {
        last = (error as Error).message;
      }
      if (this.running === undefined) throw this.edgeFailed(`Caddy stopped while it was getting the certificate of ${host} (${last})`, { host });
      if (this.now() > deadline) {
        this.log(
          `no certificate of ${host} from the ACME CA ${this.options.acme?.directory} after ${timeout} ms (${last}); Caddy asks again at the next TLS handshake with that name: check that its DNS points at this machine and that the CA reaches ports 80 and 443 (docs/host.md, "Certificates"); Caddy's log: ${this.files.log}`,
        );
        return;
      }
      await this.delay(Math.max(0, ACME_POLL_MS - (this.now() - started)));
    }
  }

  private async adminAnswers(): Promise<boolean> {
    try {
      return (await adminCall(this.files.adminSocket, { method: 'GET', path: '/config/', timeoutMs: ADMIN_PROBE_MS })).status === 200;
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
    await rm(this.files.adminSocket, { force: true });
    await rm(this.files.pidFile, { force: true });
    await removeIdentityFile(this.files.identityFile);
  }

  private async startFailure(running: RunningCaddy, end: CaddyEnd): Promise<Error> {
    if ('adopted' in end) return this.partFailed(`the adopted Caddy (PID ${running.pid}) ${end.adopted}`);
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

/** Why no ACME CA issues a certificate for `host`, if none does: each handshake would be an order refused. */
function acmeRefusal(host: string): string | undefined {
  // RFC 5280's DNS names have no "_": the order is malformed (pebble and Let's Encrypt alike).
  if (host.includes('_')) return 'ACME CAs refuse a name with "_"';
  // Caddy itself asks no public CA for these (certmagic's SubjectQualifiesForPublicCert).
  if (host === 'localhost' || /\.(localhost|local)$/.test(host)) return `ACME CAs issue no certificate for ${host}`;
  return undefined;
}

/** The certificate served for `servername`, unverified: the caller checks what it needs. */
function peerCertificate(address: string, port: number, servername: string, timeoutMs: number): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port, servername, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => {
      const certificate = socket.getPeerCertificate();
      socket.destroy();
      if (certificate.raw === undefined) reject(new Error('no certificate was served'));
      else resolve(certificate);
    });
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('TLS handshake timed out')));
    socket.once('error', reject);
  });
}

/** A configuration as text with its keys in one order: Caddy gives its configuration back in its own key order. */
function canonical(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
      );
    return v;
  };
  return JSON.stringify(sorted(value));
}
