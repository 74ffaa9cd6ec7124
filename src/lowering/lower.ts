import { posix } from 'node:path';
import { type Bindings, bindProcess, bindStep, fillPlaceholders } from '../plan/placeholders.js';
import type { BuildStep, FileChunk, Layer, PlannedFile, PlannedProcess, RunPlan } from '../plan/schema.js';
import { processGroups, type ProcessGroup } from './process-groups.js';

/**
 * A build step or hook as an executor runs it: placeholders filled (argv, env,
 * PATH additions), `cwd` and every PATH addition an absolute directory.
 */
export type LoweredStep = BuildStep;

/** A process as an executor starts it: bound as a step is, its readiness sockets filled too. */
export type LoweredProcess = PlannedProcess;

/** A build step with the layer it fills (a cacheable one, or a warm-start one), if any. */
interface LoweredBuildStep {
  readonly step: LoweredStep;
  readonly layer: LoweredLayer | undefined;
}

/** A layer of the plan and the absolute directory it is in. */
export interface LoweredLayer extends Layer {
  readonly dir: string;
}

/** A chunk of a file once the executor's placeholders are in it: text, or a variable read when the file is written. */
export type LoweredChunk = Exclude<FileChunk, { placeholder: unknown }>;

/** A planned file with the absolute path it is written to and its placeholders filled. */
export interface LoweredFile extends Omit<PlannedFile, 'content'> {
  readonly target: string;
  readonly content: readonly LoweredChunk[];
}

/** Processes that run side by side (process-groups.ts), each lowered. */
export type LoweredGroup = ProcessGroup;

/** A variable of the plan's environment with its placeholder filled; a secret has no value here (the executor holds it). */
interface LoweredVariable {
  readonly name: string;
  readonly secret: boolean;
  readonly value: string | undefined;
}

/**
 * What every executor consumes of a plan (issue 23, "lower the plan once"): the
 * plan's rules applied once, for one executor's bindings. What is left to an
 * executor is how it carries this out (a child process, a line of shell), not
 * what it means.
 */
export interface LoweredPlan {
  readonly plan: RunPlan;
  readonly bindings: Bindings;
  readonly environment: readonly LoweredVariable[];
  readonly build: {
    readonly steps: readonly LoweredBuildStep[];
    /** Warm-start layers no step fills (CC_OVERRIDE_BUILDCACHE paths): put in place before the first step, saved after the last. */
    readonly warmStart: readonly LoweredLayer[];
  };
  readonly processes: readonly LoweredProcess[];
  /** The web process, else the first: whose environment a command that is no process of the plan gets. */
  readonly web: LoweredProcess | undefined;
  readonly groups: readonly LoweredGroup[];
  /** The processes' PATH additions, the web process's first, each once: what a shell in the deployment finds. */
  readonly programPath: readonly string[];
  readonly files: readonly LoweredFile[];
  readonly layers: readonly LoweredLayer[];
  readonly runHooks: { readonly preRun: readonly LoweredStep[]; readonly succeeded: readonly LoweredStep[]; readonly failed: readonly LoweredStep[] };
  /** The instance the plan was sized for; undefined for a plan made before plans recorded it. */
  readonly resources: { readonly cpus: number; readonly memoryMb: number } | undefined;
}

/**
 * The cwd rule: a directory of the plan (a step's cwd, a PATH addition, a
 * file's or a layer's path) is relative to the application's home unless it is
 * absolute (a filled ${RUBY_BIN}).
 */
function inAppHome(path: string, bindings: Bindings): string {
  return posix.resolve(appHome(bindings), path);
}

function appHome(bindings: Bindings): string {
  // Bound by the executor; fillPlaceholders names what is missing.
  return fillPlaceholders('${APP_HOME}', bindings);
}

/** The PATH rule: a step's or process's directories first, in the plan's order, then the PATH it inherits. */
export function assemblePath(dirs: readonly string[], inherited: string | undefined): string {
  return [...dirs, inherited ?? ''].filter((d) => d !== '').join(':');
}

/**
 * The environment rule of a step, hook or process: what it inherits from the
 * machine (`inherited`), overridden by the deployment's environment, overridden
 * by the plan's own variables of that step or process; then its PATH
 * additions before the PATH that results. An image's entrypoint is the same
 * rule in shell: the deployment's variables are the container's, then it
 * exports the step's and puts assemblePath's directories first.
 */
