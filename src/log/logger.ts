import type { Redactor } from '../env/secrets.js';

/** Where a line came from: runplan itself, a build step, a process, or the health check. */
export type LineOrigin =
  | { readonly kind: 'runplan' }
  | { readonly kind: 'step'; readonly name: string; readonly stream: 'stdout' | 'stderr' }
  | { readonly kind: 'process'; readonly name: string; readonly stream: 'stdout' | 'stderr' }
  | { readonly kind: 'health' };

/**
 * What happened, as data, for hosts that show their own progress (`--events`):
 * carried by the line that tells it in words, or by a line without text.
 */
export type RunEvent =
  | { readonly type: 'step-started'; readonly step: string }
  | { readonly type: 'step-finished'; readonly step: string; readonly status: 'succeeded' | 'cached' | 'failed'; readonly durationMs: number }
  | { readonly type: 'process-started'; readonly process: string; readonly pid: number | null }
  | { readonly type: 'process-exited'; readonly process: string; readonly code: number | null; readonly signal: string | null }
  | { readonly type: 'health-check'; readonly path: string; readonly status: number | null; readonly ok: boolean };

/** One line of a build or a deployment, already redacted: where it came from, its level, its text and, for some, an event. */
export interface LogLine {
  readonly origin: LineOrigin;
  readonly level: 'info' | 'warn' | 'error';
  /** Empty for a line that only carries an event. */
  readonly text: string;
  readonly event?: RunEvent;
}

/** Where a Logger sends every line (already redacted). */
export type LogSink = (line: LogLine) => void;

/**
 * Every line runplan emits goes through a Logger, which removes secret values
 * before the sink sees them: a sink cannot leak what it never receives.
 */
export class Logger {
  constructor(
    private readonly sink: LogSink,
    private readonly redactor?: Redactor,
  ) {}

  emit(origin: LineOrigin, text: string, level: LogLine['level'] = 'info', event?: RunEvent): void {
    const redacted = this.redact(text);
    this.sink(event === undefined ? { origin, level, text: redacted } : { origin, level, text: redacted, event: this.redactEvent(event) });
  }

  /** An event, told by `text` (none: the line only carries it). */
  event(event: RunEvent, text = '', origin: LineOrigin = { kind: 'runplan' }): void {
    this.emit(origin, text, 'info', event);
  }

  // Names of steps and processes come from the plan, paths from the environment: redacted like any text.
  private redactEvent(event: RunEvent): RunEvent {
    if (!this.redactor) return event;
    const r = (t: string) => (this.redactor as Redactor).redact(t);
    switch (event.type) {
      case 'step-started':
      case 'step-finished':
        return { ...event, step: r(event.step) };
      case 'process-started':
      case 'process-exited':
        return { ...event, process: r(event.process) };
      case 'health-check':
        return { ...event, path: r(event.path) };
    }
  }

  /** `text` as the sink would receive it: for what is kept and reported later (a process's last lines). */
  redact(text: string): string {
    return this.redactor ? this.redactor.redact(text) : text;
  }

  info(text: string): void {
    this.emit({ kind: 'runplan' }, text);
  }

  warn(text: string): void {
    this.emit({ kind: 'runplan' }, text, 'warn');
  }

  error(text: string): void {
    this.emit({ kind: 'runplan' }, text, 'error');
  }

  health(text: string, level: LogLine['level'] = 'info'): void {
    this.emit({ kind: 'health' }, text, level);
  }
}

/** A sink that keeps lines in memory (tests, embedding hosts). */
export function memorySink(): LogSink & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = ((line: LogLine) => {
    lines.push(line);
  }) as LogSink & { lines: LogLine[] };
  sink.lines = lines;
  return sink;
}

// Kept here too: engines and hosts import it from the logger.
export { LineSplitter } from './line-splitter.js';
