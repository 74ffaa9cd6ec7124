import type { LogLine } from 'runplan';

/** The phases of a deploy in their order, as the pusher's timing line names them. */
const PHASES = ['wait', 'checkout', 'plan', 'build', 'start', 'stability window', 'switch'] as const;
export type DeployPhase = (typeof PHASES)[number];

/**
 * Where the time of one deploy went, measured in `serve` and told to the pusher in
 * one line once the release serves (issue 39: push to serving is judged by its
 * sum, and only a profile says which phase to cut). The build, start and
 * stability-window boundaries are read from runplan's own events as the lines
 * pass (the first process started, the first passing health check line), so the deploy
 * flow needs no hook of its own:
 * - build: from the executor asked to build to its first process started (copy, layers, steps);
 * - start: until the first passing health check (the application boots and answers);
 * - stability window: until runplan accepted the release (the window, promotion, succeeded hooks);
 * - switch: master moved, the edge re-pointed, the release recorded.
 */
export class DeployTimings {
  private readonly spent = new Map<DeployPhase, number>();
  private current: DeployPhase | undefined;
  private since = performance.now();
  private readonly began = performance.now();

  /** `onPhase` is told each phase as it begins (serve's bring-back frees its place once the window begins). */
  constructor(private readonly onPhase: (phase: DeployPhase) => void = () => {}) {}

  /** Ends the phase under way (if any) and begins `phase`. */
  enter(phase: DeployPhase): void {
    const now = performance.now();
    if (this.current) this.spent.set(this.current, (this.spent.get(this.current) ?? 0) + now - this.since);
    const changed = this.current !== phase;
    this.current = phase;
    this.since = now;
    if (changed) this.onPhase(phase);
  }

  /** Moves on from the build to the start, and from the start to the window, as runplan's events say. */
  observe(line: LogLine): void {
    if (line.event?.type === 'process-started' && this.current === 'build') this.enter('start');
    // A passing check: a path's 200 (its event), or, with no path configured, the port's line (which carries none).
    else if (this.current === 'start' && line.origin.kind === 'health' && line.level !== 'error' && (line.event?.type !== 'health-check' || line.event.ok)) this.enter('stability window');
  }

  /** `took 4.1 s: checkout 0.05 s, plan 0.12 s, …`, the phase under way ended now. */
  describe(): string {
    this.enter(this.current ?? 'switch');
    const total = (performance.now() - this.began) / 1000;
    const parts = PHASES.filter((p) => this.spent.has(p) && !(p === 'wait' && (this.spent.get(p) ?? 0) < 5)).map((p) => `${p} ${((this.spent.get(p) ?? 0) / 1000).toFixed(2)} s`);
    return `took ${total.toFixed(2)} s: ${parts.join(', ')}`;
  }
}
