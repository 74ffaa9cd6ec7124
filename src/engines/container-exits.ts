import { constants } from 'node:os';
import type { ProcessExit } from '../executor/contract.js';
import { CoreWarnings } from '../errors/core-warnings.js';
import { formatSeconds } from '../health/probes.js';
import type { Logger } from '../log/logger.js';
import { OutputTail, TAIL_LINES } from '../log/output-tail.js';
import type { RunPlan } from '../plan/schema.js';
import { CRASH_LOOP_EXITS } from '../executor/web-watch.js';
import type { EngineCli } from './engine-cli.js';

/** A container of a deployment started or exited, as its engine's events tell it. */
export interface ContainerEvent {
  /** The plan's process the container runs. */
  readonly process: string;
  readonly container: string | undefined;
  readonly action: 'start' | 'die';
  /** When, in nanoseconds since the epoch. */
  readonly timeNs: number | undefined;
  readonly exitCode: number | undefined;
}

/**
 * The exits of a deployment's containers, from its engine's events (`start`
 * and `die`, by Docker or podman): status (a status above 128 is the signal
 * that killed the process, as tini, catatonit and the engines report it),
 * restarts so far, how long the run lasted, and the container's last lines
 * (`logs --tail`).
 */
export class ContainerExits {
  stopping = false;
  private readonly listeners = new Set<(exit: ProcessExit) => void>();
  private readonly state = new Map<string, { startedNs: number | undefined; dies: number; inARow: number; running: boolean }>();

  constructor(
    private readonly engine: EngineCli,
    private readonly plan: RunPlan,
    private readonly logger: Logger,
    /** How the engine restarts a process, for the crash-loop warning. */
    private readonly backOff: string,
  ) {}

  listen(listener: (exit: ProcessExit) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  restartsOf(process: string): number {
    const s = this.state.get(process);
    return s ? Math.max(0, s.dies - (s.running ? 0 : 1)) : 0;
  }

  runningOf(process: string): boolean {
    return this.state.get(process)?.running ?? true;
  }

  async seen(event: ContainerEvent): Promise<void> {
    const spec = this.plan.processes.find((p) => p.name === event.process);
    if (!spec) return;
    const s = this.state.get(spec.name) ?? { startedNs: undefined, dies: 0, inARow: 0, running: true };
    this.state.set(spec.name, s);
    if (event.action === 'start') {
      s.startedNs = event.timeNs;
      s.running = true;
      return;
    }
    if (this.stopping) return;
    const ranMs = s.startedNs !== undefined && event.timeNs !== undefined ? Math.max(0, (event.timeNs - s.startedNs) / 1e6) : 0;
    const restarts = s.dies;
    s.dies += 1;
    s.running = false;
    s.inARow = ranMs >= spec.restart.resetAfterMs ? 1 : s.inARow + 1;
    const status = event.exitCode;
    const signal = status !== undefined && status > 128 ? (Object.entries(constants.signals).find(([, n]) => n === status - 128)?.[0] ?? null) : null;
    const willRestart = spec.restart.policy === 'always' || (spec.restart.policy === 'on-failure' && status !== 0);
    // As the local runner reports it; the engine restarts with its own back-off.
    if (willRestart && s.inARow === CRASH_LOOP_EXITS) {
      this.logger.warn(
        `${CoreWarnings.RUN_CRASH_LOOP.code}: ${spec.name} is crash-looping: ${s.inARow} exits in a row, each within ${formatSeconds(spec.restart.resetAfterMs)} of starting (last: exit status ${status ?? 'unknown'}); ${this.backOff}`,
      );
    }
    const exit: ProcessExit = {
      process: spec.name,
      role: spec.role,
      code: signal !== null || status === undefined ? null : status,
      signal,
      ranMs,
      restarts,
      inARow: s.inARow,
      willRestart,
      output: await this.lastLines(event.container),
    };
    for (const listener of this.listeners) listener(exit);
  }

  /** The container's last lines, both streams (the order between them is lost), redacted. */
  private async lastLines(container: string | undefined): Promise<string[]> {
    if (container === undefined) return [];
    const logs = await this.engine.run(['logs', '--tail', String(TAIL_LINES), container]);
    const tail = new OutputTail();
    for (const line of `${logs.stdout}\n${logs.stderr}`.split('\n')) if (line !== '') tail.push(this.logger.redact(line));
    return tail.snapshot();
  }
}
