/**
 * Podman for the tests, with everything of its own under one temporary
 * directory: storage (--root, --runroot), its runtime and temporary files, its
 * network configuration, and a containers.conf (CONTAINERS_CONF) with the
 * ulimits this sandbox can give (it cannot raise them: NOTES.md, "Container
 * engines"). Pods use slirp4netns, so no bridge and no firewall rule is made.
 *
 * Rootful podman still makes a few things outside any directory it is given:
 * its cgroups (`libpod_parent` in each hierarchy), /run/netns (bind-mounted on
 * itself), an image-copy cache in /var/lib/containers/cache, and with an
 * image named without its registry, a lock in /var/cache/containers. remove()
 * removes those too — only those that were not there before, and cgroups and
 * /run/netns only when empty.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface PodmanResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface TestPodman {
  readonly dir: string;
  run(args: readonly string[]): Promise<PodmanResult>;
  /** Runs podman and returns its standard output; throws with its error output when it fails. */
  ok(args: readonly string[]): Promise<string>;
  /** Removes every pod and image, the storage and whatever podman made outside it; returns what is left of those. */
  remove(): Promise<string[]>;
}

const CGROUPS = '/sys/fs/cgroup';
const NETNS = '/run/netns';
const IMAGE_CACHE = '/var/lib/containers';
const ALIAS_CACHE = '/var/cache/containers';

export function podmanAvailable(): boolean {
  return ['/usr/bin/podman', '/usr/local/bin/podman'].some((p) => existsSync(p));
}

export async function startPodman(): Promise<TestPodman> {
  // Short: conmon's socket paths under it are limited to 108 bytes.
  const dir = await mkdtemp(join(tmpdir(), 'rp-pm-'));
  for (const sub of ['tmp', 'net']) await mkdir(join(dir, sub));
  await writeFile(
    join(dir, 'containers.conf'),
    [
      '[containers]',
      'default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]',
      '[engine]',
      `tmp_dir = "${dir}/tmp"`,
      `image_copy_tmp_dir = "${dir}/tmp"`,
      'events_logger = "file"',
      'cgroup_manager = "cgroupfs"',
      '[network]',
      `network_config_dir = "${dir}/net"`,
      '',
    ].join('\n'),
  );
  const before = { netns: existsSync(NETNS), imageCache: existsSync(IMAGE_CACHE), aliasCache: existsSync(ALIAS_CACHE), cgroups: new Set(libpodCgroups()) };
  const env = { ...process.env, CONTAINERS_CONF: join(dir, 'containers.conf') };
  const run = (args: readonly string[]) =>
    new Promise<PodmanResult>((resolve) => {
      execFile('podman', ['--root', join(dir, 'root'), '--runroot', join(dir, 'run'), ...args], { env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
      });
    });
  const ok = async (args: readonly string[]) => {
    const result = await run(args);
    if (result.code !== 0) throw new Error(`podman ${args.join(' ')} failed (${result.code}): ${result.stderr.trim()}`);
    return result.stdout;
  };
  return {
    dir,
    run,
    ok,
    async remove() {
      await run(['pod', 'rm', '--all', '--force', '--time', '0']);
      await run(['volume', 'rm', '--all', '--force']);
      await run(['rmi', '--all', '--force']);
      // Anything still mounted under the storage (an interrupted run), deepest first.
      const mounts = readFileSync('/proc/self/mounts', 'utf8')
        .split('\n')
        .map((l) => l.split(' ')[1] ?? '')
        .filter((m) => m.startsWith(dir))
        .sort()
        .reverse();
      for (const m of mounts) await new Promise((r) => execFile('umount', ['-l', m], r));
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
      for (const cgroup of libpodCgroups().filter((c) => !before.cgroups.has(c))) removeEmptyTree(cgroup);
      if (!before.netns && existsSync(NETNS) && readdirSync(NETNS).length === 0) {
        await new Promise((r) => execFile('umount', [NETNS], r));
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
    },
  };
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
