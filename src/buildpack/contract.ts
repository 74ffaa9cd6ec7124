/**
 * The buildpack contract, modelled on Cloud Native Buildpacks: a Detector says
 * whether the buildpack applies (pass / skip / error, with evidence), a Planner
 * resolves everything into its part of the run plan, and the Builder, Runner and
 * HealthChecker carry a plan out. Hosts implement any of these to plug in their
 * own buildpacks or their own execution (containers, Kubernetes…).
 */
import type { Environment } from '../env/assemble.js';
import type { ErrorType, RunplanError } from '../errors/runplan-error.js';
import type { WarningType } from '../errors/warnings.js';
import type { FileSource } from '../files/file-source.js';
import type { HostSettings } from '../host/host-settings.js';
import type { InventoryProvider } from '../inventory/inventory.js';
import type { Logger } from '../log/logger.js';
import type { BuildStep, Decision, HealthCheckPlan, Layer, PlannedFile, PlannedProcess, PlanWarning, RunPlan, Runtime, StackPlaceholder } from '../plan/schema.js';

/** A detector's answer: `pass` (the buildpack applies), `skip` (it does not), `error` (it should apply but cannot; DetectResult.error says why). */
export type DetectStatus = 'pass' | 'skip' | 'error';

/** Absolute directories of one host (or image) for the stack placeholders, e.g. `{ RUBY_BIN: '/usr/bin' }`. */
export type StackBindings = Readonly<Partial<Record<StackPlaceholder, string>>>;

/** What a Detector found, with the evidence that decided. */
export interface DetectResult {
  readonly status: DetectStatus;
  /** What decided: files found or missing, e.g. "package.json found". */
  readonly evidence: readonly string[];
  /** With status "error": why the buildpack should apply but cannot. */
  readonly error?: RunplanError;
}

/** Says whether a buildpack applies to an application's files (reading them only). */
export interface Detector {
  detect(files: FileSource): Promise<DetectResult>;
}

/** What a Planner is given: the application's files, the environment, the host, its part of the inventory and a previous plan. */
export interface PlanContext {
  /** The application's files: those of its folder when APP_FOLDER names one. */
  readonly files: FileSource;
  /**
   * The whole repository, present only when the application is a folder of it
   * (APP_FOLDER): for files a workspace keeps at its root (a lockfile, .npmrc).
   * The build has them too, above the application's folder.
   */
  readonly repository?: FileSource;
  /** The application's folder in the repository (APP_FOLDER), with `repository`. */
  readonly folder?: string;
  /** The assembled deployment environment (application, add-ons, service). */
  readonly env: Environment;
  readonly host: HostSettings;
  /**
   * This buildpack's part of the inventory, validated with its provider's schema
   * (undefined when it has no provider). Planning learns about the machine and the
   * network only from here: it runs no program and opens no connection.
   */
  readonly inventory: unknown;
  /**
   * A plan made earlier for the same application: values that came from a default
   * stay what it resolved while still available and allowed (runplan plan --previous).
   */
  readonly previous?: RunPlan;
}

/** How the health check behaves when the user configured no path. */
export type DefaultHealthCheck = { readonly kind: 'port'; readonly reason: string } | { readonly kind: 'http'; readonly paths: readonly string[]; readonly reason: string };

