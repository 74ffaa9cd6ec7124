import { lineExcerpt } from '../errors/excerpt.js';
import { isRunplanError, type RunplanError } from '../errors/runplan-error.js';
import type { LogLine } from '../log/logger.js';

type Write = (text: string) => void;

/**
 * How the CLI speaks. `human`: lines for people on stdout, errors on stderr.
 * `json` (--json): stdout holds exactly one JSON document — the command's
 * result, or `{ "ok": false, "error": … }` — and the lines for people (the
 * error's too) go to stderr.
 * `events` (--events): stdout is NDJSON, one event per line (every log line,
 * step and process events, health-check results, then `result` or `error`), for
 * hosts that show their own progress.
 */
export type OutputMode = 'human' | 'json' | 'events';

export interface CliOutput {
  readonly mode: OutputMode;
  /** Text for people (lines ending in "\n"). */
  progress(text: string): void;
  /** A line of runplan, a build step, a process or the health check. */
  line(line: LogLine): void;
  /** A JSON-able value that events carry as it is (the plan being carried out). */
  event(type: string, data: Record<string, unknown>): void;
  /** The command's outcome: in words for people, as data for programs. */
  result(human: string, data: Record<string, unknown>): void;
  /** Text that is the command's output as it is (a plan, a diff, an inventory), on stdout. */
  document(text: string): void;
  /** A failure, as `reportError` words it for people, or as data. */
  error(human: string, error: unknown): void;
}

export function cliOutput(mode: OutputMode, out: Write, err: Write, formatLine: (line: LogLine) => string): CliOutput {
  const json = (value: unknown) => JSON.stringify(value);
  switch (mode) {
    case 'human':
      return {
        mode,
        progress: out,
        line: (line) => {
          if (line.text !== '' || line.event === undefined) out(`${formatLine(line)}\n`);
        },
        event: () => undefined,
        result: (human) => out(human),
        document: out,
        error: (human) => err(human),
      };
    case 'json': {
      // Exactly one document on stdout: a failure after the result (stopping a deployment that was
      // reported healthy) is told on stderr and by the exit status, never as a second document.
      let printed = false;
      const once = (text: string) => {
        if (!printed) out(text);
        printed = true;
      };
      return {
        mode,
        progress: err,
        line: (line) => {
          if (line.text !== '' || line.event === undefined) err(`${formatLine(line)}\n`);
        },
        event: () => undefined,
        result: (_human, data) => once(`${JSON.stringify({ ok: true, ...data }, null, 2)}\n`),
        document: once,
        error: (human, error) => {
          // For the person watching too, where the other lines for people go.
          err(human);
          once(`${JSON.stringify({ ok: false, error: errorData(error) }, null, 2)}\n`);
        },
      };
    }
    case 'events':
      return {
        mode,
        progress: (text) => {
          for (const t of text.split('\n')) if (t !== '') out(`${json({ type: 'log', origin: 'runplan', level: 'info', text: t })}\n`);
        },
        line: (line) => {
          const origin = line.origin.kind === 'runplan' || line.origin.kind === 'health' ? line.origin.kind : { kind: line.origin.kind, name: line.origin.name, stream: line.origin.stream };
          out(`${json(line.event ? { ...line.event, ...(line.text === '' ? {} : { text: line.text }) } : { type: 'log', origin, level: line.level, text: line.text })}\n`);
        },
        event: (type, data) => out(`${json({ type, ...data })}\n`),
        result: (_human, data) => out(`${json({ ...data, type: 'result', ok: true })}\n`),
        document: (text) => out(`${json({ type: 'result', ok: true, text })}\n`),
        error: (_human, error) => out(`${json({ type: 'error', ok: false, error: errorData(error) })}\n`),
      };
  }
}

const SUBJECT_MAX_CHARS = 500;

/** A coded error as people read it: the message, the file or variable at fault, the fix (and a bug's stack). */
export function formatError(error: RunplanError): string {
  const lines = [`error ${error.message}`];
  // A path or name of the application's choosing, on a line of its own: bounded, and no line break of its own.
  if (error.file) lines.push(`  file: ${lineExcerpt(error.file, SUBJECT_MAX_CHARS)}`);
  if (error.variable) lines.push(`  variable: ${lineExcerpt(error.variable, SUBJECT_MAX_CHARS)}`);
  lines.push(`  fix: ${error.fix}`);
  if (error.kind === 'internal' && error.stack) lines.push(error.stack);
  return `${lines.join('\n')}\n`;
}

/** An error as data: the coded error's fields; anything else is an internal error with its message. */
function errorData(error: unknown): Record<string, unknown> {
  if (isRunplanError(error)) {
    const subject = error.variable ?? error.file;
    return { ...error.toJSON(), title: error.title, ...(subject === undefined ? {} : { subject }) };
  }
  return { code: null, kind: 'internal', message: (error as Error)?.message ?? String(error), stack: (error as Error)?.stack ?? null };
}
