import { CoreErrors } from '../errors/core-errors.js';
import { RunplanError } from '../errors/runplan-error.js';
import { formatSeconds } from '../health/probes.js';
import { type AppUser, spawnIdentity } from '../process/app-user.js';
import type { Logger } from '../log/logger.js';
import { OutputBudget } from '../log/line-splitter.js';
import { describeStep as describe } from '../plan/describe.js';
import type { BuildStep, StepFailureRule } from '../plan/schema.js';
import type { LoweredStep } from '../lowering/lower.js';
import { newTreeTag, type ProcessTree, terminateTree } from '../process/process-tree.js';
import { startProgram } from '../process/run-program.js';
import { type OutputWarning, OutputWarnings } from '../process/output-warnings.js';
import { type SandboxScope, unwrapExit } from '../sandbox/sandbox.js';
import { limitStrike } from '../sandbox/limit-strike.js';

const STEP_STOP_GRACE_MS = 5_000;
const OUTPUT_TAIL_LINES = 200;
/** What one step (or hook) may print, stdout and stderr together: the rest is counted, not shown. */
const MAX_STEP_OUTPUT_BYTES = 16 * 1024 * 1024;

export interface CommandStepContext {
  /** The whole environment of the command (nothing of runplan's own is added). */
  readonly env: Record<string, string>;
  readonly logger: Logger;
  readonly user: AppUser;
  /** The walls the step runs in (its user is the scope's); without, it runs as `user` on the machine as it is. */
  readonly scope?: SandboxScope | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs: number;
  /** Bytes of output shown (default MAX_STEP_OUTPUT_BYTES); what comes after is counted. */
  readonly maxOutputBytes?: number;
}

/**
 * Runs one lowered command step (src/lowering/lower.ts: placeholders filled, cwd absolute) as the build does — and as
 * the run-phase hooks are run: every output line shown with the step's name, the
 * whole process tree stopped when it ends, is interrupted or times out; a failure
 * is the coded error of its first matching onFailure rule, else
 * RUNPLAN_E_BUILD_STEP_FAILED. Returns the warnings its warnOn rules raised (already logged).
 */
export async function runCommandStep(step: LoweredStep, { env, logger, user, scope, signal, timeoutMs, maxOutputBytes = MAX_STEP_OUTPUT_BYTES }: CommandStepContext): Promise<OutputWarning[]> {
  if (step.run.kind === 'install') return [];
  // An interruption before the step started runs nothing.
  if (signal?.aborted) throw interrupted(step);
  // The tail of the output, for the step's onFailure rules.
  const tail: string[] = [];
  const warnings = new OutputWarnings(step.warnOn);
  const out = (line: string, stream: 'stdout' | 'stderr') => {
    tail.push(line);
    warnings.push(line);
    if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
    logger.emit({ kind: 'step', name: step.name, stream }, line, stream === 'stderr' ? 'warn' : 'info');
  };
  const command = step.run.kind === 'exec' ? step.run.argv : ['/bin/sh', '-c', step.run.script];
  const [file, ...args] = scope ? scope.command(command, step.cwd) : command;
  const before = await scope?.counters();
  // Output past the budget is counted, not split nor shown: it cannot slow the step's own timer down.
  const budget = new OutputBudget(maxOutputBytes, (max) =>
    logger.warn(`step ${step.name} printed more than ${formatBytes(max)}: the rest of its output is not shown (it is counted, and the step goes on)`),
  );
  // Its own process group, and a tag in the environment of everything it
  // starts (daemons included), so that stopping the step reaches all of it:
  // a background process holding the output pipe would otherwise keep the
  // step "running" for ever.
  const tag = newTreeTag();
  let tree: ProcessTree | undefined;
  // Waited for before the step returns: nothing it started outlives it (an interrupted hook's run folder is removed next).
  let stopWanted = false;
  let stopping: Promise<unknown> | undefined;
  const stopTree = () => {
    stopWanted = true;
    if (tree !== undefined) stopping ??= terminateTree(tree, STEP_STOP_GRACE_MS);
  };
  signal?.addEventListener('abort', stopTree, { once: true });
  // A step that hangs (a prompt, a server started in the foreground, a dead
  // network peer) must not hold the build, and the host's slot, for ever.
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    logger.warn(`step ${step.name} still running after ${formatSeconds(timeoutMs)}; stopping it and every process it started`);
    stopTree();
  }, timeoutMs);
  // The step's own timer and signal stop the whole tree (process-tree.ts), not the runner's: it stops one process.
  const result = await startProgram(file as string, args, {
    // In walls, root's programs start from / and drop to the user themselves (sandbox.ts).
    ...(scope ? { cwd: '/' } : { cwd: step.cwd, ...spawnIdentity(user) }),
    env: { ...env, ...tag.env },
    timeoutMs: 0,
    detached: true,
    onLine: out,
    lineOptions: { budget },
    onStart: (pid) => {
      tree = { pgid: pid, tag: tag.tag };
      // Interrupted or out of time while it was starting.
      if (stopWanted) stopTree();
    },
    // A step is over when its own process exits; whatever it left behind goes too.
    onExit: stopTree,
  }).done;
  clearTimeout(timer);
  signal?.removeEventListener('abort', stopTree);
  stopTree();
  await stopping;
  if (budget.hidden > 0) logger.warn(`step ${step.name}: ${budget.hidden} more bytes of output were not shown`);
  if (signal?.aborted) throw interrupted(step);
  if (timedOut) throw stepTimeoutError(step, timeoutMs);
  if (!result.ok) {
    if (scope && before) {
      const strike = limitStrike(scope.limits, before, await scope.counters());
      if (strike) throw strike.buildError(step.name, describe(step));
    }
    // The program could not be started: not on PATH, or not executable (onFailure "not-found"). In walls, setpriv starts it and says so.
    const execFailure = scope ? /^setpriv: failed to execute .*: (No such file or directory|Permission denied)$/.exec(tail[tail.length - 1] ?? '') : null;
    const startError = execFailure ? (execFailure[1] === 'Permission denied' ? 'EACCES' : 'ENOENT') : result.startError;
    const notFound = startError === 'ENOENT' || startError === 'EACCES';
    const { code: exitCode, signal: endedBy } = execFailure
      ? { code: null, signal: null }
      : scope
        ? unwrapExit(result.exitCode, result.signal ?? null)
        : { code: result.exitCode, signal: result.signal ?? null };
    const explained = explainFailure(step, { notFound, exitCode, output: tail });
    if (explained) throw explained;
    const status = exitCode !== null ? `exit status ${exitCode}` : endedBy ? `signal ${endedBy}` : `${startError ?? 'an unknown error'} (it could not be started)`;
    throw CoreErrors.BUILD_STEP_FAILED.create({
      message: `step "${step.name}" (${describe(step)}) failed with ${status}.`,
      details: { step: step.name, exitCode, signal: endedBy },
      ...(notFound
        ? { fix: startError === 'EACCES' ? `"${command[0]}" is not executable; make it executable or fix the command.` : `"${command[0]}" was not found on PATH; install it or fix the command.` }
        : {}),
    });
  }
  warnings.report(logger);
  return warnings.warnings();
}

