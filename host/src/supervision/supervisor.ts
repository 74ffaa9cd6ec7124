import type { RestartPolicy } from 'runplan';
import { type Clock, systemClock } from 'runplan/process';
import { DEFAULT_RESTART } from 'runplan/buildpack';

/** One run of a part: it serves from the moment start() resolved until `ended` settles. */
export interface PartRun {
  readonly pid: number | undefined;
  /** Settles with how the run ended, in words ("was killed by SIGKILL", "exited with code 1"); never rejects. */
  readonly ended: Promise<string>;
}

/** What a check from outside found: the truth `status` reports, never a flag the host keeps. */
export interface PartCheck {
  readonly up: boolean;
  /** What was checked, and what answered or did not ("the admin API answers on …"). */
  readonly detail: string;
}

/** A process `serve` starts and keeps running: the edge, sshd, each add-on server. */
export interface Part {
  /** Its key in `status --json` ("edge", "sshd", "redis:addon_…"). */
  readonly id: string;
  /** How the host's log names it: "the edge (Caddy)", "sshd", "Redis add-on addon_…". */
  readonly name: string;
  /** Starts a run and resolves once it serves (its port or socket answers); throws when it cannot. */
  start(): Promise<PartRun>;
  /** Stops what runs, by its PID, and resolves once it has exited. */
  stop(): Promise<void>;
  /** Whether it serves now, asked the way a client would (its port accepts, its admin API answers). */
  check(): Promise<PartCheck>;
  /**
   * Lets go of what runs without stopping it: no longer watched, and serve's process may exit while it
   * serves; the next serve adopts it (a part that can be found again by its identity: the edge, sshd).
   */
  detach?(): void;
}

/** A part as `status` shows it. */
export interface PartHealth extends PartCheck {
  readonly part: string;
  readonly name: string;
  readonly pid: number | null;
  /** How many times the host started it again since serve started. */
  readonly restarts: number;
  /** How its last run ended, if one did. */
  readonly lastExit: string | null;
}

export interface SupervisorOptions {
  /** Each death, restart and failed restart, as a line of the host's log. */
  readonly log: (line: string) => void;
  /** The back-off's sleeps (tests inject one that needs no real waiting, or holds a restart). */
  readonly clock?: Clock;
  /** The delays: runplan's own for a process of a plan (1 s, doubled at each exit in a row, at most 30 s) unless given. */
  readonly policy?: RestartPolicy;
}

/**
 * Keeps every part `serve` starts running: a part that dies unasked (a crash,
 * `kill -9`, the OOM killer) is started again after a back-off that doubles at
 * each death in a row up to a ceiling, for as long as the host serves, each event
 * a line of the host's log. A part that stays up for the policy's `resetAfterMs`
 * starts counting again. Once the host stops (stopRestarting(), or the part's own
 * stop()), nothing is started again.
 */
export class Supervisor {
  private readonly parts = new Set<SupervisedPart>();

  constructor(private readonly options: SupervisorOptions) {}

  /** Starts the part's first run (its failure is thrown: serve does not start without it) and supervises it from then on. */
  async start(part: Part, extraLog?: (line: string) => void): Promise<SupervisedPart> {
    const run = await part.start();
    const log = (line: string) => {
      this.options.log(line);
      extraLog?.(line);
    };
    const supervised = new SupervisedPart(part, run, {
      log,
      clock: this.options.clock ?? systemClock,
      policy: this.options.policy ?? DEFAULT_RESTART,
      forget: () => this.parts.delete(supervised),
    });
    this.parts.add(supervised);
    return supervised;
  }

  /** From now on no part is started again (serve stopping: it stops them one by one, in its own order). */
  stopRestarting(): void {
    for (const part of this.parts) part.standDown();
  }

  /** Lets go of every part that can be let go (Part.detach), leaving it running; the others stay supervised. */
  detachAll(): void {
    for (const part of this.parts) part.detach();
  }

  /** Every part's health, each checked now from outside. */
  health(): Promise<PartHealth[]> {
    return Promise.all([...this.parts].map((p) => p.health()));
  }
}

interface SupervisedOptions {
  readonly log: (line: string) => void;
  readonly clock: Clock;
  readonly policy: RestartPolicy;
  readonly forget: () => void;
}

