import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AppDisk, AppSandbox, type ReleaseNetworks } from 'runplan';
import { runProgram } from 'runplan/process';
import { HostErrors } from '../errors.js';
import type { HostPaths } from '../paths.js';
import { DEFAULT_DATA_DIR } from '../paths.js';
import type { HostSettings } from '../settings.js';
import type { HostStore } from '../store/store.js';
import { AppUsers } from './app-users.js';
import { startHostReleaseNetworks } from './host-networks.js';
import { LoopbackGuard } from './loopback-guard.js';

/**
 * Tenants apart on this machine (docs/security.md, "Tenancy"): each application
 * its own user (AppUsers) and its own walls — runplan's AppSandbox: its build
 * and processes in bubblewrap's namespaces, where the host's data folder is an
 * empty folder but for the application's own builds and the shared cache (read
 * only), and in cgroups of its own under this host's, held to its instance.
 */
export class Tenancy {
  readonly users: AppUsers;
  /** This host's cgroup, under each hierarchy's root: two hosts of one machine (tests) never share one. */
  readonly cgroup: string;
  /** The releases' loopback ports, closed to the other applications' users. */
  readonly guard: LoopbackGuard;
  /** Each release's own network namespace, when the settings ask for it (startNetworks()). */
  networks: ReleaseNetworks | undefined;
  private readonly id: string;

  constructor(
    store: HostStore,
    private readonly paths: HostPaths,
    private readonly settings: HostSettings,
  ) {
    this.users = new AppUsers(store);
    const id = createHash('sha256').update(paths.root).digest('hex').slice(0, 12);
    this.id = id;
    this.cgroup = `runplan-host-${id}`;
    this.guard = new LoopbackGuard(`runplan_host_${id}`);
  }

  /** Refuses a machine that cannot confine applications (RUNPLAN_E_HOST_SANDBOX_UNAVAILABLE), before anything is deployed. */
  static async check(settings: Pick<HostSettings, 'releaseNetwork' | 'diskMb'>): Promise<void> {
    await AppSandbox.check();
    if (!(await runProgram('nft', ['--version']))?.ok) {
      throw HostErrors.HOST_PART_FAILED.create({
        message: "nft is not installed: the host closes each release's port to the other applications with the kernel's nftables.",
        fix: "Install Debian's nftables package (apt-get install nftables), then start serve again.",
      });
    }
    if (settings.releaseNetwork === 'own' && !(await runProgram('ip', ['-V']))?.ok) {
      throw HostErrors.HOST_PART_FAILED.create({
        message: 'ip is not installed: each release gets its own network namespace, link and address with it (settings.json: "releaseNetwork": "own").',
        fix: 'Install Debian\'s iproute2 package (apt-get install iproute2), or set "releaseNetwork": "shared" in settings.json; then start serve again.',
      });
    }
    const loopDevices = existsSync('/dev/loop-control');
    if (settings.diskMb && (!loopDevices || !(await runProgram('mkfs.ext4', ['-V']))?.ok)) {
      throw HostErrors.HOST_PART_FAILED.create({
        message: `each application's disk (settings.json: "diskMb": ${settings.diskMb}) is an ext4 file system in a file, loop-mounted: ${loopDevices ? 'mkfs.ext4 is not installed' : 'this machine has no loop devices (/dev/loop-control)'}.`,
        fix: 'Install Debian\'s e2fsprogs package (apt-get install e2fsprogs) on a machine with loop devices (modprobe loop), or remove "diskMb" from settings.json; then start serve again.',
      });
    }
  }

  /**
   * Makes this host's bridge and walls' table (again: the namespaces of the
   * releases an earlier serve started stay on it, and `held` are their links).
   */
  async startNetworks(held: Parameters<ReleaseNetworks['start']>[0] = []): Promise<ReleaseNetworks> {
    // The edge is as public to a release as to the internet: the way to another application, by its name.
    const networks = await startHostReleaseNetworks(this.id, [this.settings.httpsPort, this.settings.httpPort], held);
    this.networks = networks;
    return networks;
  }

  /** Removes the bridge and the table, once every release has stopped (serve's stop-apps). */
  async stopNetworks(): Promise<void> {
    await this.networks?.stop();
    this.networks = undefined;
  }

  /** Removes this host's cgroups once its releases have stopped (serve's stop): they are made again at the next start. */
  removeCgroups(): Promise<void> {
    return AppSandbox.removeCgroups([this.cgroup]);
  }

  async sandbox(appId: string): Promise<AppSandbox> {
    const cacheDir = this.settings.cacheDir ?? this.paths.cacheDir;
    return new AppSandbox({
      user: await this.users.ensure(appId),
      cgroup: [this.cgroup, appId],
      hidden: [...new Set([this.paths.root, DEFAULT_DATA_DIR])],
      readable: [cacheDir],
      ...(this.settings.diskMb ? { disk: { image: this.diskImage(appId), megabytes: this.settings.diskMb } } : {}),
    });
  }

  /** The image of the application's own disk. */
  diskImage(appId: string): string {
    return join(this.paths.disksDir, `${appId}.ext4`);
  }

  /** The applications' disks unmounted, their files kept (stop-apps, once every release has stopped). */
  async unmountDisks(): Promise<void> {
    for (const name of await readdir(this.paths.disksDir).catch(() => [])) {
      if (name.endsWith('.ext4')) await AppDisk.unmount(join(this.paths.disksDir, name));
    }
  }
}
