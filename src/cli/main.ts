import { formatLogLine } from '../log/format-line.js';
import { readFile, stat } from 'node:fs/promises';
import type { LogLine } from '../log/logger.js';
import type { RunPlan } from '../plan/schema.js';
import { Logger } from '../log/logger.js';
import { writeFileAtomic } from '../files/atomic-write.js';
import { buildpackLimits, defaultCacheDir } from '../host/host-settings.js';
import { gatherInventory, parseInventory } from '../planning/gather-inventory.js';
import { diffPlans, formatDiff } from '../plan/diff.js';
import { planDigest } from '../plan/digest.js';
import { runPlanJsonSchema } from '../plan/json-schema.js';
import { createPlan, parsePlan } from '../planning/create-plan.js';
import { APP_FOLDER_VARIABLE, normaliseAppFolder } from '../planning/app-folder.js';
import { buildApp, healthError, redactError } from '../engines/local/local-executor.js';
import { ENGINES } from '../compose/engine-table.js';
import { deploy } from '../executor/deploy-flow.js';
import { planToCarryOut } from '../planning/plan-to-carry-out.js';
import { defaultRegistry } from '../compose/default-registry.js';
import { CoreErrors } from '../errors/core-errors.js';
import { lineExcerpt } from '../errors/excerpt.js';
import { isRunplanError } from '../errors/runplan-error.js';
import { assembleEnvironment } from '../env/assemble.js';
import { secretsOnCommandLine } from '../env/command-line-secrets.js';
import type { BuildpackRegistry } from '../buildpack/registry.js';
import { healthPathsFromEnv, planHealthCheck } from '../health/health-paths.js';
import { HttpHealthChecker } from '../executor/http-health-checker.js';
import { formatSeconds } from '../health/probes.js';
import { RUNPLAN_VERSION } from '../version.js';
import { parseCli, quoteArgument, USAGE, type CliArguments } from './args.js';
import { formatPlan } from './format-plan.js';
import { CliSecrets } from './cli-secrets.js';
import { cliOutput, type CliOutput, formatError } from './output.js';
import { terminalSafe } from './terminal-text.js';
import { untilFinished } from './unfinished.js';

type Write = (text: string) => void;

/** Exit statuses: 0 success, 1 the deployment failed, 2 bad input, 70 internal error, 130 interrupted. */
export const EXIT = { ok: 0, deploymentFailed: 1, input: 2, internal: 70, interrupted: 130 } as const;

export async function main(argv: readonly string[], out: Write = stdout, err: Write = stderr): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help') || argv.length === 0) {
    const help = `runplan ${RUNPLAN_VERSION}: plan, build, run and health-check Node.js, Ruby on Rails and Play 1.x applications.\n\n${USAGE}\n`;
    // --json: a document, as every command gives.
    out(argv.includes('--json') ? `${JSON.stringify({ ok: true, command: 'help', version: RUNPLAN_VERSION, usage: USAGE }, null, 2)}\n` : help);
    return argv.length === 0 ? EXIT.input : EXIT.ok;
  }
  if (argv.includes('-v') || argv.includes('--version')) {
    out(argv.includes('--json') ? `${JSON.stringify({ ok: true, command: 'version', version: RUNPLAN_VERSION }, null, 2)}\n` : `${RUNPLAN_VERSION}\n`);
    return EXIT.ok;
  }
  // Known before the arguments are parsed, so that a usage error is machine-readable too.
  const o = cliOutput(argv.includes('--events') ? 'events' : argv.includes('--json') ? 'json' : 'human', out, err, formatLogLine);
  const secrets = new CliSecrets();
  try {
    // Exit status 0 only for a command that did its work: one left waiting for ever is an error, not an empty success.
    return await untilFinished(command(argv, out, o, secrets));
  } catch (error) {
    return reportError(secrets.redact(error), o);
  }
}

/** The secrets each command was given, by its arguments: what it loads (a --buildpack, a saved plan) may declare more names secret. */
const givenSecrets = new WeakMap<CliArguments, CliSecrets>();

