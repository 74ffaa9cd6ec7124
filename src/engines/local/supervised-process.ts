// The one spawn() outside the program runner (src/process/run-program.ts): a
// supervised process lives as long as the deployment, and its supervision reads
// the live ChildProcess (its pid and exit state for state(), the 'spawn' event
// that start() waits on, restarts of the same spec), which a runner of
// short-lived programs, resolving once they end, does not give.
import type { ChildProcess } from 'node:child_process';
import type { ProcessExit, ProcessState } from '../../executor/contract.js';
import type { Environment } from '../../env/assemble.js';
import { LineSplitter, type Logger } from '../../log/logger.js';
import { type LoweredProcess, mergeEnvironment } from '../../lowering/lower.js';
import { systemEnvironment } from '../../process/process-env.js';
import { formatSeconds } from '../../health/probes.js';
import { exitNotice } from '../../supervision/exit-notice.js';
import { type AppUser, spawnIdentity, userEnvironment } from '../../process/app-user.js';
import { CoreErrors } from '../../errors/core-errors.js';
import { OutputTail } from '../../log/output-tail.js';
import type { Clock } from '../../time/clock.js';
import { minimumRestartDelay, restartDelay } from '../../plan/restart-policy.js';
import { newTreeTag, signalTree, terminateTree, treeAlive, waitTreeGone, type ProcessTree } from '../../process/process-tree.js';
import { type SandboxScope, unwrapExit } from '../../sandbox/sandbox.js';
import { type LimitStrike, limitStrike } from '../../sandbox/limit-strike.js';

/** Where a supervised process runs, beyond its plan: its private directory, its user, its walls. */
export interface SupervisedProcessPlace {
  /** Its TMPDIR (and HOME for the unprivileged user): the run directory. */
  readonly tempDir?: string;
  readonly user?: AppUser;
  /** The release's walls: the process starts inside them, and a limit that ends it is said. */
  readonly scope?: SandboxScope;
}

/** Loaded when the first process starts: a CLI that only plans never loads it (with net and dgram, ≈ 10 ms of a cold start). */
let childProcess: typeof import('node:child_process') | undefined;

/**
 * One process of the plan, kept alive per its restart policy. It runs in its own
 * process group, so stopping reaches the children it spawned too (`npm start`
 * runs a shell that runs node), and carries a tag in its environment, so that
 * stopping also reaches descendants that left the group (process-tree.ts).
 */
export class SupervisedProcess {
  private child: ChildProcess | undefined;
  private tree: ProcessTree | undefined;
  private restarts = 0;
  private consecutiveCrashes = 0;
  private stopping = false;
  private readonly tail = new OutputTail();
  private readonly exitListeners = new Set<(exit: ProcessExit) => void>();
  private readonly stopController = new AbortController();
  private exitWaiters: Array<() => void> = [];
  private loop: Promise<void> | undefined;

  constructor(
    readonly spec: LoweredProcess,
    private readonly env: Environment,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly place: SupervisedProcessPlace = {},
  ) {}

  /**
   * Starts the process; resolves once it has been spawned. A command that cannot
   * be spawned at all (missing program or directory) fails at once: restarting
   * it could not help.
   */
  async start(): Promise<void> {
    childProcess ??= await import('node:child_process');
    const spawned = this.spawnOnce();
    const spawnError = await spawned.ready;
    if (spawnError) {
      throw CoreErrors.RUN_SPAWN_FAILED.create({
        message: `process "${this.spec.name}" could not be started: ${spawnError.message}.`,
        details: { process: this.spec.name },
      });
    }
    this.loop = this.superviseFrom(spawned);
  }

