import type { ErrorType } from '../errors/runplan-error.js';
import type { WarningDefinition } from '../errors/warnings.js';
import type { OutputWarningRule, StepFailureRule } from './schema.js';

/**
 * An onFailure rule raising one of a buildpack's documented codes: how a plan
 * says, as data, what a failed step means (the executor needs no buildpack code
 * to report it). Codes of kind "internal" are not for steps.
 */
export function failureRule(
  type: ErrorType,
  when: StepFailureRule['when'],
  occurrence: { readonly message: string; readonly fix?: string; readonly file?: string; readonly variable?: string },
): StepFailureRule {
  return {
    when,
    error: {
      code: type.code,
      kind: type.kind === 'input' ? 'input' : 'deployment',
      message: occurrence.message,
      fix: occurrence.fix ?? type.fix,
      ...(occurrence.file === undefined ? {} : { file: occurrence.file }),
      ...(occurrence.variable === undefined ? {} : { variable: occurrence.variable }),
    },
  };
}

/**
 * A warnOn rule raising one of a buildpack's documented warning codes when a
 * step that succeeded prints a line matching `pattern` (its first group names
 * what was skipped; `{matches}` in the message lists them).
 */
export function outputWarning(type: WarningDefinition, pattern: string, message: string, fix: string = type.fix): OutputWarningRule {
  return { pattern, warning: { code: type.code, message, fix } };
}
