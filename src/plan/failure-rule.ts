import type { ErrorType } from '../errors/runplan-error.js';
import type { StepFailureRule } from './schema.js';

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
