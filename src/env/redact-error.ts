import { isRunplanError, RunplanError } from '../errors/runplan-error.js';
import type { Redactor } from './secrets.js';

// Causes nest rarely more than two deep; the bound keeps a cyclic cause chain finite.
const MAX_CAUSE_DEPTH = 8;

/**
 * An error whose texts no longer contain any secret value: message, fix, details,
 * stack and the chain of causes, each redacted (a cause or stack dropped would hide
 * why a step failed; one kept unredacted would print the secret).
 */
export function redactError(error: unknown, redactor: Redactor | undefined): unknown {
  if (!redactor || redactor.size === 0) return error;
  return redactWithin(error, redactor, 0);
}

function redactWithin(error: unknown, redactor: Redactor, depth: number): unknown {
  if (depth > MAX_CAUSE_DEPTH) return undefined;
  const cause = error instanceof Error && error.cause !== undefined ? redactWithin(error.cause, redactor, depth + 1) : undefined;
  if (isRunplanError(error)) {
    const copy = new RunplanError(
      { code: error.code, title: error.title, kind: error.kind, fix: redactor.redact(error.fix) },
      {
        message: redactor.redact(error.reason),
        ...(error.file === undefined ? {} : { file: error.file }),
        ...(error.variable === undefined ? {} : { variable: error.variable }),
        details: redactor.redactDeep(error.details),
        ...(cause === undefined ? {} : { cause }),
      },
    );
    if (error.stack !== undefined) copy.stack = redactor.redact(error.stack);
    return copy;
  }
  if (error instanceof Error) {
    const copy = new Error(redactor.redact(error.message), cause === undefined ? undefined : { cause });
    copy.name = error.name;
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code === 'string') (copy as NodeJS.ErrnoException).code = code;
    copy.stack = redactor.redact(error.stack ?? '');
    return copy;
  }
  return typeof error === 'string' ? redactor.redact(error) : error;
}
