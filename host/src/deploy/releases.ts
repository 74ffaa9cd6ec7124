import { randomUUID } from 'node:crypto';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  adoptRun,
  type BuildpackRegistry,
  deploy,
  diffPlans,
  discardRun,
  formatDiff,
  formatLogLine,
  HttpHealthChecker,
  type LinkedVariables,
  Logger,
  type LogLine,
  planDigest,
  planToCarryOut,
  RELEASE_PORT,
  type ReleaseNamespace,
  type RunPlan,
  type SupervisionTree,
} from 'runplan';
import type { AppUpstreams } from '../edge/app-upstreams.js';
import type { Edge } from '../edge/edge.js';
import { HostErrors } from '../errors.js';
import { type HostPaths, repositoryPath } from '../paths.js';
import { appHostName, appUrl, type HostSettings } from '../settings.js';
import type { AppRecord, HostStore, ReleaseCause, ReleaseRecord, StoreLock } from '../store/store.js';
import { AppLocks } from './app-locks.js';
import { AppLogs } from './app-logs.js';
import { type CommitSource, checkOutCommit } from './checkout.js';
import { describeError } from './describe-error.js';
import { type DeployPhase, DeployTimings } from './deploy-timings.js';
import { PortBook } from './free-port.js';
import { planSummary } from './plan-summary.js';
import type { ReleaseEngine } from './release-engines.js';
import type { Tenancy } from '../tenancy/tenancy.js';

/** What a deploy is asked to carry out. */
export interface ReleaseRequest {
  readonly app: AppRecord;
  readonly cause: ReleaseCause;
  /** The SSH key id of a push, or "cli". */
  readonly by: string;
  readonly source: CommitSource;
  readonly variables: Readonly<Record<string, string>>;
  /** The variables of each linked add-on, weaker than the application's own (runplan reports which shadows which). */
  readonly links: readonly ReleaseLink[];
  /** The plan whose defaults the new one keeps (runplan's `previous`): the running release's, or the one rolled back to. */
  readonly keepDefaultsOf?: RunPlan | undefined;
  /** Each line for whoever asked (the pusher's `remote:` lines), as it comes. */
  readonly out: (line: string) => void;
  /**
   * Run once the application's lock is held, before anything is recorded: what
   * only then is known (the release a restart restarts: a push may have
   * replaced it while the restart waited), or a coded error that refuses the
   * deploy (a push whose master moved while it waited).
   */
  readonly underLock?: () => Promise<Partial<Pick<ReleaseRequest, 'source' | 'variables' | 'keepDefaultsOf'>>>;
  /** Aborted when whoever asked has gone (a push's hook): the deploy stops, unless it was accepted already. */
  readonly signal?: AbortSignal;
  /**
   * The commit point of a push (git's master moved to the new commit), under the
   * lock, once the release passed the gate and before it serves (on an engine
   * that updates in place, before the update: the update is the switch). Throws
   * to refuse it (the new release stops, the old one serves on); `back()` undoes
   * it when the release then fails.
   */
  readonly accept?: (release: number) => Promise<{ back(): Promise<void> }>;
  /** Told each phase of the deploy as it begins, in the order of the pusher's timing line (serve's bring-back frees its place of the cores at the stability window). */
  readonly onPhase?: (phase: DeployPhase) => void;
}

export interface ReleaseResult {
  readonly ok: boolean;
  readonly release: number;
  /** The coded error of a failed deploy. */
  readonly code?: string;
}

/** What of a running release the host drives: stopping it, or letting it run on without this serve. */
interface RunningRelease {
  stop(): Promise<void>;
  /** Leaves it running (its processes kept by s6) when serve exits; absent where serve's exit ends it (a swarm's services stay by themselves). */
  detach?(): Promise<void>;
}

/** A link as the host makes it; an add-on whose server is on this machine's loopback says its port, and its variables at another address. */
interface ReleaseLink extends LinkedVariables {
  readonly loopback?: { readonly port: number; variablesAt(host: string): Readonly<Record<string, string>> };
}

/** A release answering now: its number, port, plan, and the running deployment. */
interface Serving {
  readonly release: number;
  readonly port: number;
  /** Where the edge dials it: `127.0.0.1:<port>`, or its namespace's `<address>:8080`. */
  readonly upstream: string;
  readonly plan: RunPlan;
  readonly deployed: RunningRelease;
}

