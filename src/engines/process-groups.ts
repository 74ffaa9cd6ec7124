import type { PlannedProcess, RunPlan } from '../plan/schema.js';

/**
 * Processes that must run side by side, sharing ${RUN_DIR}: an engine that puts
 * processes on different machines (Kubernetes, swarm) keeps each group on one
 * (one Pod), because a unix socket cannot be reached from another machine.
 */
export interface ProcessGroup {
  /** "web" for the group of the web process, else the name of its first process. */
  readonly name: string;
  /** Its processes, in the plan's order. */
  readonly processes: readonly PlannedProcess[];
  readonly web: PlannedProcess | undefined;
}

const RUN_DIR = '${RUN_DIR}';

/**
 * The process groups of a plan: a process that waits for a unix socket in
 * ${RUN_DIR} (`startAfter` of kind `http-unix-socket`, e.g. Ruby's nginx `web`
 * waiting for `puma.sock`) goes with the process serving that socket — the one
 * whose command or environment names it. When none does, the plan does not say
 * who serves the socket, and the waiter goes with every other process (one
 * group is always correct, if less scalable). Every other process is a group of
 * its own (Sidekiq).
 */
export function processGroups(plan: RunPlan): ProcessGroup[] {
  const processes = plan.processes;
  const parent = processes.map((_, i) => i);
  const find = (i: number): number => {
    if (parent[i] === i) return i;
    const root = find(parent[i] as number);
    parent[i] = root;
    return root;
  };
  const join = (a: number, b: number) => {
    parent[find(a)] = find(b);
  };
  processes.forEach((proc, i) => {
    for (const condition of proc.startAfter ?? []) {
      if (condition.kind !== 'http-unix-socket' || !condition.socket.startsWith(RUN_DIR)) continue;
      const servers = processes.map((p, j) => ({ p, j })).filter(({ p, j }) => j !== i && mentions(p, condition.socket));
      const partners = servers.length > 0 ? servers.map((s) => s.j) : processes.map((_, j) => j);
      for (const j of partners) join(i, j);
    }
  });
  const roots = [...new Set(processes.map((_, i) => find(i)))];
  return roots.map((root) => {
    const members = processes.filter((_, i) => find(i) === root);
    const web = members.find((p) => p.role === 'web');
    return { name: web ? 'web' : (members[0] as PlannedProcess).name, processes: members, web };
  });
}

/** Whether a process's command line or environment names this socket path (`unix://${RUN_DIR}/puma.sock`). */
function mentions(proc: PlannedProcess, socket: string): boolean {
  const words = proc.command.kind === 'exec' ? proc.command.argv : [proc.command.script];
  return [...words, ...Object.values(proc.env)].some((w) => w.includes(socket));
}
