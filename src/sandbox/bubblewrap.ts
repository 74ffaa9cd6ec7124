/**
 * What an application sees of the machine, for bubblewrap: the machine's own
 * root read-only, with the host's private trees replaced by empty folders, a
 * private /tmp, /var/tmp and /dev/shm, and its own folders bound back
 * (read-only or writable). Pure: the argument list only.
 */
export interface MountView {
  /** Trees no application may see (a host's data folder, /root): each becomes an empty, read-only folder. */
  readonly hidden: readonly string[];
  /** Shown read-only, also inside a hidden tree (runplan's cache: the shared runtimes). */
  readonly readable: readonly string[];
  /** The application's own folders, writable (its build, its run directory). */
  readonly writable: readonly string[];
  /** The size of each private temporary file system (/tmp, /var/tmp, /dev/shm), in bytes; what they hold counts as the scope's memory. */
  readonly tmpBytes: number;
  /** The folder the command starts in. */
  readonly cwd: string;
  /** Files shown in place of the machine's, read-only (a namespace's /etc/resolv.conf). */
  readonly files?: readonly { readonly source: string; readonly target: string }[];
}

/** Folders every user may write on a Debian machine: private to the sandbox instead. */
const PRIVATE_TEMPORARY = ['/tmp', '/var/tmp', '/dev/shm'];

/** The host's homes: never an application's to read. */
export const HIDDEN_BY_DEFAULT: readonly string[] = ['/root', '/home'];

/**
 * bwrap's options for `view`, up to and including its `--`. Its own PID, IPC
 * and UTS namespaces (a /proc with only its own processes), killed with
 * its parent: runplan's process for a run of runplan's own, s6-supervise for a
 * lasting run (a supervisor that dies does not leave a second copy running
 * beside the one it starts again). The network is not bubblewrap's to make:
 * a release's own namespace (release-network.ts) is entered before bwrap runs,
 * and without one the phase shares the machine's (docs/security.md, "Tenancy").
 */
export function bubblewrapArgs(view: MountView): string[] {
  const args = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const dir of PRIVATE_TEMPORARY) args.push('--perms', '1777', '--size', String(view.tmpBytes), '--tmpfs', dir);
  const hidden = sortedByDepth(view.hidden);
  for (const dir of hidden) args.push('--perms', '0755', '--size', '4096', '--tmpfs', dir);
  // A parent before what is inside it, so that a writable folder inside a read-only one stays writable.
  const binds = [...view.readable.map((path) => ({ path, writable: false })), ...view.writable.map((path) => ({ path, writable: true }))];
  binds.sort((a, b) => depth(a.path) - depth(b.path) || Number(a.writable) - Number(b.writable));
  // bwrap makes a missing mount point's parents 0700 (root's): the user could not pass them. 0711: passed, never listed.
  const emptyRoots = [...PRIVATE_TEMPORARY, ...hidden];
  const parents = new Set<string>();
  for (const { path } of binds) {
    const parts = path.split('/').filter((p) => p !== '');
    for (let i = 1; i < parts.length; i++) {
      const dir = `/${parts.slice(0, i).join('/')}`;
      if (emptyRoots.some((root) => dir.startsWith(`${root}/`))) parents.add(dir);
    }
  }
  for (const dir of sortedByDepth([...parents])) args.push('--perms', '0711', '--dir', dir);
  for (const { path, writable } of binds) args.push(writable ? '--bind' : '--ro-bind', path, path);
  for (const { source, target } of view.files ?? []) args.push('--ro-bind', source, target);
  // Read-only once the folders bound inside them have their mount points.
  for (const dir of hidden) args.push('--remount-ro', dir);
  args.push('--chdir', view.cwd, '--');
  return args;
}

function sortedByDepth(paths: readonly string[]): string[] {
  return [...new Set(paths)].sort((a, b) => depth(a) - depth(b));
}

function depth(path: string): number {
  return path.split('/').filter((p) => p !== '').length;
}