/** The name of a release's run in the supervision tree: the application and the release's number. */
export function runIdOf(appId: string, release: number): string {
  return `${appId}.r${release}`;
}

/** How many lines of a failed release's own output the push shows again at the end. */
const FAILED_OUTPUT_LINES = 20;

export interface ReleasesOptions {
  readonly store: HostStore;
  readonly edge: Edge;
  /** The address of each application's serving release, which the edge dials, re-pointed at each switch. */
  readonly upstreams: AppUpstreams;
  readonly paths: HostPaths;
  readonly settings: HostSettings;
  readonly registry: BuildpackRegistry;
  /** Where the releases run: this machine, or a swarm. */
  readonly engine: ReleaseEngine;
  /** Each application's user and walls on this machine (the local engine). */
  readonly tenancy?: Tenancy;
  /** Where the local engine's releases are kept by s6, apart from serve (they outlive it: docs/host.md, "What outlives serve"). */
  readonly tree?: SupervisionTree;
  /** Waits (drain); tests pass one that does not sleep. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * The deploy of a release, the same for a push, a restart and a rollback: the
 * commit checked out, planned by runplan (keeping the running release's
 * defaults), built with the application's layer cache, started on a fresh
 * loopback port beside the release that serves, and accepted only when runplan's
 * health gate passes — then the edge's route moves in one call and the old
 * release drains and stops, outside the application's lock: the next deploy
 * does not wait for it. Any failure stops the new release only: the old one
 * never stopped serving.
 */
export class Releases {
  private readonly serving = new Map<string, Serving>();
  private readonly locks = new AppLocks();
  private readonly draining = new Set<Promise<void>>();
  /** Aborted by stopAll: a deploy under way stops running the application's code. */
  private readonly stopping = new AbortController();
  /** The loopback ports of the releases of this serve: none is given to two of them. */
  private readonly ports = new PortBook();
  readonly logs = new AppLogs();

  constructor(private readonly options: ReleasesOptions) {}

  /** The release serving an application now, if any. */
  servingRelease(appId: string): { release: number; port: number } | undefined {
    const s = this.serving.get(appId);
    return s ? { release: s.release, port: s.port } : undefined;
  }

