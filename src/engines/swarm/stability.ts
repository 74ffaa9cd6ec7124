import type { ProcessExit } from '../../executor/contract.js';
import type { Logger } from '../../log/logger.js';
import { OutputTail, TAIL_LINES } from '../../log/output-tail.js';
import type { PlannedProcess } from '../../plan/schema.js';
import type { Clock } from '../../time/clock.js';
import type { DockerCli } from '../docker-cli.js';

interface InspectedTask {
  ID: string;
  Status: { State: string; Timestamp?: string; Err?: string; ContainerStatus?: { ExitCode?: number } };
}

const ENDED = new Set(['complete', 'failed', 'shutdown', 'rejected', 'orphaned', 'remove']);
/** How a task ends by itself (its process exited, its health check failed, it could not start); `shutdown` is swarm stopping an old task on purpose. */
const EXITED = new Set(['complete', 'failed', 'rejected']);

/** How often the web service's tasks are looked at while a deployment waits on them. */
const LOOK_EVERY_MS = 500;

/** The tasks; undefined when one went between listing and inspecting them. */
async function inspectTasks(docker: DockerCli, ids: readonly string[]): Promise<InspectedTask[] | undefined> {
  if (ids.length === 0) return [];
  const result = await docker.run(['inspect', ...ids]);
  return result.code === 0 ? (JSON.parse(result.stdout) as InspectedTask[]) : undefined;
}

/** The ids of every task of `service` swarm still lists. */
export async function serviceTasks(docker: DockerCli, service: string): Promise<string[]> {
  return (await docker.run(['service', 'ps', '--quiet', '--no-trunc', service])).stdout.split('\n').filter(Boolean);
}

export interface TaskExitsOptions {
  readonly docker: DockerCli;
  /** The service of the web process. */
  readonly service: string;
  readonly web: PlannedProcess;
  /** The service's tasks before this deployment: those that ended are not its restarts. */
  readonly before: ReadonlySet<string>;
  readonly logger: Logger;
  readonly clock: Clock;
}

/**
 * The exits of the web service's tasks as RunningApp.onExit tells them to the
 * deploy flow (src/executor/web-watch.ts), which makes of them the health
 * gate's verdict and the stability window's. Swarm tells no exit: while someone
 * listens, the service's tasks are looked at every half second (and when asked:
 * look()), and each task that ends after listening began — one that ran then,
 * or one swarm started since in place of another — is told once, as an exit of
 * the web process: its container's exit status, how many tasks
 * of the service ended since the deployment began (the restarts swarm made),
 * and its last lines (`docker service logs TASK`).
 */
export class TaskExits {
  private readonly listeners = new Set<(exit: ProcessExit) => void>();
  /** The tasks already ended when listening began, and those told since. */
  private ended: Set<string> | undefined;
  /**
   * When listening began, in wall time: swarm stamps each task's last change
   * in wall time, not by runplan's injected clock. The first look can come
   * seconds later on a loaded machine; a task that ended in between is an exit
   * to tell, not part of what had ended before.
   */
  private listeningSince = 0;
  private looking: Promise<void> = Promise.resolve();
  private polling: AbortController | undefined;
  /** How many exits were told. */
  told = 0;

  constructor(private readonly options: TaskExitsOptions) {}

  subscribe(listener: (exit: ProcessExit) => void): () => void {
    this.listeners.add(listener);
    if (this.polling === undefined) {
      if (this.ended === undefined) this.listeningSince = Date.now();
      const polling = new AbortController();
      this.polling = polling;
      void this.poll(polling.signal);
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.close();
    };
  }

  /** Stops looking. */
  close(): void {
    this.polling?.abort();
    this.polling = undefined;
  }

  /** Looks at the tasks now, after any look under way. */
  look(): Promise<void> {
    // A task replaced between two commands, an engine briefly unreachable: the next look sees it.
    this.looking = this.looking.then(() => this.lookOnce()).catch(() => undefined);
    return this.looking;
  }

  private async poll(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.look();
      await this.options.clock.sleep(LOOK_EVERY_MS, signal);
    }
  }

  private async lookOnce(): Promise<void> {
    const { docker, service } = this.options;
    const tasks = await inspectTasks(docker, await serviceTasks(docker, service));
    // Not known for sure this time: the next look sees them.
    if (tasks === undefined) return;
    if (this.ended === undefined) {
      this.ended = new Set(tasks.filter((t) => ENDED.has(t.Status.State) && !this.endedSinceListening(t)).map((t) => t.ID));
    }
    for (const task of tasks) {
      if (!EXITED.has(task.Status.State) || this.ended.has(task.ID)) continue;
      this.ended.add(task.ID);
      const exit = await this.exitOf(task);
      this.told++;
      for (const listener of [...this.listeners]) listener(exit);
    }
  }

  private endedSinceListening(task: InspectedTask): boolean {
    const at = task.Status.Timestamp === undefined ? Number.NaN : Date.parse(task.Status.Timestamp);
    return Number.isFinite(at) && at >= this.listeningSince;
  }

  private async exitOf(ended: InspectedTask): Promise<ProcessExit> {
    const { docker, service, web, before, logger } = this.options;
    const all = (await serviceTasks(docker, service)).filter((id) => id === ended.ID || !before.has(id));
    const endedSince = ((await inspectTasks(docker, all)) ?? [ended]).filter((t) => ENDED.has(t.Status.State)).length;
    const logs = await docker.run(['service', 'logs', '--raw', '--tail', String(TAIL_LINES), ended.ID]);
    const tail = new OutputTail();
    for (const line of `${logs.stdout}\n${logs.stderr}`.split('\n')) if (line !== '') tail.push(logger.redact(line));
    const status = ended.Status.ContainerStatus?.ExitCode;
    return {
      process: web.name,
      role: 'web',
      code: typeof status === 'number' ? status : null,
      signal: null,
      // Swarm's own words only when the container gave no status (it never ran).
      ...(typeof status !== 'number' && ended.Status.Err ? { error: ended.Status.Err } : {}),
      ranMs: 0,
      restarts: Math.max(0, endedSince - 1),
      inARow: 1,
      willRestart: web.restart.policy !== 'never',
      output: tail.snapshot(),
    };
  }
}
