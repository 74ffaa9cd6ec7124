import { decide } from '../plan/decide.js';
import { CoreErrors } from '../errors/core-errors.js';
import { quoteExcerpt } from '../errors/excerpt.js';
import type { Decision, PlannedProcess, RestartPolicy } from '../plan/schema.js';
import type { UserCommandEnvironment } from './resolve-hooks.js';

const NUMBERED = /^CC_WORKER_COMMAND_(\d+)$/;
const PREFIX = 'CC_WORKER_COMMAND_';

/** CC_WORKER_RESTART's values, as the plan's restart policies. */
const POLICIES: Readonly<Record<string, RestartPolicy['policy']>> = { always: 'always', 'on-failure': 'on-failure', no: 'never' };
const DEFAULT_WORKER_RESTART = 'on-failure';
const DEFAULT_WORKER_RESTART_DELAY_S = 1;
const MAX_WORKER_RESTART_DELAY_S = 3_600;
const WORKER_STOP_GRACE_MS = 10_000;
/** A worker that ran this long without exiting is a healthy one: its next exit is not part of a crash loop. */
const WORKER_RESET_AFTER_MS = 30_000;

export interface ResolvedWorkers {
  readonly processes: PlannedProcess[];
  readonly decisions: Decision[];
}

/**
 * The workers the application set: CC_WORKER_COMMAND, then every
 * CC_WORKER_COMMAND_<n> ordered by n (numerically, so _10 follows _9), each a
 * supervised process beside web with the application's environment, restarted
 * per CC_WORKER_RESTART after CC_WORKER_RESTART_DELAY seconds (a fixed delay,
 * as the service's restart delay is). An empty value counts as unset; a suffix
 * other than a number is refused, not ignored: the worker would never run.
 */
export function resolveWorkers(variables: ReadonlyMap<string, string>, commands: UserCommandEnvironment, taken: ReadonlySet<string>): ResolvedWorkers {
  const found: Array<{ variable: string; script: string; n: number; name: string }> = [];
  for (const [name, value] of variables) {
    const m = NUMBERED.exec(name);
    if (!m && name.startsWith(PREFIX)) {
      throw CoreErrors.WORKER_COMMAND_NAME_INVALID.create({
        message: `${name} is not a worker variable: after ${PREFIX} the service allows only a number, so its command would never run.`,
        variable: name,
      });
    }
    if (value.trim() === '') continue;
    if (name === 'CC_WORKER_COMMAND') found.push({ variable: name, script: value, n: -1, name: 'worker' });
    else if (m) found.push({ variable: name, script: value, n: Number(m[1]), name: `worker-${m[1]}` });
  }
  found.sort((a, b) => a.n - b.n || a.variable.localeCompare(b.variable));
  const restart = workerRestart(variables);
  const processes = found.map((w): PlannedProcess => {
    if (taken.has(w.name)) {
      throw CoreErrors.PLAN_INVALID.create({ message: `the buildpack already plans a process named "${w.name}", the name of the worker of ${w.variable}.`, variable: w.variable });
    }
    return {
      name: w.name,
      role: 'worker',
      command: { kind: 'shell', script: w.script },
      cwd: '.',
      env: { ...commands.env },
      pathPrepend: [...commands.pathPrepend],
      port: null,
      restart: restart.policy,
      stopGraceMs: WORKER_STOP_GRACE_MS,
    };
  });
  const decisions: Decision[] = [];
  if (processes.length > 0) {
    decisions.push(
      decide({
        id: 'workers',
        subject: 'Workers',
        requests: [{ source: found.map((w) => `env ${w.variable}`).join(', '), value: found.map((w) => w.variable).join(', ') }],
        resolved: found.map((w) => `${w.name} (${w.variable})`).join(', '),
        reason:
          'each CC_WORKER_COMMAND… is a supervised process beside web, run with /bin/sh -c in the application folder with its environment; CC_WORKER_COMMAND first, then CC_WORKER_COMMAND_<n> ordered by n',
      }),
    );
  }
  if (processes.length > 0 || restart.set) decisions.push(restart.decision(processes.length));
  return { processes, decisions };
}

function workerRestart(variables: ReadonlyMap<string, string>): { policy: RestartPolicy; set: boolean; decision(workers: number): Decision } {
  const rawPolicy = variables.get('CC_WORKER_RESTART')?.trim() || undefined;
  const rawDelay = variables.get('CC_WORKER_RESTART_DELAY')?.trim() || undefined;
  const policy = POLICIES[rawPolicy ?? DEFAULT_WORKER_RESTART];
  if (policy === undefined) {
    throw CoreErrors.WORKER_RESTART_INVALID.create({
      message: `CC_WORKER_RESTART=${quoteExcerpt(rawPolicy as string)} is not a restart policy: the service accepts always, on-failure (the default) or no.`,
      variable: 'CC_WORKER_RESTART',
    });
  }
  let delayS = DEFAULT_WORKER_RESTART_DELAY_S;
  if (rawDelay !== undefined) {
    delayS = /^\d{1,5}$/.test(rawDelay) ? Number(rawDelay) : Number.NaN;
    if (!(delayS <= MAX_WORKER_RESTART_DELAY_S)) {
      throw CoreErrors.WORKER_RESTART_DELAY_INVALID.create({
        message: `CC_WORKER_RESTART_DELAY=${quoteExcerpt(rawDelay)} is not a whole number of seconds from 0 to ${MAX_WORKER_RESTART_DELAY_S}.`,
        variable: 'CC_WORKER_RESTART_DELAY',
      });
    }
  }
  const delayMs = delayS * 1000;
  const meaning = { always: 'restarted whenever it exits', 'on-failure': 'restarted when it exits with a non-zero status or is killed by a signal', never: 'never restarted' }[policy];
  return {
    policy: { policy, initialDelayMs: delayMs, maxDelayMs: delayMs, resetAfterMs: WORKER_RESET_AFTER_MS },
    set: rawPolicy !== undefined || rawDelay !== undefined,
    decision: (workers) =>
      decide({
        id: 'workers.restart',
        subject: 'Worker restart policy',
        requests: [
          {
            source: [rawPolicy === undefined ? 'default' : 'env CC_WORKER_RESTART', rawDelay === undefined ? 'default' : 'env CC_WORKER_RESTART_DELAY'].join(', '),
            value: rawPolicy === undefined && rawDelay === undefined ? null : [rawPolicy ?? '', rawDelay ?? ''].filter(Boolean).join(', '),
          },
        ],
        resolved: `${policy} after ${delayS} s`,
        reason:
          workers === 0
            ? 'no CC_WORKER_COMMAND… is set: the policy applies to no process'
            : `each worker is ${meaning}, ${delayS} s after it stopped (a fixed delay: CC_WORKER_RESTART_DELAY, default ${DEFAULT_WORKER_RESTART_DELAY_S} s); CC_WORKER_RESTART=${rawPolicy ?? DEFAULT_WORKER_RESTART}${rawPolicy === undefined ? ' (the default)' : ''}`,
      }),
  };
}