  async deploy(asked: ReleaseRequest): Promise<ReleaseResult> {
    const { app, out } = asked;
    const timings = new DeployTimings(asked.onPhase);
    timings.enter('wait');
    const refuse = (error: unknown): ReleaseResult => {
      const { code, lines } = describeError(error);
      for (const line of lines) out(line);
      return { ok: false, release: 0, code };
    };
    const unlockHere = await this.locks.acquire(app.id, `another deploy of ${app.name} is running (${asked.cause} by ${asked.by})`, (holder) => out(`==> ${holder}: this one waits for it`));
    // The hosts that share a store (PostgreSQL) deploy an application one at a time too.
    let shared: StoreLock;
    try {
      shared = await this.options.store.lockApp(app.id, () => out(`==> another runplan-host on this store is deploying ${app.name}: this one waits for it`));
    } catch (error) {
      unlockHere();
      return refuse(error);
    }
    const unlock = () => void shared.release().finally(unlockHere);
    let request: ReleaseRequest;
    try {
      request = { ...asked, ...(await asked.underLock?.()) };
      asked.signal?.throwIfAborted();
    } catch (error) {
      unlock();
      return refuse(error);
    }
    let release: ReleaseRecord | undefined;
    const logLines: string[] = [];
    // Once the deploy has ended, the release's lines (its processes') go to its log only: the push has ended.
    let live = true;
    const say = (line: string) => {
      this.logs.push(app.id, line);
      if (!live) return;
      logLines.push(line);
      out(line);
    };
    const end = (result: ReleaseResult) => {
      live = false;
      return result;
    };
    try {
      release = await this.options.store.beginRelease({
        appId: app.id,
        cause: request.cause,
        commit: request.source.commit,
        by: request.by,
        variables: request.variables,
        links: request.links.map((l) => l.name),
      });
      say(`==> release ${release.number} of ${app.name} (${app.id}): ${request.cause} of ${request.source.commit.slice(0, 12)}`);
      // A push is accepted (git's master moves, under this lock) right before its release serves: a push git reports rejected never serves.
      // Updated in place (a swarm), the services serve the new release as their tasks are replaced: master moves first, and back if it fails.
      let accepted: { back(): Promise<void> } | undefined;
      const putBack = () => accepted?.back().catch((undone: unknown) => describeError(undone).lines.forEach(say));
      if (this.options.engine.inPlace) {
        try {
          accepted = await request.accept?.(release.number);
        } catch (error) {
          return end(await this.failed(app, release, error, [], say, logLines).finally(unlock));
        }
      }
      const started = await this.start(app, release.number, request, say, timings);
      if ('error' in started) {
        await putBack();
        // Whoever asked has gone: that is why it stopped, whatever step noticed.
        return end(await this.failed(app, release, request.signal?.reason ?? started.error, started.ownOutput, say, logLines).finally(unlock));
      }
      const previous = this.serving.get(app.id);
      timings.enter('switch');
      try {
        if (!this.options.engine.inPlace) {
          request.signal?.throwIfAborted();
          accepted = await request.accept?.(release.number);
        }
        // The edge's route of every application dials the address its upstream folder names, so neither this
        // nor a switch (the file renamed) changes Caddy's configuration, whose reloads refuse TLS handshakes
        // meanwhile (caddyserver/caddy#5589). The first release of this serve has the name's certificate issued first.
        if (previous === undefined) await this.options.edge.serveApp(appHostName(this.options.settings, app.id));
        await this.options.upstreams.point(app.id, started.upstream);
      } catch (error) {
        await putBack();
        await started.deployed.stop();
        return end(await this.failed(app, release, error, [], say, logLines).finally(unlock));
      }
      this.serving.set(app.id, { release: release.number, port: started.port, upstream: started.upstream, plan: started.plan, deployed: started.deployed });
      await this.options.store.finishRelease(app.id, release.number, {
        status: 'succeeded',
        plan: started.plan,
        planDigest: started.digest,
        port: started.port,
      });
      const { inPlace } = this.options.engine;
      const replaced = previous ? (inPlace ? ` (release ${previous.release}'s tasks were replaced in place)` : ` (release ${previous.release} drains, then stops)`) : '';
      say(`==> release ${release.number} serves ${appUrl(this.options.settings, app.id)}${replaced}`);
      say(`==> release ${release.number} ${timings.describe()}`);
      await this.options.store.appendLog(app.id, release.number, logLines);
      // Only the switch is serialised: the next deploy of this application builds and starts while the old release drains
      // (a promotion keeps every build whose processes run, runplan's process/builds-in-use.ts), so the drain is off its way.
      unlock();
      // Updated in place, the previous release is gone already: stopping it would stop the application.
      if (previous && !inPlace) void this.drain(app, previous);
      return end({ ok: true, release: release.number });
    } catch (error) {
      // A failure of the host itself (the store, the edge): the release is recorded as failed all the same.
      if (release) return end(await this.failed(app, release, error, [], say, logLines).finally(unlock));
      unlock();
      const { code, lines } = describeError(error);
      for (const line of lines) out(line);
      return end({ ok: false, release: 0, code });
    }
  }

