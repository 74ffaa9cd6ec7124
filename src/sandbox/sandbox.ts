import { access, readdir, rmdir } from 'node:fs/promises';
import { AppDisk, type DiskSettings, diskIsFull, diskUsage } from './app-disk.js';
import { join } from 'node:path';
import { constants } from 'node:os';
import { CoreErrors } from '../errors/core-errors.js';
import type { InstanceSize } from '../host/host-settings.js';
import { HIDDEN_BY_DEFAULT, bubblewrapArgs } from './bubblewrap.js';
import { namespaceResolver } from './resolver.js';
import { CgroupScope, cgroupsUsable, type LimitCounters, machineCgroups, type ResourceLimits } from './cgroups.js';

export type { LimitCounters, ResourceLimits };

/** A Unix user of this machine (in its passwd database), never root. */
export interface SandboxUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** The user as runplan's executors take it (process/app-user.ts's AppUser): always another than runplan's. */
interface ConfinedUser extends SandboxUser {
  readonly dropped: true;
}

/** How a host confines one application (docs/security.md, "Tenancy"). */
export interface SandboxOptions {
  /** The application's own user: its build steps, hooks and processes run as it, and nothing else of the host does. */
  readonly user: SandboxUser;
  /** Where its cgroups go, under each hierarchy's root: e.g. `['runplan-host-1a2b3c', '<app id>']` (letters, digits, ".", "_", "-"). */
  readonly cgroup: readonly string[];
  /** Trees of the host no application may see (its data folder…), beside /root and /home. */
  readonly hidden?: readonly string[];
  /** Shown read-only, also inside a hidden tree: runplan's cache, whose runtimes every build links to. */
  readonly readable?: readonly string[];
  /** The application's own disk, mounted over its workspace by the local executor (mountDisk): a hard limit of what it writes there. */
  readonly disk?: DiskSettings;
}

/** What AppSandbox.check() asks of the machine (a test gives another). */
export interface SandboxMachine {
  root(): boolean;
  executable(path: string): Promise<boolean>;
  cgroups(): Promise<boolean>;
}

const thisMachine: SandboxMachine = {
  root: () => process.getuid?.() === 0,
  executable: (path) =>
    access(path, 1).then(
      () => true,
      () => false,
    ),
  cgroups: () => cgroupsUsable(),
};

/** One confined phase: a build, or a release's processes. */
export interface SandboxPhase {
  /** Its cgroup's name (unique among the application's phases running at once). */
  readonly name: string;
  readonly limits: ResourceLimits;
  /** The application's folders it may write (they must exist). */
  readonly writable: readonly string[];
  /**
   * Its own network namespace (a release's, made by ReleaseNetworks): entered
   * as root before bubblewrap starts, so the application never holds the right
   * to change it. Without it the phase shares the machine's network.
   */
  readonly network?: { readonly path: string };
}

/** Tasks (processes and threads) per GiB of the instance, and at least: room for a busy server, never a fork loop's run of the machine. */
const TASKS_PER_GIB = 1024;

/**
 * The limits of an instance of that size: its CPUs as a quota, its memory
 * (with what its private /tmp holds), and 1,024 processes and threads per GiB
 * (at least 1,024).
 */
export function instanceLimits(instance: InstanceSize): ResourceLimits {
  return { cpus: instance.cpus, memoryMb: instance.memoryMb, processes: Math.max(TASKS_PER_GIB, TASKS_PER_GIB * Math.ceil(instance.memoryMb / 1024)) };
}

const BWRAP = '/usr/bin/bwrap';
const SETPRIV = '/usr/bin/setpriv';
const NSENTER = '/usr/bin/nsenter';

/**
 * Runs as root, and only runs programs of the host with fixed arguments: joins
 * the scope's cgroups (one cgroup.procs file per hierarchy, given as arguments
 * up to "--"), then executes the rest (bwrap). Exit 125: a cgroup could not be joined.
 */
