import { StringDecoder } from 'node:string_decoder';
import type { Redactor } from '../env/secrets.js';

/** Where a line came from: runplan itself, a build step, a process, or the health check. */
export type LineOrigin =
  | { readonly kind: 'runplan' }
  | { readonly kind: 'step'; readonly name: string; readonly stream: 'stdout' | 'stderr' }
  | { readonly kind: 'process'; readonly name: string; readonly stream: 'stdout' | 'stderr' }
  | { readonly kind: 'health' };

export interface LogLine {
  readonly origin: LineOrigin;
  readonly level: 'info' | 'warn' | 'error';
  readonly text: string;
}

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

  emit(origin: LineOrigin, text: string, level: LogLine['level'] = 'info'): void {
    this.sink({ origin, level, text: this.redactor ? this.redactor.redact(text) : text });
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

  /** A logger with the same sink and an extra redactor (e.g. once the environment is known). */
  withRedactor(redactor: Redactor): Logger {
    return new Logger(this.sink, redactor);
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

/** Splits a stream of chunks into lines; a partial line is kept until completed or flushed. */
export class LineSplitter {
  private pending = '';
  // A multi-byte character split across chunks must not become two broken ones.
  private readonly decoder = new StringDecoder('utf8');
  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: string | Uint8Array): void {
    this.pending += typeof chunk === 'string' ? chunk : this.decoder.write(Buffer.from(chunk));
    let nl = this.pending.indexOf('\n');
    while (nl >= 0) {
      this.onLine(this.pending.slice(0, nl).replace(/\r$/, ''));
      this.pending = this.pending.slice(nl + 1);
      nl = this.pending.indexOf('\n');
    }
  }

  flush(): void {
    this.pending += this.decoder.end();
    if (this.pending !== '') this.onLine(this.pending);
    this.pending = '';
  }
}