/** One part under supervision: its current run, its restarts, and how to stop it for good. */
export class SupervisedPart {
  private run: PartRun | undefined;
  private starting: Promise<PartRun> | undefined;
  private stopping = false;
  private readonly stopped = new AbortController();
  private restarts = 0;
  private inARow = 0;
  private lastExit: string | undefined;
  private toldCeiling = false;
  private readonly watching: Promise<void>;

  constructor(
    private readonly part: Part,
    first: PartRun,
    private readonly o: SupervisedOptions,
  ) {
    this.run = first;
    this.watching = this.watch(first);
  }

  get pid(): number | undefined {
    return this.run?.pid;
  }

  async health(): Promise<PartHealth> {
    const check = await this.part.check().catch((error: Error) => ({ up: false, detail: error.message }));
    return { part: this.part.id, name: this.part.name, ...check, pid: this.run?.pid ?? null, restarts: this.restarts, lastExit: this.lastExit ?? null };
  }

  /** Restarts nothing from now on; what runs keeps running until stop(). */
  standDown(): void {
    this.stopping = true;
    this.stopped.abort();
  }

  /**
   * Stands down and lets go of the part's process, which keeps running: nothing is restarted or watched
   * any more. A part that cannot be let go (no Part.detach) is left as it is, supervised.
   */
  detach(): void {
    if (this.part.detach === undefined) return;
    const detach = this.part.detach.bind(this.part);
    this.standDown();
    this.o.forget();
    detach();
    // A restart under way ends with a run of its own: that one is let go too.
    void this.starting?.then(detach, () => undefined);
  }

  /** Stops the part for good: a restart under way is waited for and its run stopped; none follows. */
  async stop(): Promise<void> {
    this.standDown();
    this.o.forget();
    // A run being started is stopped once it has started (or has failed to).
    if (this.starting !== undefined) await this.starting.catch(() => undefined);
    await this.part.stop();
    await this.watching;
  }

  private async watch(first: PartRun): Promise<void> {
    let run: PartRun | undefined = first;
    while (run !== undefined) {
      const startedAt = this.o.clock.now();
      const why = await run.ended;
      if (this.stopping) return;
      this.run = undefined;
      this.lastExit = why;
      const ranMs = this.o.clock.now() - startedAt;
      // A death soon after a start continues a loop; one after a good run starts counting again.
      this.inARow = ranMs >= this.o.policy.resetAfterMs ? 1 : this.inARow + 1;
      if (ranMs >= this.o.policy.resetAfterMs) this.toldCeiling = false;
      run = await this.startAgain(`${why} after ${seconds(ranMs)}`);
    }
  }

  /** Starts the part again after its back-off, and again after each failed start, until a run serves or the host stops. */
  private async startAgain(reason: string): Promise<PartRun | undefined> {
    const diedAt = this.o.clock.now();
    let why = reason;
    for (;;) {
      const delay = restartDelay(this.o.policy, this.inARow);
      this.o.log(`${this.part.name} ${why}; starting it again in ${seconds(delay)} (restart ${this.restarts + 1})`);
      if (delay >= this.o.policy.maxDelayMs && !this.toldCeiling) {
        this.toldCeiling = true;
        this.o.log(
          `${this.part.name} keeps failing (${this.inARow} times in a row, each within ${seconds(this.o.policy.resetAfterMs)} of its start): it is started again every ${seconds(this.o.policy.maxDelayMs)} until a run lasts ${seconds(this.o.policy.resetAfterMs)}`,
        );
      }
      await this.o.clock.sleep(delay, this.stopped.signal);
      if (this.stopping) return undefined;
      this.restarts += 1;
      this.starting = this.part.start();
      try {
        const run = await this.starting;
        this.run = run;
        if (this.stopping) return undefined;
        this.o.log(`${this.part.name} serves again (PID ${run.pid ?? '?'}, ${seconds(this.o.clock.now() - diedAt)} after it stopped)`);
        return run;
      } catch (error) {
        if (this.stopping) return undefined;
        why = `could not be started again: ${(error as Error).message.split('\n')[0]}`;
        this.inARow += 1;
      } finally {
        this.starting = undefined;
      }
    }
  }
}

/** runplan's rule for a process of a plan: the first delay, doubled at each exit in a row, never above the ceiling. */
function restartDelay(policy: RestartPolicy, inARow: number): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(Math.max(0, inARow - 1), 30));
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** How a child process ended, in the words the host's log uses. */
export function exitWords(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
}
