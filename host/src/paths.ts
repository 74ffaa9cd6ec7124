import { join } from 'node:path';

/** The default data folder of a host run as root (RUNPLAN_HOST_DATA or --data choose another). */
export const DEFAULT_DATA_DIR = '/var/lib/runplan-host';

/**
 * Where the host keeps everything, under one data folder:
 *
 *   settings.json      domain, ports, SSH user (written by init)
 *   api-token          the API's token (0600)
 *   store.sqlite       the store (0600)
 *   store-url          the PostgreSQL store's URL, when the store is there (0600)
 *   ssh/               sshd's config, host key, authorized_keys, pid file
 *   git/<app_id>.git   one bare repository per application, the SSH user's
 *   edge/              Caddy's config, data (its CA), admin socket, identity, and names/ (the names it may get certificates for)
 *   apps/<app_id>/     the checkout of the commit being deployed
 *   runplan/work, runplan/cache   runplan's work and cache folders (builds, layer cache)
 *   run/               the API socket, the git socket, the console's socket, serve.pid, apps/<app_id>/<address>,
 *                      domains/<name> (a custom domain: a link to its application's apps/<app_id>/),
 *                      tree/ (the releases' processes, kept by s6 apart from serve)
 *   bin/               the programs the SSH account runs (forced command, hook)
 *   addons/<kind>/     the add-on servers' data (a PostgreSQL cluster, one folder per Redis instance, storage/ceph/: the Ceph cluster)
 *   disks/<app_id>.ext4  each application's own disk (settings' diskMb), mounted over its workspace in runplan/work
 */
export interface HostPaths {
  readonly root: string;
  readonly settings: string;
  readonly apiToken: string;
  readonly store: string;
  readonly storeUrl: string;
  readonly sshDir: string;
  readonly authorizedKeys: string;
  readonly gitDir: string;
  readonly edgeDir: string;
  readonly appsDir: string;
  readonly workDir: string;
  readonly cacheDir: string;
  readonly runDir: string;
  readonly apiSocket: string;
  readonly gitSocket: string;
  /** The web console's: only the edge connects to it (https://console.<domain>). */
  readonly consoleSocket: string;
  /** One folder per application (run/apps/<app_id>/), whose one file's name is the address of the serving release: the edge dials it. */
  readonly upstreamsDir: string;
  /** One link per custom domain (run/domains/<name> → run/apps/<app_id>/): the edge serves the name as that application. */
  readonly domainsDir: string;
  readonly servePid: string;
  /** What keeps serve running (systemd, runit, s6, or nothing), recorded by serve for `status`. */
  readonly serveManager: string;
  /** The supervision tree of the local engine's releases (s6-svscan's scan directory and each release's services): they outlive serve. */
  readonly treeDir: string;
  /** The programs the host runs as other accounts (a copy of dist/git-program.cjs). */
  readonly binDir: string;
  readonly addonsDir: string;
  /** One image file per application, its own disk (settings' diskMb). */
  readonly disksDir: string;
}

export function hostPaths(root: string): HostPaths {
  const runDir = join(root, 'run');
  const sshDir = join(root, 'ssh');
  return {
    root,
    settings: join(root, 'settings.json'),
    apiToken: join(root, 'api-token'),
    store: join(root, 'store.sqlite'),
    storeUrl: join(root, 'store-url'),
    sshDir,
    authorizedKeys: join(sshDir, 'authorized_keys'),
    gitDir: join(root, 'git'),
    edgeDir: join(root, 'edge'),
    appsDir: join(root, 'apps'),
    workDir: join(root, 'runplan', 'work'),
    cacheDir: join(root, 'runplan', 'cache'),
    runDir,
    apiSocket: join(runDir, 'api.sock'),
    gitSocket: join(runDir, 'git.sock'),
    consoleSocket: join(runDir, 'console.sock'),
    upstreamsDir: join(runDir, 'apps'),
    domainsDir: join(runDir, 'domains'),
    servePid: join(runDir, 'serve.pid'),
    serveManager: join(runDir, 'serve-manager.json'),
    treeDir: join(runDir, 'tree'),
    binDir: join(root, 'bin'),
    addonsDir: join(root, 'addons'),
    disksDir: join(root, 'disks'),
  };
}

/** The repository of an application, as the SSH user sees it. */
export function repositoryPath(paths: HostPaths, appId: string): string {
  return join(paths.gitDir, `${appId}.git`);
}
