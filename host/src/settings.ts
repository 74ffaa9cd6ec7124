import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from 'runplan/process';
import { HostErrors } from './errors.js';
import { appLabel } from './git/app-id.js';
import type { HostPaths } from './paths.js';

/** Where releases run: this machine's processes, or the services of a Docker swarm (host/src/deploy/release-engines.ts). */
export type HostEngine = 'local' | 'swarm';
export const HOST_ENGINES: readonly HostEngine[] = ['local', 'swarm'];

/** What `runplan-host init` chose: where the host answers, and as whom pushes arrive. */
export interface HostSettings {
  /** Applications answer at https://app-<uuid>.<domain>:<httpsPort>/ (their id with `-` for `_`), and at their custom domains. */
  readonly domain: string;
  /** The address sshd and the edge listen on: 127.0.0.1 for a host tried on one machine, 0.0.0.0 to serve others. */
  readonly listenAddress: string;
  readonly sshPort: number;
  readonly httpsPort: number;
  readonly httpPort: number;
  /** The account git pushes log in as (the specification: `git`). */
  readonly sshUser: string;
  /** How long a replaced release keeps answering the requests it has, before it is stopped. */
  readonly drainMs: number;
  /**
   * The instance each application is planned for (runplan sizes Node's heap,
   * Puma's workers and the JVM's memory by it): one machine runs many
   * applications, so none is sized for the whole machine.
   */
  readonly instance: { readonly cpus: number; readonly memoryMb: number };
  /**
   * The dedicated build instance an application gets when its Information
   * option is on (advised for webpacker, whose build needs much memory at
   * start): runplan sizes the build's tools for it, the processes for `instance`.
   */
  readonly buildInstance: { readonly cpus: number; readonly memoryMb: number };
  /**
   * runplan's cache (downloaded runtimes, the layer cache) when it is not the data
   * folder's `runplan/cache`: on another disk, or shared by several hosts of one machine.
   */
  readonly cacheDir?: string;
  /**
   * With the local engine: `own` (what init writes), each release in its own
   * network namespace listening on 0.0.0.0:8080 (docs/design/network-per-release.md);
   * `shared` (and unset, a host made before init wrote it), each on a loopback
   * port of the machine's network.
   */
  readonly releaseNetwork?: ReleaseNetworkMode;
  /**
   * With the local engine: each application's workspace (its builds and the
   * files it writes there) on a disk of its own of this many MiB, a hard limit
   * (docs/security.md, "Disk space"); init writes LOCAL_WALLS' size. Unset: the
   * host's disk, without a limit.
   */
  readonly diskMb?: number;
  /**
   * The storage add-ons' Ceph cluster: `osdMb`, the size of its one OSD's sparse file
   * (default DEFAULT_OSD_MB of host/src/addons/ceph-cluster.ts), fixed when the
   * cluster is made with the first storage add-on.
   */
  readonly storage?: { readonly osdMb?: number };
  /** Where releases run (default local). */
  readonly engine: HostEngine;
  /** With the swarm engine: the Docker engine, a manager of the swarm (default: DOCKER_HOST of serve, else the local socket). */
  readonly dockerHost?: string;
  /**
   * The names applications had before, `app_<uuid>.<domain>` (an `_` is no letter of a DNS host name), answered
   * with a permanent redirect (308) to their `app-<uuid>` name; false: not answered at all (the unknown host's 404).
   */
  readonly redirectOldAppNames: boolean;
  /**
   * Certificates from an ACME certificate authority (Let's Encrypt by default) instead of the edge's own CA,
   * which no browser trusts: set by `init --acme-email`. Without it the edge issues every certificate itself.
   */
  readonly acme?: AcmeSettings;
}

/** The ACME account and directory the edge gets its certificates from (host/src/acme-settings.ts checks them). */
export interface AcmeSettings {
  /** The account's contact: the CA writes there about certificates that expire or are revoked. */
  readonly email: string;
  /** The CA's ACME directory URL, https:// only. */
  readonly directory: string;
  /** A PEM file of the root that signs the directory's own HTTPS certificate, for a private ACME server (pebble, a company's CA). */
  readonly caRoot?: string;
}

export type ReleaseNetworkMode = 'own' | 'shared';
export const RELEASE_NETWORK_MODES: readonly ReleaseNetworkMode[] = ['own', 'shared'];

/**
 * The walls `init` gives a new host of the local engine unless told otherwise:
 * a network per release, and a disk per application of 4 GiB (a sparse file:
 * the host's disk holds what the application wrote, plus ext4's journal).
 * Not in DEFAULT_SETTINGS: a host made before keeps how its releases run.
 */
export const LOCAL_WALLS = { releaseNetwork: 'own', diskMb: 4096 } as const satisfies Partial<HostSettings>;

export const DEFAULT_SETTINGS: HostSettings = {
  domain: 'localhost',
  listenAddress: '127.0.0.1',
  sshPort: 2222,
  httpsPort: 8443,
  httpPort: 8080,
  sshUser: 'git',
  drainMs: 5_000,
  // The service's smallest instance size (1 CPU, 1 GiB).
  instance: { cpus: 1, memoryMb: 1024 },
  // The service's build instance size for webpacker-sized builds (2 CPUs, 4 GiB).
  buildInstance: { cpus: 2, memoryMb: 4096 },
  engine: 'local',
  redirectOldAppNames: true,
};

export async function readSettings(paths: HostPaths): Promise<HostSettings> {
  let text: string;
  try {
    text = await readFile(paths.settings, 'utf8');
  } catch {
    throw HostErrors.HOST_NOT_INITIALISED.create({ message: `${paths.root} holds no runplan host (no ${paths.settings}).`, file: paths.settings });
  }
  return { ...DEFAULT_SETTINGS, ...(JSON.parse(text) as Partial<HostSettings>) };
}

export async function writeSettings(paths: HostPaths, settings: HostSettings): Promise<void> {
  // root's alone: no account of the machine (an application's, the SSH account) has anything to read there.
  await writeFileAtomic(paths.settings, `${JSON.stringify(settings, null, 2)}\n`, 0o600);
}

/** The application's default address on the edge: `app-<uuid>.<domain>`, a valid DNS host name. */
export function appHostName(settings: HostSettings, appId: string): string {
  return `${appLabel(appId)}.${settings.domain}`;
}

export function appUrl(settings: HostSettings, appId: string): string {
  return `https://${appHostName(settings, appId)}:${settings.httpsPort}/`;
}

/** The web console's address on the edge. */
export function consoleHostName(settings: HostSettings): string {
  return `console.${settings.domain}`;
}

export function consoleUrl(settings: HostSettings): string {
  return `https://${consoleHostName(settings)}:${settings.httpsPort}/`;
}

export function gitRemoteUrl(settings: HostSettings, appId: string): string {
  return `git+ssh://${settings.sshUser}@${settings.domain === 'localhost' ? '127.0.0.1' : settings.domain}:${settings.sshPort}/${appId}.git`;
}