async function command(argv: readonly string[], out: Write, o: CliOutput, secrets: CliSecrets): Promise<number> {
  const args = await parseCli(argv);
  secrets.given(args.env);
  givenSecrets.set(args, secrets);
  switch (args.command) {
    case 'schema':
      out(`${JSON.stringify(runPlanJsonSchema(), null, 2)}\n`);
      return EXIT.ok;
    case 'plan':
      return await planCommand(args, o);
    case 'build':
      return await buildCommand(args, o);
    case 'run':
      return await runCommand(args, o);
    case 'check':
      return await checkCommand(args, o);
    case 'inventory':
      return await inventoryCommand(args, o);
    case 'image':
      return await imageCommand(args, o);
    case 'stack':
      return await stackCommand(args, o);
    case 'deploy':
      return await deployCommand(args, o);
    case 'k8s':
      return await k8sCommand(args, o);
    case 'diff':
      return await diffCommand(args, o);
  }
}

/** What every command that plans passes to the library: the saved inventory, previous plan or plan it names, read and validated. */
async function appOptions(args: CliArguments, o: CliOutput, signal?: AbortSignal) {
  const registry = await cliRegistry(args, signal);
  warnOfSecretArguments(args, registry, o);
  const plan = args.plan ? parsePlan(await readJson(args.plan, 'plan'), args.plan) : undefined;
  // Secret in the plan, secret when given (as the environment of a saved plan makes them).
  if (plan) givenSecrets.get(args)?.declare(plan.environment.variables.filter((v) => v.secret).map((v) => v.name));
  return {
    registry,
    appDir: args.target as string,
    env: args.env,
    host: hostForPlan(args, plan),
    ...(args.type ? { type: args.type } : {}),
    ...(args.inventory ? { inventory: parseInventory(await readJson(args.inventory, 'inventory'), args.inventory) } : {}),
    ...(args.previous ? { previous: parsePlan(await readJson(args.previous, 'plan'), args.previous) } : {}),
    ...(plan ? { plan } : {}),
  };
}

/** With a saved plan, `--cpus` alone (or `--memory` alone) keeps the plan's other half rather than this machine's: only what was given is compared with the plan. */
function hostForPlan(args: CliArguments, plan: RunPlan | undefined): CliArguments['host'] {
  if (plan?.instance === undefined || args.host.instance === undefined) return args.host;
  const { cpus = plan.instance.cpus, memoryMb = plan.instance.memoryMb } = args.instanceGiven;
  return { ...args.host, instance: { cpus, memoryMb } };
}

/** A coded warning line for each secret whose value was written in runplan's arguments, before anything else is said. */
function warnOfSecretArguments(args: CliArguments, registry: BuildpackRegistry, o: CliOutput): void {
  for (const w of secretsOnCommandLine(args.valuesInArguments, new Set(registry.secretVariables()))) {
    o.line({ origin: { kind: 'runplan' }, level: 'warn', text: `${w.code}: ${w.message} ${w.fix}` });
  }
}

/** The built-in buildpacks, and the host's given with --buildpack (loaded only then). */
async function cliRegistry(args: CliArguments, signal?: AbortSignal) {
  const registry = defaultRegistry();
  if (args.buildpacks.length === 0) return registry;
  const { loadBuildpacks } = await import('./load-buildpacks.js');
  const loaded = await loadBuildpacks(registry, args.buildpacks, { timeoutMs: buildpackLimits(args.host).buildpackTimeoutMs, ...(signal ? { signal } : {}) });
  givenSecrets.get(args)?.declare(loaded.secretVariables());
  return loaded;
}

/** ...and what building commands add: printed lines, the plan shown first (with its digest), Ctrl-C. */
async function buildOptions(args: CliArguments, o: CliOutput, signal: AbortSignal) {
  const onPlan = (plan: RunPlan) => {
    if (o.mode === 'events') o.event('plan', { digest: planDigest(plan), plan });
    else o.progress(`${formatPlan(plan, args.target)}\n\n==> ${args.plan ? `carrying out ${args.plan}` : 'carrying out the plan above'}: ${planDigest(plan)}\n`);
  };
  return { ...(await appOptions(args, o, signal)), sink: (line: LogLine) => o.line(line), signal, onPlan, ...(args.noCache ? { noCache: true } : {}) };
}