  private async start(
    app: AppRecord,
    releaseNumber: number,
    request: ReleaseRequest,
    say: (line: string) => void,
    timings: DeployTimings,
  ): Promise<{ port: number; upstream: string; plan: RunPlan; digest: string; deployed: RunningRelease } | { error: unknown; ownOutput: string[] }> {
    const { paths } = this.options;
    const ownOutput: string[] = [];
    let unguard: (() => Promise<void>) | undefined;
    let givePort: (() => void) | undefined;
    let namespace: ReleaseNamespace | undefined;
    const unlink: (() => Promise<void>)[] = [];
    try {
      timings.enter('checkout');
      const dir = join(paths.appsDir, app.id, 'source');
      // The checkout is root's and closed to every application: runplan copies it into the application's own build.
      await mkdir(join(paths.appsDir, app.id), { recursive: true, mode: 0o700 });
      await chmod(join(paths.appsDir, app.id), 0o700);
      await checkOutCommit(request.source, dir);
      const sandbox = await this.options.tenancy?.sandbox(app.id);
      // A swarm's services are updated in place: the port their proxy publishes stays the application's.
      const servingPort = this.options.engine.inPlace ? this.serving.get(app.id)?.port : undefined;
      // Its own namespace, when the host gives one: 8080 there, as the specification says, for every release.
      const networks = sandbox && !this.options.engine.inPlace ? this.options.tenancy?.networks : undefined;
      namespace = await networks?.create();
      const taken = servingPort === undefined && namespace === undefined ? await this.ports.take() : undefined;
      givePort = taken?.give;
      // Where the host reaches it (recorded), and where it listens: 8080 in its own namespace or container, as the specification says.
      const port = namespace ? RELEASE_PORT : (servingPort ?? (taken?.port as number));
      const listenPort = this.options.engine.inPlace ? RELEASE_PORT : port;
      const upstream = namespace ? `${namespace.address}:${RELEASE_PORT}` : `127.0.0.1:${port}`;
      // Only the release's own user, of the applications' users, may connect to its port.
      if (sandbox && namespace === undefined) unguard = await this.options.tenancy?.guard.guard(port, sandbox.user.uid);
      // From its namespace, each linked add-on at the gateway's address, and nothing else of the host.
      let links: readonly LinkedVariables[] = request.links;
      if (namespace && networks) {
        for (const link of request.links) if (link.loopback) unlink.push(await namespace.allow({ port: link.loopback.port }));
        const gateway = networks.settings.gateway;
        links = request.links.map(({ name, kind, variables, loopback }) => ({ name, ...(kind ? { kind } : {}), variables: loopback ? loopback.variablesAt(gateway) : variables }));
      }
      const keep = request.keepDefaultsOf ?? this.serving.get(app.id)?.plan;
      timings.enter('plan');
      const toCarryOut = await planToCarryOut({
        registry: this.options.registry,
        appDir: dir,
        type: app.type,
        env: {
          application: request.variables,
          links,
          service: { APP_ID: app.id, INSTANCE_ID: randomUUID(), COMMIT_ID: request.source.commit },
          secretNames: this.options.registry.secretVariables(),
        },
        host: {
          port: listenPort,
          workDir: paths.workDir,
          cacheDir: this.options.settings.cacheDir ?? paths.cacheDir,
          instance: this.options.settings.instance,
          ...(app.dedicatedBuildInstance ? { buildInstance: this.options.settings.buildInstance } : {}),
        },
        ...(keep ? { previous: keep } : {}),
      });
      const { plan } = toCarryOut;
      for (const line of planSummary(plan)) say(line);
      const running = this.serving.get(app.id);
      if (running) {
        say(`what changed since release ${running.release}:`);
        for (const line of formatDiff(diffPlans(running.plan, plan)).split('\n')) say(`  ${line}`);
      }
      const sink = (line: LogLine) => {
        timings.observe(line);
        if (line.text === '' && line.event !== undefined) return;
        const text = formatLogLine(line);
        if (line.origin.kind === 'process') {
          ownOutput.push(text);
          if (ownOutput.length > FAILED_OUTPUT_LINES) ownOutput.shift();
        }
        say(text);
      };
      const signal = request.signal ? AbortSignal.any([this.stopping.signal, request.signal]) : this.stopping.signal;
      const digest = planDigest(plan);
      timings.enter('build');
      const { tree } = this.options;
      const executor = await this.options.engine.executor({
        appId: app.id,
        appDir: dir,
        registry: this.options.registry,
        signal,
        ...(sandbox ? { sandbox } : {}),
        ...(tree ? { lasting: { tree, runId: runIdOf(app.id, releaseNumber) } } : {}),
        ...(namespace ? { network: { path: namespace.path, address: namespace.address } } : {}),
        ...(listenPort === port ? {} : { publishPort: port }),
        linkedToAddons: request.links.some((link) => link.kind === 'addon'),
      });
      const deployed = await deploy(toCarryOut, executor, { sink, signal });
      const [release, give, own, closeLinks] = [unguard, givePort, namespace, [...unlink]];
      const detach = deployed.running.detach;
      return {
        port,
        upstream,
        plan,
        digest,
        deployed: {
          stop: () =>
            deployed.stop().finally(async () => {
              await release?.();
              give?.();
              for (const close of closeLinks) await close();
              await own?.remove();
            }),
          ...(detach ? { detach: () => detach() } : {}),
        },
      };
    } catch (error) {
      await unguard?.();
      givePort?.();
      for (const close of unlink) await close();
      await namespace?.remove().catch(() => undefined);
      return { error, ownOutput: [...ownOutput] };
    }
  }

