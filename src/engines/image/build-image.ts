import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { BuildpackRegistry } from '../../buildpack/registry.js';
import { carryOutInstall } from '../../building/install/install-step.js';
import { hostNpmRegistry } from '../../building/install/npm-registry.js';
import { renderFile } from '../../process/materialise-files.js';
import { appWorkspace, copySource, workspaceTempDir } from '../../building/workspace.js';
import type { Environment, EnvironmentInput } from '../../env/assemble.js';
import { redactError } from '../../env/redact-error.js';
import { CoreErrors } from '../../errors/core-errors.js';
import { writeFileAtomic } from '../../files/atomic-write.js';
import { formatSeconds } from '../../health/probes.js';
import { DEFAULT_BUILD_STEP_TIMEOUT_MS, type HostSettings } from '../../host/host-settings.js';
import type { Inventory } from '../../inventory/inventory.js';
import { Logger, type LogSink } from '../../log/logger.js';
import { planDigest } from '../../plan/digest.js';
import type { RunPlan } from '../../plan/schema.js';
import { planToCarryOut, type PlanToCarryOut } from '../../planning/plan-to-carry-out.js';
import type { LoweredPlan } from '../../lowering/lower.js';
import { DockerCli, labelArgs } from '../docker-cli.js';
import { hostCertificateFile, hostNetworkBuildArgs } from '../host-network.js';
import { ensureStackImage, forgetStackImageIfGone, stackForType } from '../stack-images.js';
import { explainFailure, stepTimeoutError } from '../../steps/command-step.js';
import { OutputWarnings } from '../../process/output-warnings.js';
import { describeStep } from '../../plan/describe.js';
import { HOST_CA_TARGET, renderDockerfile, STEP_MARKER, STEP_TIMED_OUT } from './dockerfile.js';
import { IMAGE_BINDINGS, lowerForImage, renderEntrypoint, renderHealthcheck } from './scripts.js';
import { runProgram } from '../../process/run-program.js';
import { appName } from '../app-name.js';

/**
 * Where an image build's lines go: a sink, for a build of its own (`runplan
 * image`), or the logger of the deployment it is part of, which the deploy flow
 * made (src/executor/deploy-flow.ts).
 */
export type ImageLines = { readonly sink: LogSink; readonly logger?: undefined } | { readonly logger: Logger; readonly sink?: undefined };

export interface ImageOptions {
  readonly registry: BuildpackRegistry;
  readonly appDir: string;
  readonly type?: string;
  readonly env?: EnvironmentInput;
  readonly host?: Partial<HostSettings>;
  readonly inventory?: Inventory;
  readonly previous?: RunPlan;
  /** A saved plan to carry out instead of planning. */
  readonly plan?: RunPlan;
  /** The image's name; default runplan/<name>:<first 12 hex digits of the plan digest>. */
  readonly tag?: string;
  /** The application's name in the default tag; default its directory's, or its folder's with APP_FOLDER (src/engines/app-name.ts). */
  readonly name?: string;
  /** The image to build on; default the stack image of the plan's type (built when missing). */
  readonly base?: string;
  /** Only write the build context and Dockerfile here, for another builder. */
  readonly out?: string;
  /** Also write the image as an OCI layout in this directory (docker save, then skopeo). */
  readonly oci?: string;
  readonly docker?: DockerCli;
  readonly signal?: AbortSignal;
  /** Called with the plan before anything is built. */
  readonly onPlan?: (plan: RunPlan) => void;
  /** Build every step again (docker build --no-cache): no layer of an earlier image is reused. */
  readonly noCache?: boolean;
  /** Labels put on the image's configuration only (`docker build --label`): no layer, so the build cache is the same with or without them. */
  readonly labels?: Readonly<Record<string, string>>;
}

export interface BuiltImage {
  readonly plan: RunPlan;
  /** The plan lowered once for an image (IMAGE_BINDINGS): what the image's scripts and Dockerfile were made from, and what the engines map. */
  readonly lowered: LoweredPlan;
  readonly digest: string;
  readonly environment: Environment;
  readonly host: HostSettings;
  /** The image's name and its id; undefined with `out` (nothing was built). */
  readonly tag: string | undefined;
  readonly id: string | undefined;
  /** The build context and Dockerfile. */
  readonly context: string;
}

