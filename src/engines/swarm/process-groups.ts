import { CoreErrors } from '../../errors/core-errors.js';
import type { PlannedProcess, Readiness, RunPlan } from '../../plan/schema.js';

/** Processes that must run in one container: the main one (web if it is one of them) and those it waits on. */
export interface ProcessGroup {
  readonly main: PlannedProcess;
  readonly helpers: readonly PlannedProcess[];
}

function commandText(p: PlannedProcess): string {
  return [...(p.command.kind === 'exec' ? p.command.argv : [p.command.script]), ...Object.values(p.env)].join('\n');
}

/** The process that opens what `condition` waits for, told by the socket path in its command (or its port). */
function provider(plan: RunPlan, waiting: PlannedProcess, condition: Readiness): PlannedProcess {
  const others = plan.processes.filter((p) => p !== waiting);
  const found =
    condition.kind === 'http-unix-socket'
      ? others.find((p) => commandText(p).includes(condition.socket))
      : others.find((p) => p.port === condition.port || commandText(p).includes(`:${condition.port}`));
  if (!found) {
    const what = condition.kind === 'http-unix-socket' ? `the unix socket ${condition.socket}` : `port ${condition.port} on 127.0.0.1`;
    throw CoreErrors.SWARM_PROCESS_GROUP.create({
      message: `process "${waiting.name}" waits on ${what}, which does not cross containers, and no other process of the plan names it in its command: runplan cannot tell which process to run in the same swarm task.`,
      details: { process: waiting.name },
    });
  }
  return found;
}

/**
 * Splits the plan's processes into what becomes one service each. A process
 * that waits on a socket in ${RUN_DIR} or on a port of 127.0.0.1 (Ruby's nginx
 * waits on Puma) shares them with the process that opens it: those are one
 * group, one service, started by `entrypoint --group`. Every other process is a
 * group of its own.
 */
export function processGroups(plan: RunPlan): ProcessGroup[] {
  const groupOf = new Map<string, Set<PlannedProcess>>(plan.processes.map((p) => [p.name, new Set([p])]));
  const join = (a: PlannedProcess, b: PlannedProcess) => {
    const merged = new Set([...groupOf.get(a.name)!, ...groupOf.get(b.name)!]);
    for (const p of merged) groupOf.set(p.name, merged);
  };
  for (const p of plan.processes) for (const c of p.startAfter ?? []) join(p, provider(plan, p, c));
  const groups: ProcessGroup[] = [];
  const seen = new Set<Set<PlannedProcess>>();
  for (const p of plan.processes) {
    const group = groupOf.get(p.name)!;
    if (seen.has(group)) continue;
    seen.add(group);
    const members = plan.processes.filter((q) => group.has(q));
    // The process the service is about: web, else one that waits (it is what the others are for).
    const main = members.find((m) => m.role === 'web') ?? members.find((m) => (m.startAfter ?? []).length > 0) ?? p;
    groups.push({ main, helpers: members.filter((m) => m !== main) });
  }
  return groups;
}