/**
 * The largest plan and inventory runplan reads back. A plan is tens of kilobytes and
 * an inventory hundreds: these leave room for growth, not for a file that would
 * take the machine's memory before it is even checked.
 */
const MAX_SAVED_DOCUMENT_BYTES = { plan: 16 * 1024 * 1024, inventory: 64 * 1024 * 1024 } as const;

/** A JSON document named on the command line, or the coded error saying why it cannot be used. */
async function readJson(path: string, what: 'plan' | 'inventory'): Promise<unknown> {
  const invalid = what === 'plan' ? CoreErrors.PLAN_DOCUMENT_INVALID : CoreErrors.INVENTORY_INVALID;
  let text: string;
  try {
    // A FIFO would block the read for ever, a device never end: only a regular file of bounded size is read.
    const info = await stat(path);
    if (!info.isFile()) throw invalid.create({ message: `${path} is not a regular file.`, file: path });
    const max = MAX_SAVED_DOCUMENT_BYTES[what];
    if (info.size > max) throw invalid.create({ message: `${path} holds ${info.size} bytes; a saved ${what} is at most ${max} bytes.`, file: path });
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (invalid.is(error)) throw error;
    throw invalid.create({ message: `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`, file: path });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid.create({ message: `${path} is not JSON: ${lineExcerpt((error as Error).message)}.`, file: path });
  }
}

/**
 * Runs `work` with SIGINT/SIGTERM turned into an abort signal (so a build stops
 * its step and removes the half-done build) and a promise of the signal.
 */