/** Default image name: the application's name (src/engines/app-name.ts) and the plan's digest. */
export function defaultImageTag(appDir: string, digest: string, name = appName(appDir)): string {
  return `runplan/${name}:${digest.replace(/^sha256:/, '').slice(0, 12)}`;
}

/**
 * Writes the build context of an application image: the application's source
 * (`app/`, with the plan's non-secret build files), the runtimes and tools the
 * plan installs, carried out from runplan's verified shared cache (`runtime/`),
 * the entrypoint and health check (`runplan/`), and the Dockerfile.
 */
async function writeContext(
  context: string,
  lowered: LoweredPlan,
  digest: string,
  environment: Environment,
  appDir: string,
  host: HostSettings,
  base: string,
  logger: Logger,
  secretIds: readonly { id: string; path: string }[],
  hostCa: boolean,
  hostNpmrc: boolean,
  noCache: boolean | undefined,
  appScope: string,
): Promise<void> {
  const { plan } = lowered;
  const app = join(context, 'app');
  const runtime = join(context, 'runtime');
  const scripts = join(context, 'runplan');
  await rm(app, { recursive: true, force: true });
  await rm(scripts, { recursive: true, force: true });
  // The whole repository: an application in a folder of it (APP_FOLDER) may use files above it (a workspace root).
  await copySource(appDir, app);
  await mkdir(scripts, { recursive: true });
  // The installed runtimes are kept from the previous image of the application while its install steps are the same:
  // copying a Node.js tree again costs most of a warm rebuild, and the build would find the same files anyway.
  const installs = JSON.stringify(plan.build.steps.filter((s) => s.run.kind === 'install').map((s) => s.run));
  const manifest = join(context, 'runtime.json');
  if ((await readFile(manifest, 'utf8').catch(() => undefined)) !== installs) {
    await rm(runtime, { recursive: true, force: true });
    await mkdir(runtime, { recursive: true });
    const log = (line: string) => logger.emit({ kind: 'step', name: 'image', stream: 'stdout' }, line);
    for (const step of plan.build.steps) {
      // A real copy: the context leaves this host, where a symlink into the cache means nothing.
      if (step.run.kind === 'install') await carryOutInstall(step.run, runtime, host.cacheDir, { log, mode: 'copy' });
    }
    await writeFile(manifest, installs);
  }
  const env = environment.bound(IMAGE_BINDINGS);
  for (const file of lowered.files) {
    if (file.phase !== 'build') continue;
    const target = join(app, plan.app.folder ?? '', file.path);
    if (!file.secret) await writeFileAtomic(target, renderFile(file, env), file.mode);
    // A secret file is a BuildKit secret mount during the steps: the image keeps what is left of it after the build, as a local build does.
    else if (file.afterBuild?.action === 'replace') await writeFileAtomic(target, file.afterBuild.text, file.mode);
    else if (file.afterBuild?.action === 'remove') await rm(target, { force: true });
  }
  await writeFile(join(scripts, 'entrypoint'), renderEntrypoint(lowered, digest, { hookTimeoutMs: host.buildStepTimeoutMs }), { mode: 0o755 });
  await writeFile(join(scripts, 'healthcheck'), renderHealthcheck(lowered.plan), { mode: 0o755 });
  await chmod(join(scripts, 'entrypoint'), 0o755);
  await chmod(join(scripts, 'healthcheck'), 0o755);
  await writeFile(
    join(context, 'Dockerfile'),
    renderDockerfile({
      lowered,
      digest,
      base,
      secretFiles: secretIds,
      hostCa,
      hostNpmrc,
      noCache: noCache ?? false,
      appScope,
      stepTimeoutMs: host.buildStepTimeoutMs ?? DEFAULT_BUILD_STEP_TIMEOUT_MS,
    }),
  );
}

