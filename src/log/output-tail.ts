/** Lines kept of a process's output for the report of its exit. */
export const TAIL_LINES = 20;
/** Longest line kept for that report (the log shows it whole, up to its own bound). */
const TAIL_LINE_CHARS = 500;

/**
 * The last lines a process printed (stdout and stderr interleaved, as they
 * came), already redacted by whoever pushes them: what an error says it did
 * last. Bounded in lines and in the length of each line.
 */
export class OutputTail {
  private lines: string[] = [];

  constructor(private readonly keep: number = TAIL_LINES) {}

  push(line: string): void {
    this.lines.push(line.length > TAIL_LINE_CHARS ? `${line.slice(0, TAIL_LINE_CHARS)}…` : line);
    if (this.lines.length > this.keep) this.lines.shift();
  }

  /** The last lines, across restarts: a run that printed nothing still shows what the one before said. */
  snapshot(): string[] {
    return [...this.lines];
  }
}