async function withSignals<T>(work: (signal: AbortSignal, stopRequested: Promise<NodeJS.Signals>) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let wake: (signal: NodeJS.Signals) => void = () => undefined;
  const stopRequested = new Promise<NodeJS.Signals>((resolve) => (wake = resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    controller.abort(signal);
    wake(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await work(controller.signal, stopRequested);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function planCommand(args: CliArguments, o: CliOutput): Promise<number> {
  const { plan } = await createPlan(await appOptions(args, o));
  // plan --json prints the plan itself: the artifact that build --plan and run --plan read.
  if (o.mode === 'events') o.result('', { command: 'plan', digest: planDigest(plan), plan });
  else o.document(o.mode === 'json' ? `${JSON.stringify(plan, null, 2)}\n` : `${formatPlan(plan, args.target)}\n\nplan digest: ${planDigest(plan)}\n`);
  return EXIT.ok;
}

async function imageCommand(args: CliArguments, o: CliOutput): Promise<number> {
  const started = Date.now();
  // Loaded on first use: only the engine commands need the engines.
  const { buildImage } = await import('../engines/image/build-image.js');
  return withSignals(async (signal) => {
    const built = await buildImage({
      ...(await buildOptions(args, o, signal)),
      ...(args.tag ? { tag: args.tag } : {}),
      ...(args.base ? { base: args.base } : {}),
      ...(args.out ? { out: args.out } : {}),
      ...(args.oci ? { oci: args.oci } : {}),
    });
    o.result(built.tag ? `==> image ${built.tag} (${built.id}) in ${formatSeconds(Date.now() - started)}\n` : `==> build context in ${built.context}\n`, {
      command: 'image',
      digest: built.digest,
      tag: built.tag ?? null,
      id: built.id ?? null,
      context: built.context,
      durationMs: Date.now() - started,
    });
    return EXIT.ok;
  });
}

async function stackCommand(args: CliArguments, o: CliOutput): Promise<number> {
  const { DockerCli } = await import('../engines/docker-cli.js');
  const { STACKS, ensureStackImage } = await import('../engines/stack-images.js');
  const names = args.type === undefined ? Object.keys(STACKS) : [args.type];
  const docker = await DockerCli.connect();
  const images: Record<string, string> = {};
  for (const name of names) {
    const stack = STACKS[name];
    if (!stack) throw CoreErrors.DETECT_UNKNOWN_TYPE.create({ message: `there is no stack "${name}"; stacks: ${Object.keys(STACKS).join(', ')}.` });
    const tag = await ensureStackImage(docker, stack, { rebuild: args.rebuild, log: (line) => o.progress(`[stack ${name}] ${line}\n`) });
    images[name] = tag;
    if (o.mode === 'human') o.progress(`==> ${tag}\n`);
  }
  if (o.mode !== 'human') o.result('', { command: 'stack', images });
  return EXIT.ok;
}

async function deployCommand(args: CliArguments, o: CliOutput): Promise<number> {
  // Kubernetes under podman serves until stopped, as `run` does: its pods live as long as runplan.
  if (args.engine === 'podman') return runCommand(args, o);
  const started = Date.now();
  const { deployToSwarm, removeSwarmApp } = await import('../engines/swarm.js');
  if (args.remove) {
    const { DockerCli } = await import('../engines/docker-cli.js');
    const { appName } = await import('../engines/app-name.js');
    // The name deploy gave it: its folder's when APP_FOLDER is given, as it was to deploy.
    const folder = assembleEnvironment(args.env).entry(APP_FOLDER_VARIABLE)?.value.trim() ?? '';
    const app = appName(args.target as string, folder === '' ? '' : normaliseAppFolder(folder));
    const removed = await removeSwarmApp(await DockerCli.connect(), app, { log: (line) => o.progress(`==> ${line}\n`) });
    const count = removed.services.length + removed.networks.length + removed.secrets.length + removed.configs.length;
    o.result(count === 0 ? `==> nothing of ${app} in the swarm\n` : `==> removed ${app} from the swarm\n`, { command: 'deploy', app, removed });
    return EXIT.ok;
  }
  return withSignals(async (signal) => {
    try {
      const deployment = await deployToSwarm({
        ...(await buildOptions(args, o, signal)),
        ...(args.replicas ? { replicas: args.replicas } : {}),
        ...(args.image ? { image: args.image } : {}),
        ...(args.base ? { base: args.base } : {}),
      });
      const what = deployment.changed.length === 0 ? 'already deployed as planned' : `deployed (${deployment.changed.join(', ')})`;
      o.result(
        // "deployment healthy", as `run` says it: the health gate passed, whatever the engine.
        `==> deployment healthy: ${deployment.app} ${what} in ${formatSeconds(Date.now() - started)}: services ${deployment.services.join(', ')}${deployment.url ? `; ${deployment.url} (published on every address of this host)` : ''}\n`,
        { command: 'deploy', app: deployment.app, changed: deployment.changed, services: deployment.services, url: deployment.url ?? null, durationMs: Date.now() - started },
      );
      return EXIT.ok;
    } catch (error) {
      if (!signal.aborted) throw error;
      return interrupted(o, signal, 'swarm finishes or rolls back what was started (docker service ls)');
    }
  });
}

async function k8sCommand(args: CliArguments, o: CliOutput): Promise<number> {
  const { exportToKubernetes } = await import('../engines/kubernetes-export.js');
  return withSignals(async (signal) => {
    const result = await exportToKubernetes({
      ...(await buildOptions(args, o, signal)),
      outDir: args.out as string,
      ...(args.image ? { image: args.image } : {}),
      ...(args.base ? { base: args.base } : {}),
      ...(args.replicas ? { replicas: args.replicas } : {}),
    });
    const { cpus, memoryMb } = result.host.instance;
    o.result(`==> ${result.files.length} manifests of image ${result.image} in ${args.out} (each Pod: ${cpus} CPU, ${memoryMb} MiB); kubectl apply -f ${args.out}\n`, {
      command: 'k8s',
      image: result.image,
      out: args.out,
      files: result.files,
      instance: { cpus, memoryMb },
    });
    return EXIT.ok;
  });
}

async function inventoryCommand(args: CliArguments, o: CliOutput): Promise<number> {
  const registry = await cliRegistry(args);
  if (args.type !== undefined && !registry.get(args.type)) {
    throw CoreErrors.DETECT_UNKNOWN_TYPE.create({ message: `unknown application type "${args.type}"; registered types: ${registry.ids().join(', ')}.` });
  }
  const inventory = await gatherInventory(registry, {
    cacheDir: args.host.cacheDir ?? defaultCacheDir(),
    timeoutMs: buildpackLimits(args.host).inventoryTimeoutMs,
    ...(args.type ? { ids: [args.type] } : {}),
  });
  const text = `${JSON.stringify(inventory, null, 2)}\n`;
  if (args.out === undefined) {
    if (o.mode === 'events') o.result('', { command: 'inventory', inventory });
    else o.document(text);
  } else {
    await writeFileAtomic(args.out, text);
    o.result(`==> wrote the inventory of ${Object.keys(inventory.buildpacks).join(', ')} to ${args.out}\n`, { command: 'inventory', out: args.out, buildpacks: Object.keys(inventory.buildpacks) });
  }
  return EXIT.ok;
}

async function diffCommand(args: CliArguments, o: CliOutput): Promise<number> {
  const [oldFile, newFile] = [args.target as string, args.second as string];
  const changes = diffPlans(parsePlan(await readJson(oldFile, 'plan'), oldFile), parsePlan(await readJson(newFile, 'plan'), newFile));
  if (o.mode === 'events') o.result('', { command: 'diff', changes });
  else o.document(o.mode === 'json' ? `${JSON.stringify(changes, null, 2)}\n` : `${formatDiff(changes)}\n`);
  // As diff(1): 0 when the plans are the same, 1 when they differ.
  return changes.length === 0 ? EXIT.ok : EXIT.deploymentFailed;
}

async function buildCommand(args: CliArguments, o: CliOutput): Promise<number> {
  const started = Date.now();
  return withSignals(async (signal) => {
    try {
      const built = await buildApp(await buildOptions(args, o, signal));
      o.result(`==> built ${built.plan.app.type} application in ${formatSeconds(Date.now() - started)}\n`, {
        command: 'build',
        appType: built.plan.app.type,
        digest: planDigest(built.plan),
        appDir: built.appDir,
        steps: built.steps,
        durationMs: Date.now() - started,
      });
      return EXIT.ok;
    } catch (error) {
      if (!signal.aborted) throw error;
      return interrupted(o, signal, 'the unfinished build was removed');
    }
  });
}

async function runCommand(args: CliArguments, o: CliOutput): Promise<number> {
  return withSignals(async (signal, stopRequested) => {
    const engine = ENGINES[args.command === 'deploy' ? 'podman' : args.runner];
    // Every engine of the table through the one deploy flow, with one result.
    const carryOut = async () => {
      const options = await buildOptions(args, o, signal);
      return deploy(await planToCarryOut(options), await engine.executor(options), options);
    };
    const deployment = await carryOut().catch((error: unknown) => {
      if (signal.aborted) return undefined;
      throw error;
    });
    if (!deployment) return interrupted(o, signal, 'nothing left running');
    if (signal.aborted) {
      // Healthy, but stopped before the host was told: it did not serve, and the result says so.
      await deployment.stop();
      return interrupted(o, signal, 'the deployment was stopped as it became healthy; nothing left running');
    }
    const containers = `${deployment.running.processes().length} container(s)`;
    const where =
      engine.name === 'podman' ? `published on 127.0.0.1 by podman kube play, ${containers}` : engine.name === 'docker' ? `published on 127.0.0.1 by ${containers}` : 'listening on 0.0.0.0';
    const { built } = deployment;
    const url = `http://127.0.0.1:${built.plan.healthCheck.port}/`;
    // Printed while the deployment runs: a host reads it, then stops runplan with SIGTERM when it is done.
    o.result(`==> deployment healthy: ${url} (${where}); Ctrl-C stops it\n`, {
      command: args.command,
      status: 'healthy',
      appType: built.plan.app.type,
      digest: planDigest(built.plan),
      url,
      ...('appDir' in built && 'steps' in built ? { appDir: built.appDir, steps: built.steps } : {}),
      processes: deployment.running.processes().map((p) => ({ name: p.name, pid: p.pid ?? null })),
      health: deployment.health.results,
    });
    o.progress(`==> ${await stopRequested}: stopping\n`);
    await deployment.stop();
    o.progress('==> stopped; nothing left running\n');
    if (o.mode === 'events') o.event('stopped', {});
    return EXIT.ok;
  });
}

async function checkCommand(args: CliArguments, o: CliOutput): Promise<number> {
  let base: URL;
  try {
    base = new URL(args.target as string);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw CoreErrors.CLI_USAGE.create({ message: `check needs an http:// or https:// base URL, got ${quoteArgument(args.target as string)}.` });
  }
  const registry = await cliRegistry(args);
  warnOfSecretArguments(args, registry, o);
  const buildpack = args.type === undefined ? undefined : registry.get(args.type);
  if (args.type !== undefined && !buildpack) {
    throw CoreErrors.DETECT_UNKNOWN_TYPE.create({ message: `unknown application type "${args.type}"; registered types: ${registry.ids().join(', ')}.` });
  }
  const env = assembleEnvironment({ ...args.env, secretNames: registry.secretVariables() });
  const port = Number(base.port || (base.protocol === 'https:' ? 443 : 80));
  const check = planHealthCheck(
    healthPathsFromEnv(env.list().map((e) => [e.name, e.value])),
    buildpack?.defaultHealthCheck ?? { kind: 'port', reason: 'no path is configured and no --type given: the port must accept connections' },
    port,
    args.host.healthTimeoutMs === undefined ? {} : { readyTimeoutMs: args.host.healthTimeoutMs },
  );
  const logger = new Logger((line) => o.line(line), env.redactor);
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(base.hostname);
  const report = await new HttpHealthChecker().check({ baseUrl: base.href, check, verifyListenAddress: loopback }, logger);
  // A failure gets the same code as a failed deployment's check, for hosts that read the code.
  if (!report.ok) throw redactError(healthError(report), env.redactor);
  if (o.mode !== 'human') o.result('', { command: 'check', url: base.href, results: report.results });
  return EXIT.ok;
}

/** How each kind of line is shown: health-check lines exactly as the specification words them. */

/**
 * A command stopped by SIGINT or SIGTERM: exit status 130, and for programs an
 * error document (RUNPLAN_E_CLI_INTERRUPTED) rather than none, so that --json
 * always ends with exactly one.
 */
function interrupted(o: CliOutput, signal: AbortSignal, outcome: string): number {
  const reason = String(signal.reason);
  if (o.mode === 'human') o.progress(`==> interrupted by ${reason}; ${outcome}\n`);
  else {
    const error = CoreErrors.CLI_INTERRUPTED.create({ message: `interrupted by ${reason}; ${outcome}.`, details: { signal: reason } });
    o.error(formatError(error), error);
  }
  return EXIT.interrupted;
}

/** `error`, already redacted of the secret values the command was given (CliSecrets), as people or programs read it, and its exit status. */
function reportError(error: unknown, o: CliOutput): number {
  if (isRunplanError(error)) {
    o.error(formatError(error), error);
    return error.kind === 'input' ? EXIT.input : error.kind === 'deployment' ? EXIT.deploymentFailed : EXIT.internal;
  }
  // Not a user mistake: show everything needed to report the bug.
  o.error(`internal error: ${(error as Error)?.stack ?? String(error)}\n`, error);
  return EXIT.internal;
}

function stdout(text: string): void {
  process.stdout.write(terminalSafe(text));
}

function stderr(text: string): void {
  process.stderr.write(terminalSafe(text));
}

// Run when executed as the `runplan` binary (not when imported by tests).
if (process.argv[1] && /(?:^|[\\/])(cli\.c?js|runplan)$/.test(process.argv[1])) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      // Anything still holding the event loop open must not keep the CLI alive.
      setTimeout(() => process.exit(code), 2_000).unref();
    },
    (error: unknown) => {
      // main reports every error itself; this is a failure of the reporting, never a success.
      process.stderr.write(`internal error: ${terminalSafe(String((error as Error)?.stack ?? error))}\n`);
      process.exitCode = EXIT.internal;
    },
  );
}