/**
 * Turns the plan into an image with the Docker engine (BuildKit): the built
 * application, the exact runtimes the plan resolved, a non-root user, EXPOSE
 * and HEALTHCHECK, every process startable by name, labels with the plan's
 * digest. Build-time secrets are secret mounts; the plan's cacheable layers
 * become BuildKit cache; the context is kept per application, so that an
 * unchanged application rebuilds from cache. Every line it shows, every
 * line it keeps for a failure's error and every error it throws are redacted
 * (the environment's secret values), as a local build's are.
 */
export async function buildImage(options: ImageOptions & ImageLines, toCarryOut?: PlanToCarryOut): Promise<BuiltImage> {
  const carried = toCarryOut ?? (await planToCarryOut(options));
  // Every error leaves redacted: a step's failure quotes what it printed, a docker or skopeo failure what they said.
  return buildImageOf(options, carried).catch((error: unknown) => {
    throw redactError(error, carried.environment.redactor);
  });
}

async function buildImageOf(options: ImageOptions & ImageLines, toCarryOut: PlanToCarryOut): Promise<BuiltImage> {
  const { plan, environment, host } = toCarryOut;
  if (plan.build.sshKey) {
    // Not yet: the stack images have no git nor ssh, and the key would have to reach the steps as a BuildKit secret (docs/engines.md).
    throw CoreErrors.IMAGE_SSH_KEY_UNSUPPORTED.create({
      message: `the plan's build fetches git dependencies over SSH with ${plan.build.sshKey.variable}, which the image engine does not support yet: no image is built, so no layer can hold the key.`,
      variable: plan.build.sshKey.variable,
    });
  }
  const logger = options.logger ?? new Logger(options.sink, environment.redactor);
  const digest = planDigest(plan);
  options.onPlan?.(plan);
  const appFolderDir = join(resolve(options.appDir), plan.app.folder ?? '');
  const workspace = appWorkspace(host.workDir, appFolderDir);
  const lowered = lowerForImage(plan);
  const secretFiles = lowered.files.filter((f) => f.phase === 'build' && f.secret).map((f, i) => ({ id: `file-${i}`, file: f }));
  // The application's own BuildKit caches (warm-start copies) are named after its workspace.
  const appScope = createHash('sha256').update(workspace.root).digest('hex').slice(0, 16);
  const secretIds = secretFiles.map(({ id, file }) => ({ id, path: file.path }));
  const caFile = hostCertificateFile();

  if (options.out !== undefined) {
    await writeContext(options.out, lowered, digest, environment, options.appDir, host, options.base ?? '<stack image>', logger, secretIds, caFile !== undefined, true, options.noCache, appScope);
    logger.info(`wrote the build context and Dockerfile of the plan ${digest} to ${options.out}`);
    return { plan, lowered, digest, environment, host, tag: undefined, id: undefined, context: options.out };
  }

  const docker = options.docker ?? (await DockerCli.connect());
  const stack = stackForType(plan.app.type);
  if (options.base === undefined && stack === undefined) {
    throw CoreErrors.IMAGE_BUILD_FAILED.create({ message: `there is no stack image for applications of type "${plan.app.type}"; give one with --base.` });
  }
  const stackLog = (line: string) => logger.emit({ kind: 'step', name: 'stack', stream: 'stdout' }, line);
  const base = options.base ?? (await ensureStackImage(docker, stack!, { log: stackLog }));
  const context = join(workspace.root, 'image-context');
  const secrets = await workspaceTempDir(workspace, `image-secrets-${randomBytes(4).toString('hex')}`);
  try {
    const registry = await hostNpmRegistry(host.cacheDir).catch(() => undefined);
    await writeContext(context, lowered, digest, environment, options.appDir, host, base, logger, secretIds, caFile !== undefined, registry !== undefined, options.noCache, appScope);
    const secretArgs: string[] = [];
    for (const { id, file } of secretFiles) {
      const path = join(secrets.dir, id);
      await writeFile(path, renderFile(file, environment.bound(IMAGE_BINDINGS)), { mode: 0o600 });
      secretArgs.push('--secret', `id=${id},src=${path}`);
    }
    if (caFile) secretArgs.push('--secret', `id=host-ca,src=${caFile}`);
    if (registry !== undefined) {
      const npmrc = join(secrets.dir, 'host-npmrc');
      await writeFile(npmrc, `registry=${registry}\n${caFile ? `cafile=${HOST_CA_TARGET}\n` : ''}`, { mode: 0o600 });
      secretArgs.push('--secret', `id=host-npmrc,src=${npmrc}`);
    }
    const tag = options.tag ?? defaultImageTag(appFolderDir, digest, options.name);
    const started = Date.now();
    logger.info(`building image ${tag} on ${base}`);
    // The image's id from the build itself: a `docker image inspect` afterwards is another client start (≈ 30 ms of a warm rebuild).
    const idFile = join(secrets.dir, 'image-id');
    const build = async () => {
      const output = new BuildOutput(plan);
      const status = await docker.stream(
        [
          'build',
          '--network=host',
          '--progress=plain',
          ...(options.noCache ? ['--no-cache'] : []),
          ...hostNetworkBuildArgs(),
          ...secretArgs,
          ...labelArgs(options.labels ?? {}),
          '--iidfile',
          idFile,
          '-t',
          tag,
          context,
        ],
        (line) => {
          // Redacted before it is kept: the failure's error quotes the kept lines.
          const text = logger.redact(line);
          output.push(text);
          logger.emit({ kind: 'step', name: 'image', stream: 'stdout' }, output.shown(text));
        },
        options.signal ? { signal: options.signal } : {},
      );
      return { status, output };
    };
    let { status: code, output: steps } = await build();
    // The stack image was taken as there (this process found it before) and has been removed since: made again, then built on.
    if (code !== 0 && !options.signal?.aborted && options.base === undefined && (await forgetStackImageIfGone(docker, base))) {
      logger.info(`the stack image ${base} is no longer on the engine: building it again, then the image`);
      await ensureStackImage(docker, stack!, { log: stackLog });
      ({ status: code, output: steps } = await build());
    }
    if (options.signal?.aborted) throw CoreErrors.BUILD_INTERRUPTED.create({ message: 'the image build was interrupted.' });
    if (code !== 0) throw buildFailure(plan, tag, code, steps, host.buildStepTimeoutMs ?? DEFAULT_BUILD_STEP_TIMEOUT_MS);
    // What a step that succeeded says it skipped (its warnOn rules), as the local builder reports it.
    steps.reportWarnings(logger);
    const id = (await readFile(idFile, 'utf8').catch(() => '')).trim() || (await docker.ok(['image', 'inspect', '--format', '{{.Id}}', tag])).trim();
    logger.info(`built image ${tag} (${id.slice(0, 19)}) in ${formatSeconds(Date.now() - started)}`);
    if (options.oci !== undefined) await writeOciLayout(docker, tag, options.oci, secrets.dir, logger);
    return { plan, lowered, digest, environment, host, tag, id, context };
  } finally {
    await secrets.remove();
  }
}

