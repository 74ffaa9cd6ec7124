import { readFileSync } from 'node:fs';
import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';

/** What one confined phase of an application may use: the instance it was planned for. */
export interface ResourceLimits {
  /** CPU time: this many CPUs' worth in every period (a quota, not a pinning). */
  readonly cpus: number;
  readonly memoryMb: number;
  /** Processes and threads together (the kernel's pids controller counts tasks). */
  readonly processes: number;
  /** The application's own disk (its workspace), when it has one. */
  readonly diskMb?: number;
}

/** What the limits did since the scope was made: the kernel's own counters. */
export interface LimitCounters {
  /** Processes the kernel killed because the scope used all its memory. */
  readonly oomKills: number;
  /** Times a fork or a new thread was refused because the scope had `processes` tasks. */
  readonly processLimitHits: number;
  /** Whether the application's own disk is full now (a reading, not a counter). */
  readonly diskFull?: boolean;
}

type Controller = 'memory' | 'pids' | 'cpu';
const CONTROLLERS: readonly Controller[] = ['memory', 'pids', 'cpu'];

/** Where each controller is mounted: a cgroup v1 hierarchy of its own, or the unified (v2) one. */
export interface CgroupLayout {
  readonly controllers: Readonly<Record<Controller, { readonly mount: string; readonly version: 1 | 2 }>>;
}

/**
 * The cgroup mounts of this machine, from /proc/self/mountinfo: each controller
 * in its v1 hierarchy when it has one (a hybrid machine, like this one, keeps
 * memory, pids and cpu there), else in the cgroup2 mount whose
 * cgroup.controllers lists it. Undefined when one of the three is nowhere.
 */
export function cgroupLayout(mountinfo: string, v2Controllers: (mount: string) => readonly string[]): CgroupLayout | undefined {
  const found: Partial<Record<Controller, { mount: string; version: 1 | 2 }>> = {};
  const unified: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    if (before === undefined || after === undefined) continue;
    const mount = unescapeMountPath(before.split(' ')[4] ?? '');
    const [fstype, , superOptions = ''] = after.split(' ');
    if (fstype === 'cgroup') {
      for (const option of superOptions.split(',')) if ((CONTROLLERS as readonly string[]).includes(option)) found[option as Controller] ??= { mount, version: 1 };
    } else if (fstype === 'cgroup2') unified.push(mount);
  }
  for (const mount of unified) {
    const available = v2Controllers(mount);
    for (const c of CONTROLLERS) if (!found[c] && available.includes(c)) found[c] = { mount, version: 2 };
  }
  if (!CONTROLLERS.every((c) => found[c])) return undefined;
  return { controllers: found as CgroupLayout['controllers'] };
}