const JOIN_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

/**
 * The walls of one application on this machine, from well-kept tools: its own
 * Unix user, bubblewrap's namespaces and mount view (Debian's `bubblewrap`),
 * util-linux's `setpriv` to drop to the user with no capability and no new
 * privileges, and the kernel's cgroups for the instance's memory, CPU and
 * process count. A host gives one to runplan's local executor per application.
 */
export class AppSandbox {
  /** The application's user, as runplan's executors take it. */
  readonly user: ConfinedUser;

  constructor(readonly options: SandboxOptions) {
    const { name, uid, gid } = options.user;
    if (uid === 0 || gid === 0 || uid === process.getuid?.()) {
      throw CoreErrors.HOST_APP_USER.create({ message: `applications must run as a user of their own, and ${name} (uid ${uid}, gid ${gid}) is root or runplan itself.` });
    }
    this.user = { name, uid, gid, dropped: true };
  }

  /**
   * Whether this machine can confine applications: root, bubblewrap and
   * setpriv installed, and the memory, pids and cpu cgroup controllers mounted.
   * Throws RUNPLAN_E_HOST_SANDBOX_UNAVAILABLE saying which is missing.
   */
  static async check(machine: SandboxMachine = thisMachine): Promise<void> {
    const missing: string[] = [];
    if (!machine.root()) missing.push('runplan runs as root (it makes users and cgroups)');
    for (const [program, pkg] of [
      [BWRAP, 'bubblewrap'],
      [SETPRIV, 'util-linux'],
    ] as const) {
      if (!(await machine.executable(program))) missing.push(`${program} (Debian's ${pkg} package)`);
    }
    if (missing.length === 0 && !(await machine.cgroups())) missing.push('the memory, pids and cpu cgroup controllers, mounted and writable (cgroup v1 or v2 under /sys/fs/cgroup)');
    if (missing.length > 0) throw CoreErrors.HOST_SANDBOX_UNAVAILABLE.create({ message: `applications cannot be confined on this machine: it lacks ${missing.join(', ')}.` });
  }

  /**
   * Removes the cgroup folders under `path` (names under each hierarchy's root,
   * e.g. a host's `['runplan-host-1a2b3c']`) once no process is left in them:
   * what a host's applications kept between their releases. One still in use stays.
   */
  static async removeCgroups(path: readonly string[]): Promise<void> {
    const layout = machineCgroups();
    if (!layout || path.length === 0) return;
    for (const mount of new Set(Object.values(layout.controllers).map((c) => c.mount))) await removeEmptyTree(join(mount, ...path));
  }

  /** Mounts the application's own disk at `workspace` (made the first time); nothing when it has none. */
  async mountDisk(workspace: string): Promise<AppDisk | undefined> {
    return this.options.disk ? AppDisk.mount(this.options.disk, workspace) : undefined;
  }

  /** Makes the phase's cgroup with its limits: every command wrapped by the scope runs in it. */
  async open(phase: SandboxPhase): Promise<SandboxScope> {
    const cgroup = await CgroupScope.create(this.layout(), [...this.options.cgroup, phase.name], phase.limits);
    return this.scope(phase, cgroup);
  }

  /**
   * The scope of a phase that still runs (a lasting run an earlier program
   * started): its cgroup as it is, nothing in it killed. Undefined when the
   * cgroup is gone (the machine restarted).
   */
  async reopen(phase: SandboxPhase): Promise<SandboxScope | undefined> {
    const cgroup = await CgroupScope.attach(this.layout(), [...this.options.cgroup, phase.name], phase.limits);
    return cgroup === undefined ? undefined : this.scope(phase, cgroup);
  }

  private layout() {
    const layout = machineCgroups();
    if (!layout) throw CoreErrors.HOST_SANDBOX_UNAVAILABLE.create({ message: 'applications cannot be confined on this machine: the memory, pids and cpu cgroup controllers are not all mounted.' });
    return layout;
  }

