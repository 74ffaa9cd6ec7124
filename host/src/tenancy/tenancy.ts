import { createHash } from 'node:crypto';
import { AppSandbox } from 'runplan';
import type { HostPaths } from '../paths.js';
import { DEFAULT_DATA_DIR } from '../paths.js';
import type { HostSettings } from '../settings.js';
import type { HostStore } from '../store/store.js';
import { AppUsers } from './app-users.js';

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

  constructor(
    store: HostStore,
    private readonly paths: HostPaths,
    private readonly settings: HostSettings,
  ) {
    this.users = new AppUsers(store);
    this.cgroup = `runplan-host-${createHash('sha256').update(paths.root).digest('hex').slice(0, 12)}`;
  }

  /** Refuses a machine that cannot confine applications (RUNPLAN_E_HOST_SANDBOX_UNAVAILABLE), before anything is deployed. */
  static check(): Promise<void> {
    return AppSandbox.check();
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
    });
  }
}
