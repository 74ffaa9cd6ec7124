/**
 * The buildpack contract, modelled on Cloud Native Buildpacks: a Detector says
 * whether the buildpack applies (pass / skip / error, with evidence), a Planner
 * resolves everything into its part of the run plan. What carries a plan out —
 * the Builder, Runner and HealthChecker — is the executor's contract
 * (src/executor/contract.ts). Hosts implement any of these to plug in their
 * own buildpacks or their own execution (containers, Kubernetes…).
 */
import type { Environment } from '../env/assemble.js';
import type { StackBindings } from '../plan/placeholders.js';
import type { ErrorType, RunplanError } from '../errors/runplan-error.js';
import type { WarningType } from '../errors/warnings.js';
import type { FileSource } from '../files/file-source.js';
import type { HostSettings } from '../host/host-settings.js';
import type { InventoryProvider } from '../inventory/inventory.js';
import type { BuildStep, Decision, HealthCheckPlan, Layer, PlannedFile, PlannedProcess, PlanWarning, RunPlan, Runtime } from '../plan/schema.js';

/** A detector's answer: `pass` (the buildpack applies), `skip` (it does not), `error` (it should apply but cannot; DetectResult.error says why). */
export type DetectStatus = 'pass' | 'skip' | 'error';

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

export type { StackBindings } from '../plan/placeholders.js';
