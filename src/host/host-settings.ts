import { placeholder } from '../plan/schema.js';
import { availableParallelism, totalmem } from 'node:os';
import { join } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { defaultCacheDir } from './cache-dir.js';

/** The instance the application runs on, as the host declares it. */
export interface InstanceSize {
  readonly cpus: number;
  readonly memoryMb: number;
}

/** What the host (the platform embedding runplan) decides, as opposed to the application. */
export interface HostSettings {
  /** Port the web process listens on; the service's is 8080. */
  readonly port: number;
  readonly instance: InstanceSize;
  /**
   * A dedicated build instance: the build's steps are sized for it (Node.js's
   * heap for a webpack or webpacker build) instead of for `instance`, which
   * still sizes the processes. Absent: the build is sized for `instance`.
   */
  readonly buildInstance?: InstanceSize;
  /**
   * Content-addressed cache shared by every deployment on the host: runtimes,
   * downloads, dependency layers. Safe to share between concurrent builds.
   */
  readonly cacheDir: string;
  /** Where builds of applications live (one directory per application, one per build). */
  readonly workDir: string;
  /** INSTANCE_NUMBER given to the processes. */
  readonly instanceNumber: number;
  /** How long an application may take to become healthy; overrides the buildpack's timing. */
  readonly healthTimeoutMs?: number;
  /** Extra service-defined variables (strongest precedence). */
  readonly serviceVariables?: Readonly<Record<string, string>>;
  /**
   * How long one build step may run before it is stopped with every process it
   * started (RUNPLAN_E_BUILD_STEP_TIMEOUT). Default 30 minutes, or
   * $RUNPLAN_BUILD_STEP_TIMEOUT (seconds).
   */
  readonly buildStepTimeoutMs?: number;
  /**
   * How long a build waits for another build of the same application to finish
   * before it fails (RUNPLAN_E_BUILD_LOCKED); 0 fails at once. Default 10
   * minutes, or $RUNPLAN_BUILD_LOCK_WAIT (seconds).
   */
  readonly buildLockWaitMs?: number;
  /**
   * How long the web process must stay up once its health check passed before
   * the deployment is accepted: one that exits meanwhile fails it
   * (RUNPLAN_E_RUN_PROCESS_EXITED). 0 accepts at once. Default 3 s, or
   * $RUNPLAN_STABILITY_WINDOW (seconds).
   */
  readonly stabilityWindowMs?: number;
  /**
   * A known_hosts file of the host: the SSH host keys that git over SSH
   * (CC_SSH_PRIVATE_KEY) trusts during builds, with the deployment's
   * CC_SSH_KNOWN_HOSTS. Default $RUNPLAN_SSH_KNOWN_HOSTS; without either, host
   * keys are trusted on first use (docs/service.md, "Private SSH key").
   */
  readonly sshKnownHostsFile?: string;
  /**
   * How long one call into a buildpack's code may take — loading its module,
   * its factory, `detect`, `plan` — before it is abandoned with
   * RUNPLAN_E_BUILDPACK_TIMEOUT. Default 60 s, or $RUNPLAN_BUILDPACK_TIMEOUT (seconds).
   */
  readonly buildpackTimeoutMs?: number;
  /**
   * The same for an inventory provider's `gather`, which may run programs and
   * fetch from the network. Default 600 s, or $RUNPLAN_INVENTORY_TIMEOUT (seconds).
   */
  readonly inventoryTimeoutMs?: number;
}

export const DEFAULT_BUILD_STEP_TIMEOUT_MS = 30 * 60_000;
export const DEFAULT_BUILD_LOCK_WAIT_MS = 10 * 60_000;
export const DEFAULT_STABILITY_WINDOW_MS = 3_000;
const DEFAULT_BUILDPACK_TIMEOUT_MS = 60_000;
const DEFAULT_INVENTORY_TIMEOUT_MS = 10 * 60_000;
// setTimeout's limit (about 24 days): longer would fire at once.
const MAX_DURATION_MS = 2 ** 31 - 1;

const DEFAULT_PORT = 8080;

export { defaultCacheDir };

function defaultWorkDir(cacheDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return env.RUNPLAN_WORK_DIR || join(cacheDir, 'apps');
}

