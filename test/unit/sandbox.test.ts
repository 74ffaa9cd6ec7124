import { describe, expect, it } from 'vitest';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { bubblewrapArgs } from '../../src/sandbox/bubblewrap.js';
import { reachableFromNamespace } from '../../src/sandbox/resolver.js';
import { cgroupLayout } from '../../src/sandbox/cgroups.js';
import { formatMemory } from '../../src/sandbox/limit-strike.js';
import { AppSandbox, instanceLimits, unwrapExit } from '../../src/sandbox/sandbox.js';

const mountinfo = (lines: string[]) => lines.join('\n');

describe('cgroup layout', () => {
  it('takes each controller from its v1 hierarchy on a hybrid machine, ignoring a unified mount without it', () => {
    const info = mountinfo([
      '30 25 0:26 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw',
      '33 25 0:29 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory',
      '34 25 0:30 / /sys/fs/cgroup/pids rw,relatime shared:13 - cgroup cgroup rw,pids',
      '35 25 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:14 - cgroup cgroup rw,cpu,cpuacct',
    ]);
    expect(cgroupLayout(info, () => ['hugetlb'])?.controllers).toEqual({
      memory: { mount: '/sys/fs/cgroup/memory', version: 1 },
      pids: { mount: '/sys/fs/cgroup/pids', version: 1 },
      cpu: { mount: '/sys/fs/cgroup/cpu,cpuacct', version: 1 },
    });
  });

  it('uses the unified hierarchy where it holds the controllers (a machine booted with cgroup v2 only)', () => {
    const info = mountinfo(['29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot']);
    const layout = cgroupLayout(info, (mount) => (mount === '/sys/fs/cgroup' ? ['cpuset', 'cpu', 'io', 'memory', 'pids'] : []));
    expect(Object.values(layout?.controllers ?? {})).toEqual([
      { mount: '/sys/fs/cgroup', version: 2 },
      { mount: '/sys/fs/cgroup', version: 2 },
      { mount: '/sys/fs/cgroup', version: 2 },
    ]);
  });

  it('has none when a controller is nowhere, and reads mount points with escaped characters', () => {
    expect(cgroupLayout('33 25 0:29 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory', () => [])).toBeUndefined();
    const escaped = mountinfo([
      '33 25 0:29 / /cg\\040v1/memory rw - cgroup cgroup rw,memory',
      '34 25 0:30 / /cg\\040v1/pids rw - cgroup cgroup rw,pids',
      '35 25 0:31 / /cg\\040v1/cpu rw - cgroup cgroup rw,cpu',
    ]);
    expect(cgroupLayout(escaped, () => [])?.controllers.memory.mount).toBe('/cg v1/memory');
  });
});

describe('the mount view', () => {
  const args = bubblewrapArgs({
    hidden: ['/srv/host', '/root'],
    readable: ['/srv/host/cache'],
    writable: ['/srv/host/cache/npm/app', '/srv/host/work/app', '/tmp/run/app'],
    tmpBytes: 1024,
    cwd: '/srv/host/work/app/b1',
  });

  it('hides trees before it binds what is shown of them, parents before children, and makes them read-only last', () => {
    const at = (...needle: string[]) => args.findIndex((_, i) => needle.every((n, j) => args[i + j] === n));
    expect(at('--tmpfs', '/srv/host')).toBeLessThan(at('--ro-bind', '/srv/host/cache', '/srv/host/cache'));
    expect(at('--ro-bind', '/srv/host/cache', '/srv/host/cache')).toBeLessThan(at('--bind', '/srv/host/cache/npm/app', '/srv/host/cache/npm/app'));
    expect(at('--bind', '/srv/host/work/app', '/srv/host/work/app')).toBeLessThan(at('--remount-ro', '/srv/host'));
    // The folders leading to a bound one, in a hidden tree or a private /tmp, are passable (0711), never left to bwrap's 0700.
    expect(at('--perms', '0711', '--dir', '/srv/host/work')).toBeGreaterThan(at('--tmpfs', '/srv/host'));
    expect(at('--perms', '0711', '--dir', '/tmp/run')).toBeGreaterThan(-1);
    expect(args.slice(-3)).toEqual(['--chdir', '/srv/host/work/app/b1', '--']);
  });

  it('gives the application its own PID, IPC and UTS namespaces, a private /tmp sized by its memory, and dies with its parent', () => {
    expect(args).toEqual(expect.arrayContaining(['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--proc', '/proc']));
    expect(args.join(' ')).toContain('--perms 1777 --size 1024 --tmpfs /tmp');
  });

  it("shows a release in its own network systemd-resolved's upstream resolvers when the machine's resolv.conf names its loopback stub only", () => {
    const stub = 'nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n';
    expect(reachableFromNamespace(stub)).toBe(false);
    expect(reachableFromNamespace('# none\n')).toBe(false);
    expect(reachableFromNamespace('nameserver 127.0.0.53\nnameserver 10.255.255.53\n')).toBe(true);
    const files = [{ source: '/run/systemd/resolve/resolv.conf', target: '/run/systemd/resolve/stub-resolv.conf' }];
    const view = bubblewrapArgs({ hidden: [], readable: [], writable: [], tmpBytes: 1024, cwd: '/', files });
    expect(view.join(' ')).toContain('--ro-bind /run/systemd/resolve/resolv.conf /run/systemd/resolve/stub-resolv.conf --chdir');
  });
});

describe('limits and exits', () => {
  it('sizes an instance: its CPUs and memory, and 1,024 processes per GiB (at least 1,024)', () => {
    expect(instanceLimits({ cpus: 1, memoryMb: 512 })).toEqual({ cpus: 1, memoryMb: 512, processes: 1024 });
    expect(instanceLimits({ cpus: 2, memoryMb: 4096 })).toEqual({ cpus: 2, memoryMb: 4096, processes: 4096 });
    expect(formatMemory(1024)).toBe('1 GiB');
    expect(formatMemory(1536)).toBe('1.5 GiB');
    expect(formatMemory(128)).toBe('128 MiB');
  });

  it("reads bwrap's 128 + N as the signal N that ended the command", () => {
    expect(unwrapExit(137, null)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(unwrapExit(1, null)).toEqual({ code: 1, signal: null });
    expect(unwrapExit(null, 'SIGTERM')).toEqual({ code: null, signal: 'SIGTERM' });
  });
});

describe('a machine that cannot confine applications', () => {
  it('is refused with what it lacks', async () => {
    const machine = { root: () => true, executable: async (path: string) => path !== '/usr/bin/bwrap', cgroups: async () => true };
    await expect(AppSandbox.check(machine)).rejects.toMatchObject({ code: CoreErrors.HOST_SANDBOX_UNAVAILABLE.code, message: expect.stringContaining("/usr/bin/bwrap (Debian's bubblewrap package)") });
    await expect(AppSandbox.check({ ...machine, executable: async () => true, cgroups: async () => false })).rejects.toMatchObject({ code: CoreErrors.HOST_SANDBOX_UNAVAILABLE.code });
    await expect(AppSandbox.check({ ...machine, executable: async () => true })).resolves.toBeUndefined();
  });

  it('never runs an application as root or as runplan itself', () => {
    expect(() => new AppSandbox({ user: { name: 'root', uid: 0, gid: 0 }, cgroup: ['x'] })).toThrow(expect.objectContaining({ code: CoreErrors.HOST_APP_USER.code }));
  });
});
