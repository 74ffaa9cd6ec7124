import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import type { Runner, RunningApp, RunOptions } from '../../executor/contract.js';
import { lowerPlan } from '../../lowering/lower.js';
import { materialiseFiles } from '../../process/materialise-files.js';
import { formatSeconds } from '../../health/probes.js';
import { type AppUser, appUser } from '../../process/app-user.js';
import { ownPath } from '../../process/ownership.js';
import { removeUserDirectory, UserFiles } from '../../process/user-files.js';
import { systemClock, type Clock } from '../../time/clock.js';
import { describeReadiness, waitUntilReady } from '../../health/readiness.js';
import { boundRunDir, ensureRunDirParent, localBindings, unboundRunDir } from '../../process/run-dir.js';
import { runHookSteps } from './run-hooks.js';
import { SupervisedProcess } from './supervised-process.js';
import { useBuild } from '../../process/builds-in-use.js';
import { CoreErrors } from '../../errors/core-errors.js';
import type { SandboxScope } from '../../sandbox/sandbox.js';
import type { ProcessKeeper } from '../../supervision/process-keeper.js';
import { LastingProcess } from '../../supervision/lasting-process.js';
import { newRunRecord, type RunRecord, writeRunRecord } from '../../supervision/run-record.js';

export type { LastingRun };
import { type LastingRun, releaseRun } from '../../supervision/run-resources.js';

export interface LocalProcessRunnerOptions {
  /** Clock for restart back-off and readiness polling (tests pass one that does not sleep). */
  readonly clock?: Clock;
  /** Who the processes run as; by default the unprivileged user when runplan is root (process/app-user.ts). */
  readonly user?: AppUser;
  /**
   * Opens the walls of this start (a release's cgroup with its limits, which may
   * write the run directory it is given): its pre-run hooks and processes run
   * inside them, and stopping closes them. Its user is `user`.
   */
  readonly confine?: (runDir: string) => Promise<SandboxScope>;
  /** Keep the processes under s6 instead of as children of runplan's process, so that they outlive it (docs/engines.md). */
  readonly lasting?: LastingRun;
}

/**
 * The embedded default Runner: every process of the plan as a local child process
 * with its environment, restarted with exponential back-off when it crashes, and
 * stopped by process group (SIGTERM, grace period, SIGKILL).
 *
 * A process with `startAfter` conditions is started only once they hold (checked
 * in the background, after the other processes started): a proxy in front of an
 * application server must not accept connections — and so pass a port health
 * check — while the server behind it is still booting.
 *
 * The plan's pre-run hooks run first, in the application folder; the first that
 * fails stops the start with its coded error (no process is started).
 *
 * The plan's ${RUN_DIR} (localRunDir) is made fresh when the processes start;
 * it is also their TMPDIR, and it is removed once they have stopped.
 */
export class LocalProcessRunner implements Runner {
  private readonly clock: Clock;
  private readonly user: AppUser | undefined;
  private readonly confine: LocalProcessRunnerOptions['confine'];
  private readonly lasting: LastingRun | undefined;

  constructor(options: LocalProcessRunnerOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.user = options.user;
    this.confine = options.confine;
    this.lasting = options.lasting;
  }