  private async scope(phase: SandboxPhase, cgroup: CgroupScope): Promise<SandboxScope> {
    // Only what exists can be hidden: bwrap would have to make the others in the read-only root.
    const present = async (path: string) =>
      (await access(path).then(
        () => true,
        () => false,
      ))
        ? [path]
        : [];
    const hidden = (await Promise.all([...HIDDEN_BY_DEFAULT, ...(this.options.hidden ?? []), '/sys/fs/cgroup'].map(present))).flat();
    const resolver = phase.network ? await namespaceResolver() : undefined;
    return new SandboxScope(this.user, { ...this.options, hidden }, phase, cgroup, resolver ? [resolver] : []);
  }
}

/** A build, or a release's processes, inside the application's walls. */
export class SandboxScope {
  constructor(
    /** The application's user. */
    readonly user: ConfinedUser,
    private readonly options: SandboxOptions,
    readonly phase: SandboxPhase,
    private readonly cgroup: CgroupScope,
    /** Files shown in place of the machine's (in its own network, a resolv.conf it can use). */
    private readonly files: readonly { readonly source: string; readonly target: string }[] = [],
  ) {}

  get limits(): ResourceLimits {
    const { disk } = this.options;
    return disk ? { ...this.phase.limits, diskMb: disk.megabytes } : this.phase.limits;
  }

  /**
   * The command line that runs `argv` in `cwd` inside the walls. It is started
   * by runplan as root, from `/`: the cgroups are joined and the namespaces
   * made by root's programs before any of the application's code runs, then
   * setpriv drops to the application's user for good.
   */
  command(argv: readonly string[], cwd: string): string[] {
    const { user } = this;
    const view = bubblewrapArgs({
      hidden: this.options.hidden ?? [],
      // Its own cgroups stay readable: runtimes size themselves from the limits there (the JVM, libuv).
      readable: [...(this.options.readable ?? []), ...this.cgroup.directories],
      writable: this.phase.writable,
      tmpBytes: this.phase.limits.memoryMb * 1024 * 1024,
      cwd,
      files: this.files,
    });
    const drop = [SETPRIV, `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--'];
    const network = this.phase.network ? [NSENTER, `--net=${this.phase.network.path}`] : [];
    return ['/bin/sh', '-c', JOIN_CGROUPS, 'runplan-join', ...this.cgroup.procsFiles, '--', ...network, BWRAP, ...view, ...drop, ...argv];
  }

  /** What the limits did since the scope was opened. */
  async counters(): Promise<LimitCounters> {
    const [counted, diskFull] = await Promise.all([this.cgroup.counters(), this.diskFull()]);
    return diskFull ? { ...counted, diskFull } : counted;
  }

  /** Whether the application's disk, where it is mounted now, is full (a serve that took the release over never mounted it itself). */
  private async diskFull(): Promise<boolean> {
    const image = this.options.disk?.image;
    const point = image ? await AppDisk.mountedAt(image) : undefined;
    return point ? diskIsFull(await diskUsage(point)) : false;
  }

  /** Kills whatever of the phase still runs and removes its cgroup. */
  close(): Promise<void> {
    return this.cgroup.remove();
  }
}

/** Removes the cgroup folder `dir` and the folders below it, deepest first; a folder with a process stays (EBUSY). */
async function removeEmptyTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) if (entry.isDirectory()) await removeEmptyTree(join(dir, entry.name));
  await rmdir(dir).catch(() => undefined);
}

/**
 * The exit as the application's own command made it: bwrap exits with 128 + N
 * when its command was killed by signal N.
 */
export function unwrapExit(code: number | null, signal: NodeJS.Signals | null): { code: number | null; signal: NodeJS.Signals | null } {
  if (signal !== null || code === null || code <= 128 || code >= 128 + 65) return { code, signal };
  const name = Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0] as NodeJS.Signals | undefined;
  return name ? { code: null, signal: name } : { code, signal };
}