// mountinfo escapes space, tab, newline and backslash as octal.
function unescapeMountPath(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

let machineLayout: CgroupLayout | undefined | null = null;

/** This machine's layout, read once per process. */
export function machineCgroups(): CgroupLayout | undefined {
  if (machineLayout === null) {
    let mountinfo = '';
    try {
      mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
    } catch {}
    machineLayout = cgroupLayout(mountinfo, (mount) => {
      try {
        return readFileSync(join(mount, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
      } catch {
        return [];
      }
    });
  }
  return machineLayout;
}

/** A cgroup name: letters, digits, '.', '_' and '-' (never '..', never a separator). */
const NAME = /^(?!\.\.?$)[A-Za-z0-9._-]{1,100}$/;

/** The kernel's period for CPU quotas (100 ms, its default). */
const CPU_PERIOD_US = 100_000;

/**
 * One cgroup (in each hierarchy that holds one of its controllers) with limits:
 * every process of a build or of a release joins it before it runs the
 * application's code, so the limits hold for all it starts, and the kernel's
 * counters say when a limit struck.
 */
export class CgroupScope {
  private constructor(
    private readonly layout: CgroupLayout,
    /** The directory of the scope in each distinct mount. */
    private readonly dirs: ReadonlyMap<string, string>,
    readonly limits: ResourceLimits,
    private readonly start: LimitCounters,
  ) {}

  /** Makes `path` (names under each hierarchy's root) with `limits`. A scope of that path left by a killed run is emptied and used again. */
  static async create(layout: CgroupLayout, path: readonly string[], limits: ResourceLimits): Promise<CgroupScope> {
    checkNames(path);
    const dirs = new Map<string, string>();
    for (const { mount, version } of Object.values(layout.controllers)) {
      if (dirs.has(mount)) continue;
      let dir = mount;
      for (const name of path) {
        // cgroup v2 gives a child's controllers only where its parent enables them.
        if (version === 2) await writeFile(join(dir, 'cgroup.subtree_control'), '+memory +pids +cpu').catch(() => undefined);
        dir = join(dir, name);
        await mkdir(dir).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
        });
      }
      dirs.set(mount, dir);
    }
    const scope = new CgroupScope(layout, dirs, limits, { oomKills: 0, processLimitHits: 0 });
    await scope.killAll();
    await scope.apply(limits);
    return new CgroupScope(layout, dirs, limits, await scope.counters());
  }

  /**
   * The scope of `path` as a run that still lives in it made it (a lasting run taken over by
   * another program): nothing in it is killed and its limits stay; its counters count from now.
   * Undefined when it is not there (the machine restarted).
   */
  static async attach(layout: CgroupLayout, path: readonly string[], limits: ResourceLimits): Promise<CgroupScope | undefined> {
    checkNames(path);
    const dirs = new Map<string, string>();
    for (const { mount } of Object.values(layout.controllers)) dirs.set(mount, join(mount, ...path));
    for (const dir of dirs.values())
      if (
        !(await access(dir).then(
          () => true,
          () => false,
        ))
      )
        return undefined;
    const scope = new CgroupScope(layout, dirs, limits, { oomKills: 0, processLimitHits: 0 });
    return new CgroupScope(layout, dirs, limits, await scope.counters());
  }

  /** The files a process writes its pid into to join the scope (one per hierarchy). */
  get procsFiles(): string[] {
    return [...this.dirs.values()].map((dir) => join(dir, 'cgroup.procs'));
  }

  /** The scope's directories, one per hierarchy (what a sandbox shows the application of the cgroup file system). */
  get directories(): string[] {
    return [...this.dirs.values()];
  }

  private dir(controller: Controller): string {
    return this.dirs.get(this.layout.controllers[controller].mount) as string;
  }

  private version(controller: Controller): 1 | 2 {
    return this.layout.controllers[controller].version;
  }

  private async apply(limits: ResourceLimits): Promise<void> {
    const bytes = String(limits.memoryMb * 1024 * 1024);
    const quota = Math.round(limits.cpus * CPU_PERIOD_US);
    const memory = this.dir('memory');
    const pids = this.dir('pids');
    const cpu = this.dir('cpu');
    if (this.version('memory') === 1) {
      await writeFile(join(memory, 'memory.limit_in_bytes'), bytes);
      // With swap accounting, memory plus swap too: swapping would only slow the limit down.
      await writeFile(join(memory, 'memory.memsw.limit_in_bytes'), bytes).catch(() => undefined);
    } else {
      await writeFile(join(memory, 'memory.max'), bytes);
      await writeFile(join(memory, 'memory.swap.max'), '0').catch(() => undefined);
    }
    await writeFile(join(pids, 'pids.max'), String(limits.processes));
    if (this.version('cpu') === 1) {
      await writeFile(join(cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
      await writeFile(join(cpu, 'cpu.cfs_quota_us'), String(quota));
    } else {
      await writeFile(join(cpu, 'cpu.max'), `${quota} ${CPU_PERIOD_US}`);
    }
  }

  /** The kernel's counters now, less those found when the scope was made. */
  async counters(): Promise<LimitCounters> {
    const memoryFile = this.version('memory') === 1 ? 'memory.oom_control' : 'memory.events';
    const [memory, pids] = await Promise.all([readFile(join(this.dir('memory'), memoryFile), 'utf8').catch(() => ''), readFile(join(this.dir('pids'), 'pids.events'), 'utf8').catch(() => '')]);
    return {
      oomKills: counter(memory, 'oom_kill') - this.start.oomKills,
      processLimitHits: counter(pids, 'max') - this.start.processLimitHits,
    };
  }

  /** The pids in the scope now. */
  async members(): Promise<number[]> {
    const text = await readFile(join(this.dir('pids'), 'cgroup.procs'), 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((l) => l !== '')
      .map(Number);
  }

  /** SIGKILL to every process of the scope until none is left (a fork between two reads is killed at the next). */
  async killAll(): Promise<void> {
    for (let round = 0; round < 50; round++) {
      const pids = await this.members();
      if (pids.length === 0) return;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Kills what is left and removes the scope's directories (their parents stay: other scopes of the application use them). */
  async remove(): Promise<void> {
    await this.killAll();
    for (const dir of this.dirs.values()) {
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          await rmdir(dir);
          break;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') break;
          // A killed process is still leaving the cgroup.
          if (code !== 'EBUSY' || attempt === 19) throw error;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      }
    }
  }
}

function checkNames(path: readonly string[]): void {
  for (const name of path) {
    if (!NAME.test(name)) throw CoreErrors.HOST_INVALID_SETTING.create({ message: `${JSON.stringify(name.slice(0, 60))} cannot name a cgroup (letters, digits, ".", "_" and "-").` });
  }
}

/** `name N` in a flat-keyed cgroup file (memory.oom_control, memory.events, pids.events). */
function counter(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** Whether this process may make cgroups here: root, with the three controllers mounted. */
export async function cgroupsUsable(layout: CgroupLayout | undefined = machineCgroups()): Promise<boolean> {
  if (!layout || process.getuid?.() !== 0) return false;
  try {
    for (const { mount } of Object.values(layout.controllers)) await access(mount, 2);
    return true;
  } catch {
    return false;
  }
}