  async start({ plan, lowered: given, appDir, env: planned, logger, signal, hookTimeoutMs, stack }: RunOptions): Promise<RunningApp> {
    const bindings = localBindings(appDir, stack);
    const lowered = given ?? lowerPlan(plan, bindings);
    const runDir = bindings.RUN_DIR as string;
    const user = this.user ?? (await appUser());
    // What is made or removed in the build or the run directory, the user does (docs/security.md, "Privilege model").
    const files = new UserFiles(user);
    // A run that was killed may have left its sockets: start from an empty directory,
    // private to the processes' user (Puma's socket, nginx's way to it, HOME).
    await makeRunDir(runDir, user, files, this.confine !== undefined);
    // Until its processes stopped, no promotion of another build removes this one (a release draining beside the next deploy).
    const unuse = useBuild(appDir);
    let scope: SandboxScope | undefined;
    try {
      scope = await this.confine?.(runDir);
    } catch (error) {
      unuse();
      await unboundRunDir(runDir);
      await removeUserDirectory(runDir, files).catch(() => undefined);
      throw error;
    }
    const env = planned.bound(bindings);
    // Secret files of the run (basic-auth users) live only while the processes do: the
    // build left on disk afterwards holds no password (docs/security.md, "Secrets").
    // Only files runplan wrote, whose paths it checked stay inside the build.
    const secretRunFiles: string[] = [];
    const { lasting } = this;
    const record: RunRecord | undefined = lasting
      ? newRunRecord({
          runId: lasting.runId,
          appDir,
          runDir,
          user: { name: user.name, uid: user.uid, gid: user.gid, dropped: user.dropped },
          marker: `runplan-${randomBytes(12).toString('hex')}`,
          secretRunFiles,
          ...(scope
            ? { scope: { name: scope.phase.name, limits: scope.limits, writable: [...scope.phase.writable], ...(scope.phase.network ? { network: { path: scope.phase.network.path } } : {}) } }
            : {}),
          processes: lowered.processes.map((p) => ({ name: p.name, role: p.role, cwd: p.cwd, restart: p.restart, stopGraceMs: p.stopGraceMs })),
        })
      : undefined;
    const release = () => releaseRun({ appDir, runDir, secretRunFiles, files, scope, unuse, ...(lasting ? { lasting } : {}) });
    let processes: ProcessKeeper[];
    try {
      if (lasting && record) {
        await mkdir(lasting.tree.runDir(lasting.runId), { recursive: true, mode: 0o700 });
        // Recorded before anything of it runs: a program that finds the run later can always stop what it has.
        await writeRunRecord(lasting.tree.runDir(lasting.runId), record);
      }
      // Files of the run (basic-auth users, 0600) are read by the processes, so they are theirs.
      const secret = new Set(lowered.files.filter((f) => f.secret).map((f) => f.path));
      for (const path of await materialiseFiles(lowered.files, 'run', appDir, env, files)) {
        if (secret.has(path)) secretRunFiles.push(path);
      }
      if (lasting && record) await writeRunRecord(lasting.tree.runDir(lasting.runId), { ...record, secretRunFiles });
      // CC_PRE_RUN_HOOK: before any process starts; its failure (RUNPLAN_E_HOOK_FAILED) starts none.
      // Bounded as build steps are (the step timeout), and stopped with all it started on SIGINT/SIGTERM.
      await runHookSteps(lowered.runHooks.preRun, { env, logger, user, scope, home: runDir, timeoutMs: hookTimeoutMs, signal });
      if (signal?.aborted) throw CoreErrors.BUILD_INTERRUPTED.create({ message: 'the deployment was interrupted before its processes started.' });
      processes = lowered.processes.map((spec) =>
        lasting && record
          ? new LastingProcess(spec, env, logger, { tree: lasting.tree, runId: lasting.runId, marker: record.marker, tempDir: runDir, user, ...(scope ? { scope } : {}) })
          : new SupervisedProcess(spec, env, logger, this.clock, { tempDir: runDir, user, ...(scope ? { scope } : {}) }),
      );
    } catch (error) {
      await release();
      throw error;
    }
    const immediate = processes.filter((p) => !p.spec.startAfter?.length);
    const deferred = processes.filter((p) => (p.spec.startAfter?.length ?? 0) > 0);
    const started: ProcessKeeper[] = [];
    try {
      for (const p of immediate) {
        await p.start();
        started.push(p);
      }
    } catch (error) {
      await Promise.all(started.map((p) => p.stop()));
      await release();
      throw error;
    }
    for (const p of immediate) {
      const s = p.state();
      logger.event({ type: 'process-started', process: s.name, pid: s.pid ?? null }, `started ${s.name} (pid ${s.pid ?? 'none'})`);
    }

    const stopWaiting = new AbortController();
    const waits = deferred.map(async (p) => {
      const conditions = p.spec.startAfter ?? [];
      logger.info(`${p.spec.name} starts once ${conditions.map(describeReadiness).join(' and ')}`);
      const since = this.clock.now();
      if (!(await waitUntilReady(conditions, this.clock, stopWaiting.signal))) return;
      try {
        await p.start();
        started.push(p);
        const pid = p.state().pid ?? null;
        logger.event({ type: 'process-started', process: p.spec.name, pid }, `started ${p.spec.name} (pid ${pid ?? 'none'}) after waiting ${formatSeconds(this.clock.now() - since)}`);
      } catch (error) {
        // Nothing listens then, so the health check reports the failure; the reason is logged here.
        logger.error((error as Error).message);
      }
    });

    let stopping: Promise<void> | undefined;
    return {
      processes: () => processes.map((p) => p.state()),
      // s6's status read again now (a lasting run's state follows it as its changes are seen).
      refresh: async () => {
        await Promise.all(processes.map((p) => (p instanceof LastingProcess ? p.refresh() : undefined)));
      },
      onExit: (listener) => {
        const stops = processes.map((p) => p.onExit(listener));
        return () => {
          for (const s of stops) s();
        };
      },
      stop: () =>
        (stopping ??= (async () => {
          stopWaiting.abort();
          await Promise.all(waits);
          await Promise.all(processes.map((p) => p.stop()));
          await release();
        })()),
      ...(lasting
        ? {
            // runplan's process goes away and the run stays: its processes are s6's; what this process held of it is let go.
            detach: async () => {
              stopWaiting.abort();
              await Promise.all(waits);
              await Promise.all(processes.map((p) => (p instanceof LastingProcess ? p.detach() : p.stop())));
              unuse();
            },
          }
        : {}),
    };
  }
}

/** A fresh, empty run directory (0700, the user's) in its checked parent, which a run stopping at the same moment may remove once. */
async function makeRunDir(runDir: string, user: AppUser, files: UserFiles, confined: boolean): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await ensureRunDirParent(runDir);
    await unboundRunDir(runDir);
    await removeUserDirectory(runDir, files);
    try {
      await mkdir(runDir, { mode: 0o700 });
      await ownPath(runDir, user);
      if (confined) await boundRunDir(runDir, user);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 3) throw error;
    }
  }
}
