import { rm, writeFile } from 'node:fs/promises';
import { defaultRegistry } from 'runplan';
import type { Clock } from 'runplan/process';
import { AddonServers } from './addons/addon-servers.js';
import { ApiServer } from './api/api-server.js';
import { GitServer } from './api/git-server.js';
import { ApiClient } from './api/api-client.js';
import { ConsoleServer } from './console/console-server.js';
import { Releases } from './deploy/releases.js';
import { localEngine, swarmEngine } from './deploy/release-engines.js';
import { AppUpstreams } from './edge/app-upstreams.js';
import { CaddyEdge } from './edge/caddy-edge.js';
import { gitShellCommand, procReceiveHookCommand } from './git/commands.js';
import { installProgram, makeDataFolders, readApiToken } from './host-files.js';
import type { HostPaths } from './paths.js';
import { HostService } from './service.js';
import { Tenancy } from './tenancy/tenancy.js';
import { consoleHostName, consoleUrl, readSettings } from './settings.js';
import { Sshd } from './ssh/sshd.js';
import { ensureSshUser } from './ssh/ssh-user.js';
import { refuseWhileServing } from './serving.js';
import { openHostStore } from './store/open-store.js';
import { HostLog } from './supervision/host-log.js';
import { Supervisor } from './supervision/supervisor.js';

/** A running host: what `stop()` undoes, in the reverse order. */
export interface RunningHost {
  readonly service: HostService;
  stop(): Promise<void>;
}

export interface StartHostOptions {
  /** The clock of the parts' restart back-off (a test holds a restart with one of its own). */
  readonly clock?: Clock;
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
  await writeFile(paths.servePid, `${process.pid}\n`);
  const undo: (() => Promise<void>)[] = [async () => rm(paths.servePid, { force: true })];
  const stop = async () => {
    // Stopping is for good: a part that dies from now on (or is stopped below) is not started again.
    supervisor.stopRestarting();
    for (const step of undo.reverse()) await step().catch((error: Error) => log(`==> while stopping: ${error.message}`));
  };
  try {
    const store = await openHostStore(paths);
    undo.push(() => store.close());
    const interrupted = await store.failUnfinishedReleases();
    if (interrupted > 0) log(`==> ${interrupted} deploy(s) were under way when the host stopped: recorded as failed`);
    const sshUser = await ensureSshUser(settings.sshUser, paths.sshDir);
    await makeDataFolders(paths);
    // On this machine, each application its own user and walls: a machine that cannot give them is refused now.
    const tenancy = settings.engine === 'swarm' ? undefined : new Tenancy(store, paths, settings);
    if (tenancy) {
      await Tenancy.check();
      await tenancy.guard.start();
      // Undone after the releases have stopped (undo runs backwards).
      undo.push(async () => {
        await tenancy.guard.stop();
        await tenancy.removeCgroups();
      });
    }
    const engine = settings.engine === 'swarm' ? swarmEngine(settings.dockerHost) : localEngine();
    // Started before any release (apps connect to them at start) and stopped after the last one.
    const addons = new AddonServers(paths.addonsDir, { storageServer: await installProgram(paths, 'storage-server.cjs') }, engine.addonServices, supervisor);
    undo.push(() => addons.stop());
    await addons.start(await store.listAddons());
    const edge = new CaddyEdge(
      {
        dir: paths.edgeDir,
        listenAddress: settings.listenAddress,
        httpsPort: settings.httpsPort,
        httpPort: settings.httpPort,
        apps: { domain: settings.domain, upstreams: paths.upstreamsDir },
        drainMs: settings.drainMs,
      },
      { log: (line) => log(`==> ${line}`) },
    );
    const registry = defaultRegistry();
    const releases = new Releases({ store, edge, upstreams: new AppUpstreams(paths.upstreamsDir), paths, settings, registry, engine, ...(tenancy ? { tenancy } : {}) });
    const self = await installProgram(paths, 'git-program.cjs');
    const service = new HostService({
      store,
      releases,
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
    undo.push(() => supervisedSshd.stop());
    log(`==> sshd: git pushes to ${settings.sshUser}@${settings.listenAddress}:${settings.sshPort}`);
    // The edge's deaths are in each application's log too: none of them answered meanwhile.
    const supervisedEdge = await supervisor.start(edge, (line) => releases.logs.pushToAll(`==> ${line}`));
    undo.push(() => supervisedEdge.stop());
    log(`==> edge: https://<app_id>.${settings.domain}:${settings.httpsPort}/ and http on ${settings.httpPort}; its root certificate: ${edge.rootCertificate}`);
    const git = new GitServer(service);
    await git.listen(paths.gitSocket, sshUser);
    undo.push(() => git.close());
    // Releases stop before the edge and sshd do (undo runs backwards), and before the git socket closes: each push under way gets its answer
    // (refused, or accepted when master had moved already), so git reports what serves.
    undo.push(() => releases.stopAll());
    const api = new ApiServer(service, token);
    await api.listen(paths.apiSocket);
    undo.push(() => api.close());
    // The console changes nothing itself: every change is a call of the API above, as the CLI's.
    const webConsole = new ConsoleServer(new ApiClient(paths.apiSocket, token), token);
    await webConsole.listen(paths.consoleSocket);
    undo.push(() => webConsole.close());
    // The console over HTTPS only: its sign-in and session cookie never cross the wire in clear.
    await edge.setRoute(consoleHostName(settings), { socket: paths.consoleSocket }, { httpsOnly: true });
    if (engine.name === 'swarm') log(`==> releases run as services of the Docker swarm at ${settings.dockerHost ?? process.env.DOCKER_HOST ?? 'the local Docker socket'}`);
    log(`==> console: ${consoleUrl(settings)} (sign in with the API token or an organization's token: runplan-host token --org ORG)`);
    await service.bringBack(log);
    log(`==> serving (API on ${paths.apiSocket})`);
    return { service, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