/** A buildpack's part of the plan. The core adds detection, environment and health-check paths. */
export interface PlanContribution {
  readonly runtimes: readonly Runtime[];
  readonly decisions: readonly Decision[];
  readonly steps: readonly BuildStep[];
  readonly layers: readonly Layer[];
  readonly processes: readonly PlannedProcess[];
  readonly files: readonly PlannedFile[];
  readonly warnings: readonly PlanWarning[];
  /**
   * Where the core puts the service's build hooks: CC_PRE_BUILD_HOOK before the
   * step named `dependencies` (the first that installs the application's
   * dependencies, once the runtime and tools are in place), CC_POST_BUILD_HOOK
   * before the step named `checks` (the first that only checks the finished
   * build, so that what the hook makes is checked too). Without a name: before
   * the first step, after the last.
   */
  readonly hookPoints?: { readonly dependencies?: string; readonly checks?: string };
  /**
   * The environment overrides and PATH of commands the application gives (hooks,
   * CC_WORKER_COMMAND…), e.g. where the bundle's gems are; by default the web process's.
   */
  readonly userCommands?: { readonly env: Readonly<Record<string, string>>; readonly pathPrepend: readonly string[] };
  /** The same for the build hooks (CC_PRE_BUILD_HOOK, CC_POST_BUILD_HOOK), when they differ (sized for a dedicated build instance); by default `userCommands`. */
  readonly buildCommands?: { readonly env: Readonly<Record<string, string>>; readonly pathPrepend: readonly string[] };
  /** Variables filled only when no source defines them (e.g. WEB_CONCURRENCY). */
  readonly envDefaults?: readonly { readonly name: string; readonly value: string; readonly reason: string }[];
  /** Replaces the buildpack's static default health check for this application. */
  readonly defaultHealthCheck?: DefaultHealthCheck;
  /** Overrides of the health-check timing (e.g. a slow-starting framework). */
  readonly healthTiming?: Partial<Pick<HealthCheckPlan, 'readyTimeoutMs' | 'requestTimeoutMs' | 'retryDelayMs'>>;
  /**
   * The dependencies the step named by `hookPoints.dependencies` fetches with git
   * over SSH: the core explains CC_SSH_PRIVATE_KEY with them, and names the one a
   * git server refused (src/planning/resolve-ssh-key.ts).
   */
  readonly sshGitDependencies?: readonly SshGitDependency[];
}

/** A dependency fetched with git over SSH, as the application declares it. */
export interface SshGitDependency {
  /** e.g. "private-dep" (package.json) or "private_gem" (Gemfile.lock). */
  readonly name: string;
  /** The git URL as written, e.g. "git+ssh://git@git.example.org/team/private-dep.git". */
  readonly url: string;
  /** The file that declares it. */
  readonly file: string;
}

/** Resolves everything a buildpack decides into its part of the run plan. */
export interface Planner {
  plan(context: PlanContext): Promise<PlanContribution>;
}

/** A buildpack: its detector and planner, and what the core asks of it (default health check, inventory, stack programs, codes). Written with the kit, `runplan/buildpack`. */
export interface Buildpack {
  /** Also the application type: "node", "ruby", "play1". */
  readonly id: string;
  readonly name: string;
  /** When several buildpacks pass detection, the highest priority wins. */
  readonly priority: number;
  readonly detector: Detector;
  readonly planner: Planner;
  /** Health check used when no CC_HEALTH_CHECK_PATH… is configured. */
  readonly defaultHealthCheck: DefaultHealthCheck;
  /** How the buildpack learns what its planner needs from the machine and the network. */
  readonly inventory?: InventoryProvider;
  /**
   * Where a host keeps the programs this buildpack's plans name but do not
   * install (docs/plan.md, "Programs of the stack"): the directories of the stack
   * placeholders a plan of its type puts on PATH (`${RUBY_BIN}`: the bindir of the
   * Ruby of the plan's version), read from this buildpack's part of the host's
   * inventory. The local executor asks it before it carries a plan out; an image
   * has its stack image's. A coded error when the host lacks one.
   */
  readonly stack?: (plan: RunPlan, inventory: unknown) => StackBindings | PromiseLike<StackBindings>;
  /** The error codes this buildpack raises, for documentation. */
  readonly errors?: Readonly<Record<string, ErrorType>>;
  /** The warning codes this buildpack emits, for documentation. */
  readonly warnings?: Readonly<Record<string, WarningType>>;
  /**
   * Variables that hold credentials for this buildpack (e.g. a registry token
   * under a name no pattern recognises): runplan treats them as it treats
   * NPM_TOKEN — their values appear in no output, log, plan, error or image.
   */
  readonly secretVariables?: readonly string[];
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
  readonly limit?: { readonly resource: 'memory' | 'processes'; readonly limit: string };
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
