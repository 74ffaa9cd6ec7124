import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';

/** One run of a process as the engine recorded it (a Swarm task's container). */
interface RecordedRun {
  /** Undefined while it runs. */
  readonly exitCode: number | undefined;
  /** When its container started and ended, in ms since the epoch (ended undefined while it runs). */
  readonly startedMs: number;
  readonly endedMs: number | undefined;
}

/**
 * What an engine whose processes outlive runplan's own (Swarm's services: `deploy`
 * returns once healthy) keeps of them: their lines and their runs. runplan
 * prints neither, so the suite reads them where the engine's users do.
 */
export interface EngineRecords {
  /** Both streams of every run of the process, the order between them lost. */
  lines(process: string): string[];
  /** Its runs the engine still keeps (Swarm: the last 5 tasks), oldest first. */
  runs(process: string): RecordedRun[];
}

/** What the records must show of a case, waited for while the deployment runs. */
export interface Recorded {
  /** Lines each process printed (substrings), by the plan's process name. */
  readonly lines?: Readonly<Record<string, readonly string[]>>;
  /** A process the engine restarts: at least `exits` runs that ended with `exitCode`, each next one started no sooner than `delayMs` after the last ended. */
  readonly restarts?: { readonly process: string; readonly exits: number; readonly exitCode: number; readonly delayMs: number };
}

/** Swarm's records of the deployment in the test swarm (one at a time there): `docker service logs` and the tasks' containers. */
export function swarmRecords(dockerHost: string): EngineRecords {
  const spawnDocker = (args: string[]) => spawnSync('/usr/bin/docker', args, { env: { ...process.env, DOCKER_HOST: dockerHost }, encoding: 'utf8' });
  const docker = (...args: string[]) => {
    const result = spawnDocker(args);
    if (result.status !== 0) throw new Error(`docker ${args.join(' ')}: ${result.stderr}`);
    return { stdout: result.stdout, both: `${result.stdout}\n${result.stderr}` };
  };
  // Swarm prunes a service's old tasks (and their containers) while it restarts
  // one, so an id listed a moment ago may be gone: what remains is still the record.
  const inspectRemaining = <T>(ids: string[]): T[] => {
    if (ids.length === 0) return [];
    const result = spawnDocker(['inspect', ...ids]);
    const onlyGone = result.stderr
      .split('\n')
      .filter(Boolean)
      .every((line) => /No such object/.test(line));
    if (result.status !== 0 && !onlyGone) throw new Error(`docker inspect ${ids.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout || '[]') as T[];
  };
  const service = (name: string) => {
    const found = docker('service', 'ls', '--filter', 'label=io.runplan.managed=true', '--filter', `label=io.runplan.process=${name}`, '--format', '{{.Name}}').stdout.split('\n').filter(Boolean);
    if (found.length !== 1) throw new Error(`expected one service running ${name}, found: ${found.join(', ') || 'none'}`);
    return found[0] as string;
  };
  const time = (value: string | undefined) => (value && !value.startsWith('0001-') ? Date.parse(value) : undefined);
  return {
    lines: (name) => docker('service', 'logs', '--raw', service(name)).both.split('\n').filter(Boolean),
    runs: (name) => {
      const tasks = docker('service', 'ps', '--quiet', '--no-trunc', service(name)).stdout.split('\n').filter(Boolean);
      const containers = inspectRemaining<{ Status: { ContainerStatus?: { ContainerID?: string } } }>(tasks)
        .map((t) => t.Status.ContainerStatus?.ContainerID)
        .filter((id): id is string => !!id);
      const states = inspectRemaining<{ State: { Running: boolean; ExitCode: number; StartedAt: string; FinishedAt: string } }>(containers);
      return states
        .map(({ State: s }) => ({ exitCode: s.Running ? undefined : s.ExitCode, startedMs: time(s.StartedAt) ?? 0, endedMs: s.Running ? undefined : time(s.FinishedAt) }))
        .filter((run) => run.startedMs > 0)
        .sort((a, b) => a.startedMs - b.startedMs);
    },
  };
}

/** Whether the records show everything `recorded` asks (the lines, the restarts), and what they show. */
function look(records: EngineRecords, recorded: Recorded) {
  const lines = Object.fromEntries(Object.entries(recorded.lines ?? {}).map(([name, wanted]) => [name, { wanted, found: records.lines(name) }]));
  const linesShown = Object.values(lines).every(({ wanted, found }) => wanted.every((w) => found.some((line) => line.includes(w))));
  const restarts = recorded.restarts;
  const ended = restarts ? records.runs(restarts.process).filter((run) => run.endedMs !== undefined) : [];
  const restartsShown = !restarts || ended.filter((run) => run.exitCode === restarts.exitCode).length >= restarts.exits;
  return { lines, ended, done: linesShown && restartsShown };
}

/**
 * Waits (up to a minute) until the engine's records show what the case asks,
 * then checks it: each process's lines, and a restarted process's ended runs,
 * their exit status and the delay before each next run started.
 */
export async function expectRecorded(records: EngineRecords, recorded: Recorded): Promise<void> {
  const deadline = Date.now() + 60_000;
  let seen = look(records, recorded);
  while (!seen.done && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    seen = look(records, recorded);
  }
  for (const [name, { wanted, found }] of Object.entries(seen.lines)) {
    for (const line of wanted) expect(found.join('\n'), `${name}'s lines in the engine's log`).toContain(line);
  }
  const restarts = recorded.restarts;
  if (!restarts) return;
  const runs = records.runs(restarts.process);
  const story = JSON.stringify(runs);
  expect(seen.ended.filter((run) => run.exitCode === restarts.exitCode).length, `${restarts.process}'s runs: ${story}`).toBeGreaterThanOrEqual(restarts.exits);
  // Each run after an exit started once the restart delay had passed (the engine adds its own scheduling on top).
  for (let i = 1; i < runs.length; i++) {
    const before = runs[i - 1] as RecordedRun;
    const gap = (runs[i] as RecordedRun).startedMs - (before.endedMs ?? Number.POSITIVE_INFINITY);
    expect(gap, `${restarts.process}: run ${i + 1} started ${gap} ms after run ${i} ended: ${story}`).toBeGreaterThanOrEqual(restarts.delayMs);
  }
}
