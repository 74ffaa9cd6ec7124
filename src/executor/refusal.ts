import { CoreErrors } from '../errors/core-errors.js';
import { RunplanError } from '../errors/runplan-error.js';
import type { RunPlan } from '../plan/schema.js';

/**
 * How an image's entrypoint says that the run phase refused to start a process
 * (a pre-run hook failed or outlived its timeout): the last line of the
 * container, `runplan: refused: CODE: message`. The local runner throws the
 * same coded error from Executor.start; an engine reads the line back so that a
 * deployment fails with that error on every engine, at its first exit, instead
 * of as a crash loop of the container it restarts.
 */
export const REFUSAL_PREFIX = 'runplan: refused: ';

/** The code and message of a refusal line. */
export interface Refusal {
  readonly code: string;
  readonly message: string;
}

const REFUSAL = new RegExp(`^${REFUSAL_PREFIX}([A-Z][A-Z0-9]*_E_[A-Z0-9_]+): (.+)$`);

/** The refusal among a process's last lines, if it ended with one. Pure. */
export function refusalIn(output: readonly string[]): Refusal | undefined {
  for (let i = output.length - 1; i >= 0; i--) {
    const found = REFUSAL.exec(output[i] as string);
    if (found) return { code: found[1] as string, message: found[2] as string };
  }
  return undefined;
}

/**
 * The coded error a refusal stands for, as the local runner raises it: the
 * pre-run hook's own onFailure rule (its variable and fix), or a core error
 * of that code (RUNPLAN_E_BUILD_STEP_TIMEOUT).
 */
export function refusalError(refusal: Refusal, plan: RunPlan): RunplanError {
  const rule = (plan.runHooks?.preRun ?? []).flatMap((h) => h.onFailure ?? []).find((r) => r.error.code === refusal.code)?.error;
  if (rule) {
    return new RunplanError(
      { code: rule.code, kind: rule.kind, title: rule.code, fix: rule.fix },
      { message: refusal.message, ...(rule.variable === undefined ? {} : { variable: rule.variable }), details: { refusedBy: 'entrypoint' } },
    );
  }
  const core = Object.values(CoreErrors).find((e) => e.code === refusal.code) ?? CoreErrors.HOOK_FAILED;
  return core.create({ message: refusal.message, details: { refusedBy: 'entrypoint' } });
}
