import { CoreWarnings } from '../errors/core-warnings.js';
import type { PlannedProcess, PlanWarning, Readiness, RunPlan } from '../plan/schema.js';

/**
 * Processes that must run side by side — in one Pod, one swarm task, one
 * container — because one waits on what another opens where only a neighbour
 * reaches it: a unix socket in ${RUN_DIR} (Ruby's nginx waiting for Puma) or a
 * port of 127.0.0.1.
 */
export interface ProcessGroup {
  /** "web" for the group of the web process, else the name of its main process. */
  readonly name: string;
  /** Its processes, in the plan's order. */
  readonly processes: readonly PlannedProcess[];
  readonly web: PlannedProcess | undefined;
  /** The process the group is about: the web process, else one that waits (what the others are there for), else the first. */
  readonly main: PlannedProcess;
  /** The other processes of the group. */
  readonly helpers: readonly PlannedProcess[];
}

const RUN_DIR = '${RUN_DIR}';

/**
 * The process groups of a plan, the one rule every executor that spreads
 * processes applies (Kubernetes, swarm): a process whose `startAfter` waits on a
 * unix socket under ${RUN_DIR} or a port of 127.0.0.1 goes with the process that
 * opens it — the one whose command or environment names the socket or port, or
 * whose own port it is. When none does, the plan does not say who opens it, and
 * the waiter goes with every other process (one group is always correct, if
 * less scalable). Every other process is a group of its own (Sidekiq).
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
      if (!neighbourOnly(condition)) continue;
      const openers = processes.map((p, j) => ({ p, j })).filter(({ p, j }) => j !== i && opens(p, condition));
      const partners = openers.length > 0 ? openers.map((o) => o.j) : processes.map((_, j) => j);
      for (const j of partners) join(i, j);
    }
  });
  const roots = [...new Set(processes.map((_, i) => find(i)))];
  return roots.map((root) => {
    const members = processes.filter((_, i) => find(i) === root);
    const web = members.find((p) => p.role === 'web');
    const main = web ?? members.find((m) => (m.startAfter ?? []).length > 0) ?? (members[0] as PlannedProcess);
    return { name: web ? 'web' : main.name, processes: members, web, main, helpers: members.filter((m) => m !== main) };
  });
}

/** What only a process on the same machine (and, for a socket, the same ${RUN_DIR}) reaches. */
function neighbourOnly(condition: Readiness): boolean {
  return condition.kind === 'tcp-port' || condition.socket.startsWith(RUN_DIR);
}

/** Whether a process opens what `condition` waits for: it names the socket or port in its command or environment, or the port is its own. */
function opens(proc: PlannedProcess, condition: Readiness): boolean {
  const words = [...(proc.command.kind === 'exec' ? proc.command.argv : [proc.command.script]), ...Object.values(proc.env)];
  if (condition.kind !== 'tcp-port') return words.some((w) => w.includes(condition.socket));
  return proc.port === condition.port || words.some((w) => w.includes(`:${condition.port}`));
}

/**
 * The warning of an engine that runs the plan's processes in containers of
 * their own — each process group (Swarm, Kubernetes) or each process (Docker):
 * what one writes in the application's folder at run time, another never sees.
 */
export function processesApart(plan: RunPlan, engine: string, apart: 'groups' | 'processes'): PlanWarning[] {
  const units = apart === 'groups' ? processGroups(plan).map((g) => g.processes) : plan.processes.map((p) => [p]);
  if (units.length < 2) return [];
  const names = units.map((unit) => unit.map((p) => p.name).join('+'));
  return [
    CoreWarnings.ENGINE_PROCESSES_APART.create({
      message: `${engine} runs ${names.join(', ')} in containers of their own: files one of them writes in the application's folder while it runs are not seen by the others.`,
    }),
  ];
}
