import { isRunplanError } from 'runplan';

/** A failure as the pusher reads it: the code and cause, the file or variable at fault, the fix. */
export function describeError(error: unknown): { code: string; lines: string[] } {
  if (isRunplanError(error)) {
    const lines = [`error ${error.message}`];
    if (error.file) lines.push(`  file: ${error.file}`);
    if (error.variable) lines.push(`  variable: ${error.variable}`);
    lines.push(`  fix: ${error.fix}`);
    return { code: error.code, lines };
  }
  return { code: 'internal', lines: [`error (internal) ${(error as Error)?.message ?? String(error)}`] };
}