  /** Tells `listener` each exit the process makes by itself; returns the function that stops telling. */
  onExit(listener: (exit: ProcessExit) => void): () => void {
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  state(): ProcessState {
    return { name: this.spec.name, pid: this.child?.pid, restarts: this.restarts, running: this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null };
  }

  private spawnOnce(): { ready: Promise<Error | undefined>; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }> } {
    const { command } = this.spec;
    const { tempDir, user, scope } = this.place;
    const argv = command.kind === 'exec' ? command.argv : ['/bin/sh', '-c', command.script];
    const [file, ...args] = scope ? scope.command(argv, this.spec.cwd) : argv;
    const tag = newTreeTag();
    if (childProcess === undefined) throw new Error('SupervisedProcess.start() loads node:child_process before any process starts');
    const child = childProcess.spawn(file as string, args, {
      // In walls, root's programs start from / and drop to the user themselves (sandbox.ts).
      ...(scope ? { cwd: '/' } : { cwd: this.spec.cwd, ...spawnIdentity(user) }),
      // HOME of the unprivileged user: the private run directory (it has no home of its own).
      env: {
        ...mergeEnvironment({ ...systemEnvironment(process.env, tempDir), ...(tempDir === undefined ? {} : userEnvironment(user, tempDir)) }, this.env.toRecord(), this.spec),
        ...tag.env,
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.tree = child.pid === undefined ? undefined : { pgid: child.pid, tag: tag.tag };
    const emit = (stream: 'stdout' | 'stderr') => (line: string) => {
      this.tail.push(this.logger.redact(line));
      this.logger.emit({ kind: 'process', name: this.spec.name, stream }, line, stream === 'stderr' ? 'warn' : 'info');
    };
    const out = new LineSplitter(emit('stdout'));
    const err = new LineSplitter(emit('stderr'));
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stderr?.on('data', (c: Buffer) => err.push(c));
    const ready = new Promise<Error | undefined>((res) => {
      child.once('spawn', () => res(undefined));
      child.once('error', (e) => res(e));
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((res) => {
      let spawnError: Error | undefined;
      child.once('error', (e) => {
        spawnError = e;
        if (child.pid === undefined) res({ code: null, signal: null, error: e });
      });
      child.once('close', (code, signal) => {
        out.flush();
        err.flush();
        res({ code, signal, ...(spawnError ? { error: spawnError } : {}) });
      });
    });
    return { ready, exited };
  }

  private async superviseFrom(first: ReturnType<SupervisedProcess['spawnOnce']>): Promise<void> {
    let current = first;
    const { scope } = this.place;
    // The scope is the release's, made for it: its counters start at nothing.
    let counters = scope ? { oomKills: 0, processLimitHits: 0 } : undefined;
    for (;;) {
      const startedAt = this.clock.now();
      const exited = await current.exited;
      const result = scope ? { ...exited, ...unwrapExit(exited.code, exited.signal) } : exited;
      // The release's counters since the last exit: a limit that struck meanwhile ended this process.
      const now = await scope?.counters();
      const struck: LimitStrike | undefined = scope && counters && now ? limitStrike(scope.limits, counters, now) : undefined;
      // Another process of the release may be the one the limit struck: this one only if it ended as a strike ends one.
      const strike = struck?.resource === 'memory' ? (result.signal === 'SIGKILL' ? struck : undefined) : struck && (result.code !== 0 || result.signal !== null) ? struck : undefined;
      counters = now;
      // The leader is gone; children it left, in its group or daemonised, are part of the same process.
      if (this.tree !== undefined) await terminateTree(this.tree, this.spec.stopGraceMs);
      this.notifyExit();
      this.logger.event({ type: 'process-exited', process: this.spec.name, code: result.code, signal: result.signal });
      if (this.stopping) return;
      const ranMs = this.clock.now() - startedAt;
      const { restart } = this.spec;
      const failed = result.error !== undefined || result.signal !== null || result.code !== 0;
      const willRestart = !(restart.policy === 'never' || (restart.policy === 'on-failure' && !failed));
      // An exit soon after the start continues a loop; one after a good run starts counting again.
      this.consecutiveCrashes = ranMs >= restart.resetAfterMs ? 1 : this.consecutiveCrashes + 1;
      this.tellExit({
        code: result.code,
        signal: result.signal,
        ranMs,
        willRestart,
        ...(result.error ? { error: result.error.message } : {}),
        ...(strike ? { limit: { resource: strike.resource, limit: strike.limit } } : {}),
      });
      // The plan's delay, but never a tight loop: a zero delay would restart an instant crash hundreds of times a second.
      const delay = Math.max(restartDelay(restart, this.consecutiveCrashes), minimumRestartDelay(this.consecutiveCrashes));
      if (willRestart) this.restarts += 1;
      for (const line of exitNotice(this.spec, {
        code: result.code,
        signal: result.signal,
        ...(result.error ? { error: result.error.message } : {}),
        ranMs,
        willRestart,
        delayMs: delay,
        restarts: this.restarts,
        inARow: this.consecutiveCrashes,
        strike,
      }))
        this.logger.warn(line);
      if (!willRestart) return;
      await this.clock.sleep(delay, this.stopController.signal);
      if (this.stopping) return;
      current = this.spawnOnce();
      await current.ready;
    }
  }

  private tellExit(exit: Pick<ProcessExit, 'code' | 'signal' | 'ranMs' | 'willRestart' | 'error' | 'limit'>): void {
    const told: ProcessExit = { process: this.spec.name, role: this.spec.role, restarts: this.restarts, inARow: this.consecutiveCrashes, output: this.tail.snapshot(), ...exit };
    for (const listener of this.exitListeners) listener(told);
  }

  private notifyExit(): void {
    const waiters = this.exitWaiters;
    this.exitWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * SIGTERM to the process tree, up to the grace period for it to exit, then
   * SIGKILL. Resolves when no process of the tree remains.
   */
  async stop(): Promise<void> {
    if (this.stopping) return this.loop;
    this.stopping = true;
    this.stopController.abort();
    const child = this.child;
    const tree = this.tree;
    if (child && tree !== undefined && ((child.exitCode === null && child.signalCode === null) || treeAlive(tree))) {
      const exited = new Promise<void>((r) => this.exitWaiters.push(r));
      if (signalTree(tree, 'SIGTERM')) {
        this.logger.info(`stopping ${this.spec.name} (SIGTERM to process group ${tree.pgid} and its descendants)`);
        const graceOver = new Promise<'grace'>((r) => setTimeout(() => r('grace'), this.spec.stopGraceMs).unref());
        // The leader's exit is not enough: a daemonised descendant may still run.
        const gone = exited.then(() => waitTreeGone(tree, this.spec.stopGraceMs)).then(() => 'exited' as const);
        const outcome = await Promise.race([gone, graceOver]);
        if ((outcome === 'grace' || treeAlive(tree)) && treeAlive(tree)) {
          this.logger.warn(`${this.spec.name} still running after ${formatSeconds(this.spec.stopGraceMs)}; sending SIGKILL`);
          signalTree(tree, 'SIGKILL');
        }
      }
      await waitTreeGone(tree, 5_000);
    }
    await this.loop;
  }
}
