/**
 * podman, with everything of its own under one directory that runplan owns:
 * storage (--root, --runroot), its runtime and temporary files, its events
 * log, its network configuration, and a containers.conf (CONTAINERS_CONF) with
 * the ulimits a sandbox can give (podman's defaults raise them, which a
 * container without CAP_SYS_RESOURCE cannot: NOTES.md, "Container engines").
 * Pods use slirp4netns, so no bridge and no firewall rule is made.
 *
 * Rootful podman still makes a few things outside any directory it is given:
 * its cgroups (`libpod_parent` in each hierarchy), /run/netns (bind-mounted on
 * itself), an image-copy cache in /var/lib/containers/cache, and with an
 * image named without its registry, a lock in /var/cache/containers. remove()
 * removes those too — only those that were not there before, and cgroups and
 * /run/netns only when empty.
 */
import { existsSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { systemEnvironment } from '../process/process-env.js';
import { EngineCli, lastLine, runCommand } from './engine-cli.js';

const CGROUPS = '/sys/fs/cgroup';
const NETNS = '/run/netns';
const IMAGE_CACHE = '/var/lib/containers';
const ALIAS_CACHE = '/var/cache/containers';

/** How pods and throw-away containers get a network: slirp4netns makes no bridge and no firewall rule, and forwards host ports itself. */
export const PODMAN_NETWORK = ['--network', 'slirp4netns:port_handler=slirp4netns'] as const;

export interface PodmanOptions {
  /** The podman client; default $RUNPLAN_PODMAN, else `podman` on PATH. */
  readonly binary?: string;
  /** podman's own directory; default a new one under the system's temporary directory. Short: conmon's socket paths under it are limited to 108 bytes. */
  readonly dir?: string;
}

interface Before {
  readonly netns: boolean;
  readonly imageCache: boolean;
  readonly aliasCache: boolean;
  readonly cgroups: ReadonlySet<string>;
}

/**
 * A podman of runplan's own: its storage, runtime files, events log and
 * configuration under one directory, removed with what rootful podman leaves
 * outside it (remove()).
 */
export class PodmanCli extends EngineCli {
  private constructor(
    binary: string,
    env: NodeJS.ProcessEnv,
    /** Everything of this podman: storage, runtime files, events, configuration. */
    readonly dir: string,
    private readonly before: Before,
  ) {
    super('podman', binary, env, ['--root', join(dir, 'root'), '--runroot', join(dir, 'run')]);
  }

  /** A podman of its own under `dir`; RUNPLAN_E_ENGINE_UNAVAILABLE when there is no podman to run. */
  static async create(options: PodmanOptions = {}): Promise<PodmanCli> {
    const binary = options.binary ?? process.env.RUNPLAN_PODMAN ?? 'podman';
    const version = await runCommand(binary, ['--version'], systemEnvironment());
    if (version.code !== 0) {
      throw CoreErrors.ENGINE_UNAVAILABLE.create({
        message: `podman cannot be run (${binary}: ${version.code === 127 ? 'not found' : lastLine(version.stderr) || `exit status ${version.code}`}).`,
        fix: "Install Debian's podman (with catatonit and slirp4netns), or point RUNPLAN_PODMAN at a podman client.",
        variable: 'RUNPLAN_PODMAN',
      });
    }
    const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'rp-pm-')));
    for (const sub of ['tmp', 'net']) await mkdir(join(dir, sub), { recursive: true });
    await writeFile(
      join(dir, 'containers.conf'),
      [
        '[containers]',
        'default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]',
        '[engine]',
        `tmp_dir = "${dir}/tmp"`,
        `image_copy_tmp_dir = "${dir}/tmp"`,
        // A file under tmp_dir, not the journal: the events of this podman only, which `podman events` follows.
        'events_logger = "file"',
        'cgroup_manager = "cgroupfs"',
        '[network]',
        `network_config_dir = "${dir}/net"`,
        '',
      ].join('\n'),
    );
    const before = { netns: existsSync(NETNS), imageCache: existsSync(IMAGE_CACHE), aliasCache: existsSync(ALIAS_CACHE), cgroups: new Set(libpodCgroups()) };
    return new PodmanCli(binary, { ...systemEnvironment(), CONTAINERS_CONF: join(dir, 'containers.conf') }, dir, before);
  }

  /** Removes every pod, volume, secret and image, the storage and whatever podman made outside it; returns what is left of those. */
  async remove(): Promise<string[]> {
    const { dir, before } = this;
    await this.run(['pod', 'rm', '--all', '--force', '--time', '0']);
    await this.run(['rm', '--all', '--force', '--time', '0']);
    await this.run(['volume', 'rm', '--all', '--force']);
    await this.run(['secret', 'rm', '--all']);
    await this.run(['rmi', '--all', '--force']);
    // Anything still mounted under the storage (an interrupted run), deepest first.
    const mounts = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[1] ?? '')
      .filter((m) => m.startsWith(dir))
      .sort()
      .reverse();
    for (const m of mounts) await runCommand('umount', ['-l', m], systemEnvironment());
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    for (const cgroup of libpodCgroups().filter((c) => !before.cgroups.has(c))) removeEmptyTree(cgroup);
    if (!before.netns && existsSync(NETNS) && readdirSync(NETNS).length === 0) {
      await runCommand('umount', [NETNS], systemEnvironment());
      ignore(() => rmdirSync(NETNS));
    }
    // Only the image-copy cache podman put there (c/image's blob-info cache for root).
    if (!before.imageCache && existsSync(IMAGE_CACHE) && readdirSync(IMAGE_CACHE).every((n) => n === 'cache')) {
      await rm(IMAGE_CACHE, { recursive: true, force: true });
    }
    // The lock of the short-name alias cache, made when an image is named without its registry.
    if (!before.aliasCache && existsSync(ALIAS_CACHE) && readdirSync(ALIAS_CACHE).every((n) => n.startsWith('short-name-aliases'))) {
      await rm(ALIAS_CACHE, { recursive: true, force: true });
    }
    return [
      ...[dir, ...(before.netns ? [] : [NETNS]), ...(before.imageCache ? [] : [IMAGE_CACHE]), ...(before.aliasCache ? [] : [ALIAS_CACHE])].filter((p) => existsSync(p)),
      ...libpodCgroups().filter((c) => !before.cgroups.has(c)),
    ];
  }
}

/** The cgroups podman's cgroupfs manager makes, one per hierarchy. */
function libpodCgroups(): string[] {
  if (!existsSync(CGROUPS)) return [];
  const top = existsSync(join(CGROUPS, 'libpod_parent')) ? [join(CGROUPS, 'libpod_parent')] : [];
  const perHierarchy = readdirSync(CGROUPS)
    .map((h) => join(CGROUPS, h, 'libpod_parent'))
    .filter((p) => existsSync(p));
  return [...top, ...perHierarchy];
}

/** rmdir of a cgroup and its children, deepest first; a cgroup with processes stays. */
function removeEmptyTree(dir: string): void {
  let entries: string[] = [];
  ignore(
    () =>
      (entries = readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)),
  );
  for (const child of entries) removeEmptyTree(join(dir, child));
  ignore(() => rmdirSync(dir));
}

function ignore(action: () => unknown): void {
  try {
    action();
  } catch {
    // Busy or gone: left as it is.
  }
}