/** RUNPLAN_E_BUILD_STEP_TIMEOUT for a step or hook stopped after `timeoutMs`, wherever it ran (here, in a container, in an image's entrypoint). */
export function stepTimeoutError(step: BuildStep, timeoutMs: number): RunplanError {
  return CoreErrors.BUILD_STEP_TIMEOUT.create({
    message: `step "${step.name}" (${describe(step)}) did not finish within ${formatSeconds(timeoutMs)} and was stopped with every process it started.`,
    details: { step: step.name, timeoutMs },
  });
}

function interrupted(step: BuildStep) {
  return CoreErrors.BUILD_INTERRUPTED.create({ message: `the build was interrupted during step "${step.name}".`, details: { step: step.name } });
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/** The coded error of the first onFailure rule of `step` that matches the failure, if any. */
export function explainFailure(step: BuildStep, failure: { notFound: boolean; exitCode: number | null; output: readonly string[] }): RunplanError | undefined {
  const rule = (step.onFailure ?? []).find((r) => matches(r, failure));
  if (!rule) return undefined;
  const { code, kind, fix, file, variable } = rule.error;
  const message = rule.error.message.includes(OUTPUT_TOKEN) ? rule.error.message.replace(OUTPUT_TOKEN, () => quotedOutput(rule, failure.output)) : rule.error.message;
  return new RunplanError(
    { code, kind, title: code, fix },
    { message, ...(file === undefined ? {} : { file }), ...(variable === undefined ? {} : { variable }), details: { step: step.name, exitCode: failure.exitCode } },
  );
}

/** In a rule's message, what the step printed: the first group of its pattern on the last matching line (what a check named). */
const OUTPUT_TOKEN = '{output}';
const MAX_QUOTED_OUTPUT = 400;

function quotedOutput(rule: StepFailureRule, output: readonly string[]): string {
  if (rule.when.kind !== 'output') return '';
  const pattern = new RegExp(rule.when.pattern, 'i');
  for (let i = output.length - 1; i >= 0; i--) {
    const m = pattern.exec(output[i] as string);
    if (m === null) continue;
    const text = (m[1] ?? m[0]).trim();
    return text.length > MAX_QUOTED_OUTPUT ? `${text.slice(0, MAX_QUOTED_OUTPUT)}…` : text;
  }
  return '';
}

function matches(rule: StepFailureRule, failure: { notFound: boolean; output: readonly string[] }): boolean {
  switch (rule.when.kind) {
    case 'any':
      return true;
    case 'not-found':
      return failure.notFound;
    case 'output': {
      const pattern = new RegExp(rule.when.pattern, 'i');
      return failure.output.some((line) => pattern.test(line));
    }
    case 'output-all':
      return rule.when.patterns.every((p) => {
        const pattern = new RegExp(p, 'i');
        return failure.output.some((line) => pattern.test(line));
      });
  }
}