  private async failed(app: AppRecord, release: ReleaseRecord, error: unknown, ownOutput: string[], say: (line: string) => void, logLines: string[]): Promise<ReleaseResult> {
    const { code, lines } = describeError(error);
    for (const line of lines) say(line);
    if (ownOutput.length > 0) {
      say(`the last lines of release ${release.number}'s own output:`);
      for (const line of ownOutput) say(`  ${line}`);
    }
    const serving = this.serving.get(app.id);
    say(
      `${HostErrors.DEPLOY_FAILED.code}: release ${release.number} was not deployed; ${serving ? `release ${serving.release} never stopped serving ${appUrl(this.options.settings, app.id)}` : 'nothing of this application was serving'}.`,
    );
    await this.options.store.finishRelease(app.id, release.number, { status: 'failed', errorCode: code });
    await this.options.store.appendLog(app.id, release.number, logLines);
    return { ok: false, release: release.number, code };
  }

  /** The replaced release answers what it has for drainMs (the edge sends it nothing new), then stops. */
  private drain(app: AppRecord, previous: Serving): Promise<void> {
    const sleep = this.options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    const done = (async () => {
      await sleep(this.options.settings.drainMs);
      await previous.deployed.stop().catch((error: Error) => this.logs.push(app.id, `==> could not stop release ${previous.release}: ${error.message}`));
      this.logs.push(app.id, `==> release ${previous.release} stopped`);
    })();
    this.draining.add(done);
    return done.finally(() => this.draining.delete(done));
  }

  /** The repository of an application (for a restart or rollback, which read an accepted commit). */
  repository(appId: string): string {
    return repositoryPath(this.options.paths, appId);
  }

  /** Stops every release (serving and draining), once no deploy runs. */
  async stopAll(): Promise<void> {
    await this.settle();
    await Promise.all([...this.serving.values()].map((s) => s.deployed.stop().catch(() => undefined)));
    this.serving.clear();
    await this.options.upstreams.removeAll();
  }

  /**
   * serve exits and its releases go on: the deploys under way are stopped (their pushes are told so), the
   * drains under way end, and each serving release is let go — its processes are s6's, its route the edge's —
   * for the next serve to take over (adopt).
   */
  async detachAll(): Promise<void> {
    await this.settle();
    await Promise.all([...this.serving.values()].map((s) => s.deployed.detach?.().catch(() => undefined)));
    // The edge's upstream files stay: it reaches every release without serve.
    this.serving.clear();
  }

  /** No deploy runs and no release drains: a deploy under way is stopped (it stops running the application's code). */
  private async settle(): Promise<void> {
    this.stopping.abort(new Error('the host is stopping'));
    // A deploy finishing now starts one more drain: the drains are awaited once no deploy runs.
    await this.locks.idle();
    await Promise.all([...this.draining]);
  }

  /**
   * serve starting: the application's current release, when its run still goes on under s6 (serve
   * stopped, crashed or was upgraded meanwhile), is taken over as it is — nothing built, started or
   * recorded — once its health check answers. Says why it could not be (then the caller deploys it again).
   */
  async adopt(app: AppRecord, current: ReleaseRecord, out: (line: string) => void): Promise<{ adopted: true } | { adopted: false; why: string }> {
    if (current.port === null || current.plan === null || current.planDigest === null) return { adopted: false, why: `release ${current.number} has no recorded port and plan` };
    const plan = current.plan as RunPlan;
    const logger = new Logger((line) => this.logs.push(app.id, formatLogLine(line)));
    const taken = await this.takeOver(app, current, logger);
    if ('problem' in taken) return { adopted: false, why: taken.problem };
    const upstream = taken.upstream ?? `127.0.0.1:${current.port}`;
    const health = await new HttpHealthChecker().check({ baseUrl: `http://${upstream}`, check: { ...plan.healthCheck, port: current.port } }, logger);
    if (!health.ok) {
      await taken.running.stop().catch(() => undefined);
      return {
        adopted: false,
        why: `release ${current.number} runs but its health check failed (${health.results.map((r) => `GET ${r.path}: ${r.status}`).join(', ') || health.problem?.message || 'no answer'})`,
      };
    }
    this.serving.set(app.id, { release: current.number, port: current.port, upstream, plan, deployed: taken.running });
    // Allowed again: a release started by a runplan-host of the old app_ names has no certificate permission for its app- name yet.
    await this.options.edge.serveApp(appHostName(this.options.settings, app.id), { wait: false });
    await this.options.upstreams.point(app.id, upstream);
    out(`==> ${app.name}: release ${current.number} taken over as it runs${taken.since ? ` (started ${taken.since})` : ''}`);
    return { adopted: true };
  }

