import type { Environment } from '../env/assemble.js';
import type { HostSettings } from '../host/host-settings.js';
import type { Logger } from '../log/logger.js';
import type { StackBindings } from '../plan/placeholders.js';
import type { HealthCheckPlan, PlanWarning, RunPlan } from '../plan/schema.js';
import type { PlanToCarryOut } from '../planning/plan-to-carry-out.js';
import type { LoweredPlan, LoweredStep } from '../lowering/lower.js';

/** What an executor made of a plan — a build directory, an image — which it starts, hooks, accepts or discards. */
export interface Built {
  /** The plan carried out. */
  readonly plan: RunPlan;
  /**
   * The plan lowered once, for this executor's bindings (src/lowering/lower.ts):
   * what the engine carries out — its steps, files, hooks and processes — and
   * maps to its own terms; no engine fills the plan's placeholders itself.
   */
  readonly lowered: LoweredPlan;
  /** The full environment with values (secrets included): keep it in memory, never print it. */
  readonly environment: Environment;
  readonly host: HostSettings;
  /** Where every line of this deployment goes, redacted. */
  readonly logger: Logger;
}

/** What Executor.start and Executor.runHook are given. */
export interface ExecutorStartOptions {
  /** SIGINT/SIGTERM to runplan: a pre-run hook still running is stopped with everything it started. */
  readonly signal?: AbortSignal | undefined;
}

/** What Executor.build is given: beside the flow's signal, the deployment's logger, which the flow makes (redacting with the environment to carry out) and the executor keeps in its Built. */
export interface ExecutorBuildOptions extends ExecutorStartOptions {
  readonly logger: Logger;
}

/** What Executor.runHook is given: the flow's signal, and how long the hook may run (the host's step timeout). */
export interface HookRunOptions extends ExecutorStartOptions {
  readonly timeoutMs: number;
}

/**
 * One way to carry out a plan (issue 23), as CNB's lifecycle drives every
 * platform: each engine — this machine, an image on Docker — says how it
 * builds, starts, reaches and finishes a deployment, and the one deploy flow
 * (deploy-flow.ts) decides when: port check, start, health gate, outcome hooks,
 * accept or discard, redaction. A host embeds runplan by choosing an executor.
 */
export interface Executor<B extends Built = Built> {
  /** How logs and the conformance suite name it: "local", "docker"… */
  readonly name: string;
  /**
   * What of this plan the executor carries out otherwise than the plan says,
   * each a coded warning the deploy flow prints before the processes start: an
   * engine is never silently different (the conformance suite checks each case
   * an engine declares here).
   */
  unhonoured?(plan: RunPlan): readonly PlanWarning[];
  /** Carries out the plan's build: the plan is made (or read) once, before, by the caller of the deploy flow. */
  build(toCarryOut: PlanToCarryOut, options: ExecutorBuildOptions): Promise<B>;
  /** Whether something already answers where the deployment's health check will look (it would answer in the application's place). */
  portInUse(built: B): Promise<boolean>;
  /** Starts the plan's processes (pre-run hooks first); rejects, with nothing left running, when one cannot start. */
  start(built: B, options: ExecutorStartOptions): Promise<RunningApp>;
  /** Where and how the health gate reaches the deployment. */
  healthTarget(built: B): HealthTarget;
  /**
   * Runs one run-succeeded or run-failed hook of the lowered plan
   * (CC_RUN_SUCCEEDED_HOOK, CC_RUN_FAILED_HOOK) where the deployment runs,
   * with its environment; rejects with the hook's coded error when it fails,
   * or RUNPLAN_E_BUILD_STEP_TIMEOUT when it outlives `timeoutMs` (stopped with
   * everything it started). The deploy flow decides when, in which order, and
   * that a failure is only RUNPLAN_W_HOOK_FAILED: they never change the outcome.
   */
  runHook(built: B, hook: LoweredStep, options: HookRunOptions): Promise<void>;
  /** The deployment passed its gate: it becomes the current one; `settled` resolves once what it replaced is gone. */
  accept(built: B): Promise<{ readonly settled: Promise<void> }>;
  /** The deployment failed: what was made for it goes, and the previous one stays. */
  discard(built: B): Promise<void>;
}

/** How one build step ended: run, or restored from the layer cache, and how long it took. */
export interface StepReport {
  readonly name: string;
  readonly status: 'succeeded' | 'cached';
  readonly durationMs: number;
}

/** What a Builder is given: the plan, the directory to build in, the environment and the host. */
export interface BuildOptions {
  readonly plan: RunPlan;
  /** The plan lowered for `appDir` (lowerPlan with localBindings) by the executor, once; without it the builder lowers it. */
  readonly lowered?: LoweredPlan;
  /** Absolute path of the directory being built (a copy of the source): the application's folder in it with APP_FOLDER. */
  readonly appDir: string;
  /** The copy of the whole repository, when the application is a folder of it (`plan.app.folder`): the steps may write there too (a workspace root's node_modules). */
  readonly buildRoot?: string;
  readonly env: Environment;
  readonly host: HostSettings;
  readonly logger: Logger;
  readonly signal?: AbortSignal;
  /** A private temporary directory for the steps (their TMPDIR), which the caller removes afterwards. */
  readonly tempDir?: string;
  /** Build without the layer cache: no layer is restored (each is saved again, for the next build). */
  readonly noCache?: boolean;
  /** Carried into every step's environment (RUNPLAN_BUILD_TREE): the build lock's token, by which a later build stops what a killed one left running. */
  readonly buildTag?: string;
  /**
   * With a plan's build.sshKey: the directory (outside the application) where the
   * builder writes the key and known hosts for the steps, and removes when the
   * build ends. Default: a new directory under the system's temporary directory.
   */
  readonly sshDir?: string;
  /** Host keys trusted on first use by earlier builds of the application, kept between its builds (without it, each build trusts anew). */
  readonly sshTrustedHostsFile?: string;
  /** Where this host keeps the programs the plan names (hostStackBindings): the values of its stack placeholders. */
  readonly stack?: StackBindings;
}

