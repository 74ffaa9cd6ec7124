import { rm } from 'node:fs/promises';
import { defaultRegistry, discardRun, Logger, SupervisionTree } from 'runplan';
import type { Clock } from 'runplan/process';
import { AddonServers } from './addons/addon-servers.js';
import { ApiServer } from './api/api-server.js';
import { GitServer } from './api/git-server.js';
import { ApiClient } from './api/api-client.js';
import { ConsoleServer } from './console/console-server.js';
import { Releases, runIdOf } from './deploy/releases.js';
import { localEngine, swarmEngine } from './deploy/release-engines.js';
import { AppUpstreams } from './edge/app-upstreams.js';
import { CaddyEdge } from './edge/caddy-edge.js';
import { gitShellCommand, procReceiveHookCommand } from './git/commands.js';
import { installProgram, makeDataFolders, readApiToken } from './host-files.js';
import type { HostPaths } from './paths.js';
import { HostService } from './service.js';
import { DiskWatch } from './tenancy/disk-watch.js';
import { Tenancy } from './tenancy/tenancy.js';
import { consoleHostName, consoleUrl, readSettings } from './settings.js';
import { Sshd } from './ssh/sshd.js';
import { ensureSshUser } from './ssh/ssh-user.js';
import { recordServing, refuseWhileServing } from './serving.js';
import { forgetServiceManager, recordServiceManager, type ServiceManager } from './service-manager.js';
import { openHostStore } from './store/open-store.js';
import type { HostStore } from './store/store.js';
import { HostLog } from './supervision/host-log.js';
import { Supervisor } from './supervision/supervisor.js';

/** A running host: what `stop()` undoes, in the reverse order. */
export interface RunningHost {
  readonly service: HostService;
  /**
   * Stops serve: the API, the console, the git socket and the deploys under way. With `apps`, everything
   * else it runs or took over too — every release, the edge, sshd, the add-on servers, the supervision
   * tree, the walls' firewall table and cgroups — so that nothing is left; without, all of that goes on
   * serving and the next serve takes it over (docs/host.md, "What outlives serve").
   */
  stop(options?: { readonly apps?: boolean }): Promise<void>;
}

export interface StartHostOptions {
  /** The clock of the parts' restart back-off (a test holds a restart with one of its own). */
  readonly clock?: Clock;
  /** Take over what runs, and deploy nothing (stop-apps: the host is started only to be stopped whole). */
  readonly adoptOnly?: boolean;
  /** What stop() does by default, and what a start that fails undoes: everything it runs (true), or only serve itself. */
  readonly stopAppsOnExit?: boolean;
  /** What started serve and restarts it (systemd…), recorded for `status`; none by default. */
  readonly serviceManager?: ServiceManager | null;
}

/** One step of serve's start, undone at its stop: always (`both`), only when everything stops (`apps`), or let go (`leave`). */
interface Undo {
  readonly apps?: () => Promise<void>;
  readonly leave?: () => Promise<void>;
}

/**
 * `runplan-host serve`: the store, sshd, the edge, the API and git sockets, then
 * every application's current release brought back through the gate. sshd, the
 * edge and the add-on servers are supervised: one that dies is started again.
 * Each part started is stopped by stop(), by PID, and nothing is left.
 */