  /** The release found running where this engine keeps it: the local supervision tree, or the swarm's services. */
  private async takeOver(app: AppRecord, current: ReleaseRecord, logger: Logger): Promise<{ running: RunningRelease; since?: string; upstream?: string } | { problem: string }> {
    const { tree, engine, tenancy } = this.options;
    if (tree === undefined) {
      if (engine.takeOver === undefined) return { problem: 'this engine keeps no release apart from serve' };
      const found = await engine.takeOver(app.id, current.planDigest as string);
      if ('problem' in found) return { problem: `release ${current.number} could not be taken over: ${found.problem}` };
      // A swarm keeps its services by itself: serve leaving changes nothing there.
      return { running: { stop: found.stop, detach: async () => undefined } };
    }
    const runId = runIdOf(app.id, current.number);
    if (!(await this.runs()).includes(runId)) return { problem: `release ${current.number} does not run (the machine restarted, or it was stopped)` };
    const sandbox = await tenancy?.sandbox(app.id);
    const taken = await adoptRun({ tree, runId, logger, ...(sandbox ? { sandbox } : {}) });
    if ('problem' in taken) {
      await this.discard(runId);
      return { problem: `release ${current.number} could not be taken over: ${taken.problem}` };
    }
    // In its own namespace: found again by the path its run recorded (the namespace's name says its address).
    const path = taken.record.scope?.network?.path;
    const namespace = path === undefined ? undefined : (await tenancy?.networks?.existing())?.find((n) => n.path === path);
    if (path !== undefined && namespace === undefined) {
      await taken.running.stop().catch(() => undefined);
      return { problem: `release ${current.number} could not be taken over: its network namespace ${path} is gone` };
    }
    // Its links opened again: the walls' table was made anew, empty, at serve's start (connections open meanwhile stay).
    const unlink: (() => Promise<void>)[] = [];
    if (namespace) {
      for (const addon of await this.options.store.linksOf(app.id)) if (/^\d+$/.test(addon.config.port ?? '')) unlink.push(await namespace.allow({ port: Number(addon.config.port) }));
    }
    // Its port stays closed to the other applications: the table was made again with it (serve's start).
    const unguard = sandbox && current.port !== null && namespace === undefined ? await tenancy?.guard.guard(current.port, sandbox.user.uid) : undefined;
    const give = current.port === null || namespace !== undefined ? undefined : this.ports.hold(current.port);
    const detach = taken.running.detach;
    return {
      running: {
        stop: () =>
          taken.running.stop().finally(async () => {
            await unguard?.();
            give?.();
            for (const close of unlink) await close();
            await namespace?.remove();
          }),
        ...(detach ? { detach: () => detach() } : {}),
      },
      since: taken.record.startedAt,
      ...(namespace ? { upstream: `${namespace.address}:${RELEASE_PORT}` } : {}),
    };
  }

  /**
   * The runs of the tree no application serves with (a deploy cut short, a drain serve died in, a release
   * that could not be taken over): stopped and removed, serve starting, once every current one was adopted.
   * `found`: the runs there were before any deploy of this serve began (a push may be deploying meanwhile).
   */
  async discardOthers(found: readonly string[], out: (line: string) => void): Promise<void> {
    const serving = new Set([...this.serving.entries()].map(([appId, s]) => runIdOf(appId, s.release)));
    for (const runId of found) {
      if (serving.has(runId)) continue;
      out(`==> stopping ${runId}: no application serves with it any more`);
      await this.discard(runId);
    }
  }

  /** The runs the supervision tree has (none without one). */
  async runs(): Promise<string[]> {
    return (await this.options.tree?.runs()) ?? [];
  }

  private async discard(runId: string): Promise<void> {
    const { tree } = this.options;
    if (tree === undefined) return;
    await discardRun(tree, runId, new Logger(() => undefined)).catch(() => undefined);
  }
}