/** Carries out a plan's build steps in a directory (the local executor's default: the StepBuilder with the layer cache). */
export interface Builder {
  build(options: BuildOptions): Promise<readonly StepReport[]>;
}

/** One process of a running application as its runner sees it now. */
export interface ProcessState {
  readonly name: string;
  readonly pid: number | undefined;
  readonly restarts: number;
  readonly running: boolean;
}

/** What a Runner is given to start a built application's processes. */
export interface RunOptions {
  readonly plan: RunPlan;
  /** The plan lowered for `appDir` by the executor, once (the one its build carried out); without it the runner lowers it. */
  readonly lowered?: LoweredPlan;
  readonly appDir: string;
  readonly env: Environment;
  readonly logger: Logger;
  /**
   * Interrupts the start (SIGINT/SIGTERM to runplan): a pre-run hook still
   * running is stopped with everything it started, and start() rejects.
   */
  readonly signal?: AbortSignal;
  /** How long each pre-run hook may run before it is stopped (the host's step timeout, `buildStepTimeoutMs`). */
  readonly hookTimeoutMs?: number;
  /** Where this host keeps the programs the plan names (hostStackBindings): the values of its stack placeholders. */
  readonly stack?: StackBindings;
}

/** One exit of a process of a running application, as its runner saw it. */
export interface ProcessExit {
  readonly process: string;
  readonly role: 'web' | 'worker';
  /** Exit status, or null when a signal ended it. */
  readonly code: number | null;
  readonly signal: string | null;
  /** Why it could not be started at all, when that is what happened (a program gone since the last start). */
  readonly error?: string;
  /** A limit of the application's instance that ended it (its walls said so): its memory, or its number of processes. */
  readonly limit?: { readonly resource: 'memory' | 'processes' | 'disk'; readonly limit: string };
  /** How long that run lasted. */
  readonly ranMs: number;
  /** How many times the process had been restarted before this exit. */
  readonly restarts: number;
  /** Exits in a row, each soon after its start (the restart policy's `resetAfterMs`): 1 for a first or lone exit. */
  readonly inARow: number;
  /** Whether the runner restarts it (its restart policy). */
  readonly willRestart: boolean;
  /** Its last lines of output (both streams), redacted and bounded. */
  readonly output: readonly string[];
}

/** A started application: its processes' state, how to stop them all, and (optionally) each exit as it happens. */
export interface RunningApp {
  processes(): readonly ProcessState[];
  /** Stops every process (SIGTERM, grace period, SIGKILL) and resolves once none is left. */
  stop(): Promise<void>;
  /**
   * Tells `listener` each time a process exits by itself (not when stop() ends
   * it); returns the function that stops telling. A deployment uses it to say
   * what its web process did when it fails; a runner without it is watched
   * through processes() only.
   */
  onExit?(listener: (exit: ProcessExit) => void): () => void;
  /**
   * Brings what onExit told and processes() show up to date now, for a runner
   * that learns of exits by asking its engine every so often rather than being
   * told at once (swarm's task states): the stability window's verdict waits
   * for it, so that an exit just before the window closed is not missed.
   */
  refresh?(): Promise<void>;
  /**
   * Lets the run go on without this program: it stops following the processes
   * and leaves them running (a lasting run, kept by s6: a host's serve exiting
   * while its releases go on). A later program takes them over (adoptRun).
   * Absent where the processes are this program's children.
   */
  detach?(): Promise<void>;
}

/** Starts the processes of a built application (the local executor's default: supervised processes on this machine). */
export interface Runner {
  start(options: RunOptions): Promise<RunningApp>;
}

/** Where and how a health checker reaches a deployment. */
export interface HealthTarget {
  /** e.g. http://127.0.0.1:8080 */
  readonly baseUrl: string;
  readonly check: HealthCheckPlan;
  /** Also verify that the port is bound on all interfaces (only meaningful on this machine). */
  readonly verifyListenAddress?: boolean;
  /**
   * When the port refuses, tell where the processes listen instead (read in /proc, each process in its own
   * network namespace): processes of this machine only. Default: verifyListenAddress.
   */
  readonly whereItListens?: boolean;
  /**
   * How "the port accepts connections" is told: a TCP connect (default), or any
   * HTTP answer, for ports published by a proxy that accepts connections before
   * the application listens (Docker's docker-proxy).
   */
  readonly portProbe?: 'tcp' | 'http';
}

/** The answer to one configured health-check path. */
export interface PathResult {
  readonly path: string;
  /** The HTTP status, or a readable reason when there was no response. */
  readonly status: number | string;
  readonly ok: boolean;
}

/** A health check's outcome: healthy or not, each path's answer, or why none could answer. */
export interface HealthReport {
  readonly ok: boolean;
  readonly results: readonly PathResult[];
  /** Why it failed when it is not about one path. */
  readonly problem?: { readonly kind: 'not-listening' | 'loopback-only'; readonly message: string };
}

/** Checks a started deployment the way its plan's health check says (the default: HTTP on the plan's port). */
export interface HealthChecker {
  check(target: HealthTarget, logger: Logger, signal?: AbortSignal): Promise<HealthReport>;
}
