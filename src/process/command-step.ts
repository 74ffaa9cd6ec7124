import { resolve } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { RunplanError } from '../errors/runplan-error.js';
import { formatSeconds } from '../health/probes.js';
import { type AppUser, spawnIdentity } from './app-user.js';
import { LineSplitter, type Logger } from '../log/logger.js';
import { describeStep as describe } from '../plan/describe.js';
import type { BuildStep, StepFailureRule } from '../plan/schema.js';
import { newTreeTag, terminateTree } from './process-tree.js';

const STEP_STOP_GRACE_MS = 5_000;
const OUTPUT_TAIL_LINES = 200;

export interface CommandStepContext {
  /** Absolute directory of the application; the step's cwd is relative to it. */
  readonly appDir: string;
  /** The whole environment of the command (nothing of runplan's own is added). */
  readonly env: Record<string, string>;
  readonly logger: Logger;
  readonly user: AppUser;
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs: number;
}

/**
 * Runs one command step (placeholders already bound) as the build does — and as
 * the run-phase hooks are run: every output line shown with the step's name, the
 * whole process tree stopped when it ends, is interrupted or times out; a failure
 * is the coded error of its first matching onFailure rule, else
 * RUNPLAN_E_BUILD_STEP_FAILED.
 */
export async function runCommandStep(step: BuildStep, { appDir, env, logger, user, signal, timeoutMs }: CommandStepContext): Promise<void> {
  if (step.run.kind === 'install') return;
  const cwd = resolve(appDir, step.cwd);
  // The tail of the output, for the step's onFailure rules.
  const tail: string[] = [];
  const out = (stream: 'stdout' | 'stderr') => (line: string) => {
    tail.push(line);
    if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
    logger.emit({ kind: 'step', name: step.name, stream }, line, stream === 'stderr' ? 'warn' : 'info');
  };
  const [file, ...args] = step.run.kind === 'exec' ? step.run.argv : ['/bin/sh', '-c', step.run.script];
  // Loaded on first use: planning never spawns, and execa is a third of the CLI's start-up time.
  const { execa } = await import('execa');
  // Its own process group, and a tag in the environment of everything it
  // starts (daemons included), so that stopping the step reaches all of it:
  // a background process holding the output pipe would otherwise keep the
  // step "running" for ever.
  const tag = newTreeTag();
  const child = execa(file as string, args, {
    cwd,
    env: { ...env, ...tag.env },
    ...spawnIdentity(user),
    extendEnv: false,
    stdin: 'ignore',
    buffer: false,
    reject: false,
    detached: true,
  });
  const stdout = new LineSplitter(out('stdout'));
  const stderr = new LineSplitter(out('stderr'));
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  const tree = child.pid === undefined ? undefined : { pgid: child.pid, tag: tag.tag };
  const stopTree = () => (tree === undefined ? undefined : void terminateTree(tree, STEP_STOP_GRACE_MS));
  signal?.addEventListener('abort', stopTree, { once: true });
  // A step that hangs (a prompt, a server started in the foreground, a dead
  // network peer) must not hold the build, and the host's slot, for ever.
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    logger.warn(`step ${step.name} still running after ${formatSeconds(timeoutMs)}; stopping it and every process it started`);
    stopTree();
  }, timeoutMs);
  // A step is over when its own process exits; whatever it left behind goes too.
  child.once('exit', stopTree);
  const result = await child;
  clearTimeout(timer);
  signal?.removeEventListener('abort', stopTree);
  stdout.flush();
  stderr.flush();
  if (signal?.aborted) {
    throw CoreErrors.BUILD_INTERRUPTED.create({ message: `the build was interrupted during step "${step.name}".`, details: { step: step.name } });
  }
  if (timedOut) {
    throw CoreErrors.BUILD_STEP_TIMEOUT.create({
      message: `step "${step.name}" (${describe(step)}) did not finish within ${formatSeconds(timeoutMs)} and was stopped with every process it started.`,
      details: { step: step.name, timeoutMs },
    });
  }
  if (result.failed) {
    // The program could not be started: not on PATH, or not executable (onFailure "not-found").
    const notFound = result.code === 'ENOENT' || result.code === 'EACCES';
    const exitCode = result.exitCode ?? null;
    const explained = explainFailure(step, { notFound, exitCode, output: tail });
    if (explained) throw explained;
    const status = result.exitCode !== undefined ? `exit status ${result.exitCode}` : result.signal ? `signal ${result.signal}` : (result.originalMessage ?? 'unknown failure');
    throw CoreErrors.BUILD_STEP_FAILED.create({
      message: `step "${step.name}" (${describe(step)}) failed with ${status}.`,
      details: { step: step.name, exitCode, signal: result.signal ?? null },
      ...(notFound
        ? { fix: result.code === 'EACCES' ? `"${file}" is not executable; make it executable or fix the command.` : `"${file}" was not found on PATH; install it or fix the command.` }
        : {}),
    });
  }
}

/** The coded error of the first onFailure rule of `step` that matches the failure, if any. */
export function explainFailure(step: BuildStep, failure: { notFound: boolean; exitCode: number | null; output: readonly string[] }): RunplanError | undefined {
  const rule = (step.onFailure ?? []).find((r) => matches(r, failure));
  if (!rule) return undefined;
  const { code, kind, message, fix, file, variable } = rule.error;
  return new RunplanError(
    { code, kind, title: code, fix },
    { message, ...(file === undefined ? {} : { file }), ...(variable === undefined ? {} : { variable }), details: { step: step.name, exitCode: failure.exitCode } },
  );
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