export function mergeEnvironment(
  inherited: Readonly<Record<string, string>>,
  deployment: Readonly<Record<string, string>>,
  lowered: { readonly env: Readonly<Record<string, string>>; readonly pathPrepend: readonly string[] },
): Record<string, string> {
  const merged: Record<string, string> = { ...inherited, ...deployment, ...lowered.env };
  if (lowered.pathPrepend.length > 0) merged.PATH = assemblePath(lowered.pathPrepend, merged.PATH);
  return merged;
}

/** A step or hook with its placeholders filled and its directories absolute. */
function lowerStep(step: BuildStep, bindings: Bindings): LoweredStep {
  const bound = bindStep(step, bindings);
  return { ...bound, cwd: inAppHome(bound.cwd, bindings), pathPrepend: bound.pathPrepend.map((p) => inAppHome(p, bindings)) };
}

/** A process likewise, its readiness conditions filled. */
function lowerProcess(proc: PlannedProcess, bindings: Bindings): LoweredProcess {
  const bound = bindProcess(proc, bindings);
  return { ...bound, cwd: inAppHome(bound.cwd, bindings), pathPrepend: bound.pathPrepend.map((p) => inAppHome(p, bindings)) };
}

function lowerFile(file: PlannedFile, bindings: Bindings): LoweredFile {
  const content: LoweredChunk[] = [];
  for (const chunk of file.content) {
    const piece: LoweredChunk = 'placeholder' in chunk ? { text: fillPlaceholders(`\${${chunk.placeholder}}`, bindings) } : chunk;
    const last = content.at(-1);
    // Adjacent text is one chunk: a file is the same whichever placeholders it was made with.
    if ('text' in piece && last !== undefined && 'text' in last) content[content.length - 1] = { text: last.text + piece.text };
    else content.push(piece);
  }
  return { ...file, target: inAppHome(file.path, bindings), content };
}

/** The plan for one executor: `bindings` are the values it gives the plan's placeholders. Pure. */
export function lowerPlan(plan: RunPlan, bindings: Bindings): LoweredPlan {
  const layers = plan.layers.map((l) => ({ ...l, dir: inAppHome(l.path, bindings) }));
  const layerOf = (name: string | null) => (name === null ? undefined : layers.find((l) => l.name === name));
  const processes = plan.processes.map((p) => lowerProcess(p, bindings));
  const byName = new Map(processes.map((p) => [p.name, p]));
  const lowered = (p: PlannedProcess) => byName.get(p.name) as LoweredProcess;
  const web = processes.find((p) => p.role === 'web') ?? processes[0];
  const webFirst = [...processes].sort((a, b) => Number(b.role === 'web') - Number(a.role === 'web'));
  const hooks = (steps: readonly BuildStep[] | undefined) => (steps ?? []).map((s) => lowerStep(s, bindings));
  return {
    plan,
    bindings,
    environment: plan.environment.variables.map((v) => ({
      name: v.name,
      secret: v.secret,
      value: v.secret ? undefined : v.placeholder ? fillPlaceholders(`\${${v.placeholder}}`, bindings) : (v.value ?? ''),
    })),
    build: {
      steps: plan.build.steps.map((s) => ({ step: lowerStep(s, bindings), layer: layerOf(s.layer) })),
      warmStart: layers.filter((l) => l.reuse === 'warm-start' && l.cacheKey !== null && !plan.build.steps.some((s) => s.layer === l.name)),
    },
    processes,
    web,
    groups: processGroups(plan).map((g) => ({
      name: g.name,
      processes: g.processes.map(lowered),
      web: g.web && lowered(g.web),
      main: lowered(g.main),
      helpers: g.helpers.map(lowered),
    })),
    programPath: [...new Set(webFirst.flatMap((p) => p.pathPrepend))],
    files: plan.files.map((f) => lowerFile(f, bindings)),
    layers,
    runHooks: { preRun: hooks(plan.runHooks?.preRun), succeeded: hooks(plan.runHooks?.succeeded), failed: hooks(plan.runHooks?.failed) },
    resources: plan.instance && { cpus: plan.instance.cpus, memoryMb: plan.instance.memoryMb },
  };
}