/** Fills what the host left out from this machine's own size. */
export function resolveHostSettings(partial: Partial<HostSettings> = {}): HostSettings {
  const cacheDir = partial.cacheDir ?? defaultCacheDir();
  let settings: HostSettings = {
    port: partial.port ?? DEFAULT_PORT,
    instance: partial.instance ?? { cpus: availableParallelism(), memoryMb: Math.floor(totalmem() / 1024 / 1024) },
    cacheDir,
    workDir: partial.workDir ?? defaultWorkDir(cacheDir),
    instanceNumber: partial.instanceNumber ?? 0,
    ...(partial.buildInstance === undefined ? {} : { buildInstance: partial.buildInstance }),
    ...(partial.serviceVariables === undefined ? {} : { serviceVariables: partial.serviceVariables }),
    ...(partial.healthTimeoutMs === undefined ? {} : { healthTimeoutMs: partial.healthTimeoutMs }),
    buildStepTimeoutMs: partial.buildStepTimeoutMs ?? secondsFromEnv('RUNPLAN_BUILD_STEP_TIMEOUT', 1) ?? DEFAULT_BUILD_STEP_TIMEOUT_MS,
    buildLockWaitMs: partial.buildLockWaitMs ?? secondsFromEnv('RUNPLAN_BUILD_LOCK_WAIT', 0) ?? DEFAULT_BUILD_LOCK_WAIT_MS,
    stabilityWindowMs: partial.stabilityWindowMs ?? secondsFromEnv('RUNPLAN_STABILITY_WINDOW', 0) ?? DEFAULT_STABILITY_WINDOW_MS,
    ...buildpackLimits(partial),
  };
  const knownHosts = partial.sshKnownHostsFile ?? (process.env.RUNPLAN_SSH_KNOWN_HOSTS || undefined);
  if (knownHosts !== undefined) settings = { ...settings, sshKnownHostsFile: knownHosts };
  assertDuration(settings.buildStepTimeoutMs as number, 'the build step timeout', 1);
  assertDuration(settings.buildLockWaitMs as number, 'the build lock wait', 0);
  assertDuration(settings.stabilityWindowMs as number, 'the stability window', 0);
  assertPort(settings.port, 'port');
  assertInstance(settings.instance, 'instance');
  if (settings.buildInstance !== undefined) assertInstance(settings.buildInstance, 'build instance');
  return settings;
}

function assertInstance(instance: InstanceSize, what: string): void {
  if (!Number.isInteger(instance.cpus) || instance.cpus < 1) {
    throw CoreErrors.HOST_INVALID_SETTING.create({ message: `${what} CPUs must be a positive integer, got ${instance.cpus}.` });
  }
  if (!Number.isInteger(instance.memoryMb) || instance.memoryMb < 64) {
    throw CoreErrors.HOST_INVALID_SETTING.create({ message: `${what} memory must be at least 64 MB, got ${instance.memoryMb} MB.` });
  }
}

export function assertPort(port: number, what: string): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw CoreErrors.HOST_INVALID_SETTING.create({ message: `${what} must be an integer from 1 to 65535, got ${port}.` });
  }
}

/** A duration of runplan's own environment, given in seconds (fractions allowed). */
function secondsFromEnv(name: string, minMs: number, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  const seconds = /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : Number.NaN;
  const ms = Math.round(seconds * 1000);
  if (!Number.isFinite(ms) || ms < minMs || ms > MAX_DURATION_MS) {
    throw CoreErrors.HOST_INVALID_SETTING.create({
      message: `${name} must be a number of seconds${minMs > 0 ? ' greater than 0' : ''} (at most ${Math.floor(MAX_DURATION_MS / 1000)}), got ${JSON.stringify(text.slice(0, 40))}.`,
      variable: name,
    });
  }
  return ms;
}

function assertDuration(ms: number, what: string, minMs: number): void {
  if (!Number.isInteger(ms) || ms < minMs || ms > MAX_DURATION_MS) {
    throw CoreErrors.HOST_INVALID_SETTING.create({ message: `${what} must be a whole number of milliseconds from ${minMs} to ${MAX_DURATION_MS}, got ${ms}.` });
  }
}

/** The limits of calls into buildpacks' code, from the host's settings or runplan's environment; known before anything else is resolved (loading a --buildpack). */
export function buildpackLimits(partial: Partial<HostSettings> = {}): Required<Pick<HostSettings, 'buildpackTimeoutMs' | 'inventoryTimeoutMs'>> {
  const limits = {
    buildpackTimeoutMs: partial.buildpackTimeoutMs ?? secondsFromEnv('RUNPLAN_BUILDPACK_TIMEOUT', 1) ?? DEFAULT_BUILDPACK_TIMEOUT_MS,
    inventoryTimeoutMs: partial.inventoryTimeoutMs ?? secondsFromEnv('RUNPLAN_INVENTORY_TIMEOUT', 1) ?? DEFAULT_INVENTORY_TIMEOUT_MS,
  };
  assertDuration(limits.buildpackTimeoutMs, 'the buildpack timeout', 1);
  assertDuration(limits.inventoryTimeoutMs, 'the inventory timeout', 1);
  return limits;
}

/** Parses "512M", "2G", "2048" (megabytes) into megabytes. */
export function parseMemory(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?$/i.exec(text.trim());
  if (!m) throw CoreErrors.HOST_INVALID_SETTING.create({ message: `memory "${text}" is not a size such as 512M or 2G.` });
  const factor = { '': 1, K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 }[(m[2] ?? '').toUpperCase()] ?? 1;
  return Math.floor(Number(m[1]) * factor);
}

/** Variables the service defines for every instance. */
export function serviceVariables(host: HostSettings): Record<string, string> {
  return {
    PORT: String(host.port),
    INSTANCE_NUMBER: String(host.instanceNumber),
    INSTANCE_TYPE: 'production',
    // Where the built application is, known only to the executor that carries the plan out.
    APP_HOME: placeholder('APP_HOME'),
    ...host.serviceVariables,
  };
}