/**
 * BuildKit's plain progress, read back by step: each line of a build vertex is
 * `#<n> <seconds> <text>`, each step's first line is its STEP_MARKER, and a
 * failed vertex ends with `#<n> ERROR: … exit code: <status>`.
 */
class BuildOutput {
  private readonly byVertex = new Map<string, string[]>();
  private readonly stepOf = new Map<string, string>();
  private readonly warnings: Map<string, OutputWarnings>;

  private readonly steps: Map<string, RunPlan['build']['steps'][number]>;

  constructor(plan: RunPlan) {
    this.warnings = new Map(plan.build.steps.filter((s) => s.warnOn?.length).map((s) => [s.name, new OutputWarnings(s.warnOn)]));
    this.steps = new Map(plan.build.steps.map((s) => [s.name, s]));
  }

  /**
   * A line as the build's reader sees it. BuildKit names a RUN vertex by its whole
   * instruction (cache and secret mounts, exports, an inline script of many lines):
   * a plan step's vertex is named as the local build names the step.
   */
  shown(line: string): string {
    const [, vertex, instruction = ''] = /^(#\d+ \[[^\]]*\] RUN )(.*)$/.exec(line) ?? [];
    const at = instruction.indexOf(STEP_MARKER);
    const name = vertex !== undefined && at >= 0 ? /^[\w.-]+/.exec(instruction.slice(at + STEP_MARKER.length))?.[0] : undefined;
    const step = name === undefined ? undefined : this.steps.get(name);
    return step ? `${vertex}step ${step.name}: ${describeStep(step)}` : line;
  }

  reportWarnings(logger: Logger): void {
    for (const collector of this.warnings.values()) collector.report(logger);
  }

  failedVertex: string | undefined;
  exitCode: number | null = null;
  last = '';

  push(line: string): void {
    const m = /^#(\d+) (?:[\d.]+ )?(.*)$/.exec(line);
    if (!m) return;
    const [, vertex, text] = m as unknown as [string, string, string];
    if (text.startsWith(STEP_MARKER)) this.stepOf.set(vertex, text.slice(STEP_MARKER.length).trim());
    if (text.startsWith('ERROR:')) {
      this.failedVertex = vertex;
      this.exitCode = Number(/exit code: (\d+)/.exec(text)?.[1] ?? NaN) || null;
      this.last = text;
      return;
    }
    const step = this.stepOf.get(vertex);
    if (step !== undefined) this.warnings.get(step)?.push(text);
    const lines = this.byVertex.get(vertex) ?? [];
    lines.push(text);
    if (lines.length > 200) lines.shift();
    this.byVertex.set(vertex, lines);
  }

  /** The plan's step that failed, and what it printed. */
  failedStep(): { name: string; output: string[] } | undefined {
    const name = this.failedVertex === undefined ? undefined : this.stepOf.get(this.failedVertex);
    return name === undefined ? undefined : { name, output: this.byVertex.get(this.failedVertex as string) ?? [] };
  }
}

/** The failure of a build: the failed step's coded error when one of its onFailure rules applies, else IMAGE_BUILD_FAILED naming it. */
function buildFailure(plan: RunPlan, tag: string, code: number, output: BuildOutput, stepTimeoutMs: number): Error {
  const failed = output.failedStep();
  const step = failed && plan.build.steps.find((s) => s.name === failed.name);
  // The step's own timeout stopped it (dockerfile.ts, bounded): the error a local build gives.
  if (step && output.exitCode === STEP_TIMED_OUT) return stepTimeoutError(step, stepTimeoutMs);
  if (failed && step) {
    const explained = explainFailure(step, { notFound: output.exitCode === 127, exitCode: output.exitCode, output: failed.output });
    if (explained) return explained;
    return CoreErrors.IMAGE_BUILD_FAILED.create({
      message: `step "${step.name}" (${describeStep(step)}) failed in the build of ${tag} with exit status ${output.exitCode ?? 'unknown'}.`,
      details: { tag, step: step.name, exitCode: output.exitCode },
    });
  }
  return CoreErrors.IMAGE_BUILD_FAILED.create({ message: `docker build of ${tag} failed (exit status ${code})${output.last ? `: ${output.last}` : ''}.`, details: { tag, code } });
}

/** `docker save` then skopeo: the image as an OCI layout (which has no HEALTHCHECK field: NOTES.md). */
async function writeOciLayout(docker: DockerCli, tag: string, dir: string, scratch: string, logger: Logger): Promise<void> {
  const archive = join(scratch, 'image.tar');
  await docker.ok(['save', '-o', archive, tag]);
  // No time limit: a large image takes as long as it takes; skopeo reads its own configuration from runplan's environment.
  const copied = await runProgram('skopeo', ['copy', '--quiet', `docker-archive:${archive}`, `oci:${dir}:${tag.split(':').pop() ?? 'latest'}`], { env: process.env, timeoutMs: 0 });
  if (!copied?.ok) {
    throw CoreErrors.ENGINE_COMMAND_FAILED.create({
      message: `skopeo copy to ${dir} failed: ${copied === undefined ? 'skopeo is not on PATH' : copied.stderr.trim() || `exit status ${copied.exitCode}`}`,
      fix: 'Install skopeo (apt-get install skopeo).',
    });
  }
  await rm(archive, { force: true });
  logger.info(`wrote the OCI layout of ${tag} to ${dir} (OCI has no HEALTHCHECK field: engines that run it need their own probe)`);
}