export async function startHost(paths: HostPaths, echo: (line: string) => void, options: StartHostOptions = {}): Promise<RunningHost> {
  const settings = await readSettings(paths);
  const token = await readApiToken(paths);
  await refuseWhileServing(paths);
  const hostLog = new HostLog(echo);
  const log = (line: string) => hostLog.line(line);
  const supervisor = new Supervisor({ log: (line) => log(`==> ${line}`), ...(options.clock === undefined ? {} : { clock: options.clock }) });
  await recordServing(paths);
  await recordServiceManager(paths, options.serviceManager ?? null);
  const forgetServing = async () => {
    await rm(paths.servePid, { force: true });
    await forgetServiceManager(paths);
  };
  const undo: Undo[] = [{ apps: forgetServing, leave: forgetServing }];
  const both = (step: () => Promise<void>): Undo => ({ apps: step, leave: step });
  const stop = async ({ apps = options.stopAppsOnExit ?? false }: { readonly apps?: boolean } = {}) => {
    // Stopping is for good: a part that dies from now on (or is stopped below) is not started again.
    supervisor.stopRestarting();
    for (const step of undo.reverse()) await (apps ? step.apps : step.leave)?.().catch((error: Error) => log(`==> while stopping: ${error.message}`));
  };
  try {
    const store = await openHostStore(paths);
    undo.push(both(() => store.close()));
    const interrupted = await store.failUnfinishedReleases();
    if (interrupted > 0) log(`==> ${interrupted} deploy(s) were under way when the host stopped: recorded as failed`);
    const sshUser = await ensureSshUser(settings.sshUser, paths.sshDir);
    await makeDataFolders(paths);
    // On this machine, each application its own user and walls: a machine that cannot give them is refused now.
    const tenancy = settings.engine === 'swarm' ? undefined : new Tenancy(store, paths, settings);
    // The releases' processes, kept by s6 apart from serve: an earlier serve's are taken over as they run.
    const tree = settings.engine === 'swarm' ? undefined : new SupervisionTree(paths.treeDir);
    if (tenancy && tree) {
      await Tenancy.check(settings);
      const opened = await tree.open();
      if (opened.adopted) log('==> the supervision tree of an earlier serve runs: its releases are taken over');
      // What each left (its run directory) goes; its cgroup, empty, goes with the host's at stop-apps.
      for (const runId of opened.staleRuns) await discardRun(tree, runId, new Logger(() => undefined));
      if (opened.staleRuns.length > 0) log(`==> ${opened.staleRuns.length} release(s) of an earlier serve no longer run (the machine restarted): they are deployed again`);
      // Each release's own network (kept, with the namespaces of the releases about to be taken over, when it exists).
      const networks = settings.releaseNetwork === 'own' ? await tenancy.startNetworks() : undefined;
      // The walls' table, made again with the ports of the releases about to be taken over: never a moment unguarded.
      await tenancy.guard.start(await guardedRuns(store, tenancy, await tree.runs()), networks?.subnet);
      // Undone after the releases have stopped (undo runs backwards).
      undo.push({
        apps: async () => {
          await tenancy.guard.stop();
          await tenancy.stopNetworks();
          await tenancy.removeCgroups();
          await tenancy.unmountDisks();
          await tree.close();
        },
      });
    }
    const engine = settings.engine === 'swarm' ? swarmEngine(settings.dockerHost) : localEngine();
    // Started before any release (apps connect to them at start) and stopped after the last one.
    const addons = new AddonServers(paths.addonsDir, settings.storage ?? {}, engine.addonServices, supervisor, tenancy?.networks?.subnet);
    undo.push({ apps: () => addons.stop(), leave: () => addons.detach() });
    await addons.start(await store.listAddons());
    const edge = new CaddyEdge(
      {
        dir: paths.edgeDir,
        listenAddress: settings.listenAddress,
        httpsPort: settings.httpsPort,
        httpPort: settings.httpPort,
        apps: { domain: settings.domain, upstreams: paths.upstreamsDir, domains: paths.domainsDir, redirectOldNames: settings.redirectOldAppNames },
        drainMs: settings.drainMs,
        ...(settings.acme === undefined ? {} : { acme: settings.acme }),
      },
      { log: (line) => log(`==> ${line}`) },
    );
    const registry = defaultRegistry();
    const releases = new Releases({
      store,
      edge,
      upstreams: new AppUpstreams(paths.upstreamsDir),
      paths,
      settings,
      registry,
      engine,
      ...(tenancy ? { tenancy } : {}),
      ...(tree ? { tree } : {}),
    });
    if (tenancy && settings.diskMb) {
      // A full disk is said in the application's log: its writes fail, and it may go on running.
      const watch = new DiskWatch(paths.disksDir, settings.diskMb, (appId, line) => releases.logs.push(appId, line));
      watch.start();
      undo.push(both(async () => watch.stop()));
    }
    const self = await installProgram(paths, 'git-program.cjs');
    const service = new HostService({
      store,
      releases,
      edge,
      paths,
      settings,
      registry,
      addons,
      supervisor,
      hostLog,
      sshUser,
      ...(tenancy ? { tenancy } : {}),
      gitShellCommand: (keyId) => gitShellCommand(self, keyId, paths.root),
      hookCommand: procReceiveHookCommand(self, paths.root),
    });
    await service.writeKeys();
    await service.ensureRepositories();
    await service.putBackInterruptedPushes(log);
    const sshd = new Sshd({
      dir: paths.sshDir,
      port: settings.sshPort,
      listenAddress: settings.listenAddress,
      user: settings.sshUser,
      authorizedKeysFile: paths.authorizedKeys,
      log: (line) => log(`==> ${line}`),
    });
    const supervisedSshd = await supervisor.start(sshd);
    // Left running when serve exits: a push meanwhile is refused with a coded line (HOST_NOT_SERVING) rather than a refused connection.
    undo.push({ apps: () => supervisedSshd.stop(), leave: async () => supervisedSshd.detach() });
    log(`==> sshd: git pushes to ${settings.sshUser}@${settings.listenAddress}:${settings.sshPort}`);
    // The edge's deaths are in each application's log too: none of them answered meanwhile.
    const supervisedEdge = await supervisor.start(edge, (line) => releases.logs.pushToAll(`==> ${line}`));
    // Left running when serve exits: it reaches every release without serve.
    undo.push({ apps: () => supervisedEdge.stop(), leave: async () => supervisedEdge.detach() });
    log(
      `==> edge: https://app-<uuid>.${settings.domain}:${settings.httpsPort}/ and http on ${settings.httpPort}; ${settings.acme === undefined ? `its root certificate: ${edge.rootCertificate}` : `certificates from the ACME CA ${settings.acme.directory}`}`,
    );
    // The custom domains of the store, whatever run/domains held: they are served before any release answers.
    await edge.serveDomains(await store.listDomains());
    const git = new GitServer(service);
    await git.listen(paths.gitSocket, sshUser);
    undo.push(both(() => git.close()));
    // Releases stop (or are let go) before the edge and sshd do (undo runs backwards), and before the git socket closes: each
    // push under way gets its answer (refused, or accepted when master had moved already), so git reports what serves.
    undo.push({ apps: () => releases.stopAll(), leave: () => releases.detachAll() });
    const api = new ApiServer(service, token);
    await api.listen(paths.apiSocket);
    undo.push(both(() => api.close()));
    // The console changes nothing itself: every change is a call of the API above, as the CLI's.
    const webConsole = new ConsoleServer(new ApiClient(paths.apiSocket, token), token);
    await webConsole.listen(paths.consoleSocket);
    undo.push(both(() => webConsole.close()));
    // The console over HTTPS only: its sign-in and session cookie never cross the wire in clear.
    await edge.setRoute(consoleHostName(settings), { socket: paths.consoleSocket }, { httpsOnly: true });
    if (engine.name === 'swarm') log(`==> releases run as services of the Docker swarm at ${settings.dockerHost ?? process.env.DOCKER_HOST ?? 'the local Docker socket'}`);
    log(`==> console: ${consoleUrl(settings)} (sign in with the API token or an organization's token: runplan-host token --org ORG)`);
    await service.bringBack(log, { adoptOnly: options.adoptOnly === true });
    log(`==> serving (API on ${paths.apiSocket})`);
    return { service, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The loopback ports of the releases about to be taken over, each with its application's user: the walls they keep. */
async function guardedRuns(store: HostStore, tenancy: Tenancy, runs: readonly string[]): Promise<{ port: number; uid: number }[]> {
  const entries: { port: number; uid: number }[] = [];
  for (const app of await store.listApps()) {
    if (app.currentRelease === null || !runs.includes(runIdOf(app.id, app.currentRelease))) continue;
    const release = await store.release(app.id, app.currentRelease);
    if (release?.port === null || release?.port === undefined) continue;
    entries.push({ port: release.port, uid: (await tenancy.users.ensure(app.id)).uid });
  }
  return entries;
}
