import { AppLogs } from '../deploy/app-logs.js';

/** The one key of the host's lines in the log keeper it shares with the applications' logs. */
const HOST = '';

/**
 * The host's own log (`runplan-host logs --host`): what serve says (its start, the
 * applications brought back) and what happens to its parts (a death, a restart, a
 * crash loop), each line stamped with its time; the last lines are kept in serve's
 * memory, as an application's are, and each is also written to serve's stderr.
 */
export class HostLog {
  private readonly kept = new AppLogs();

  constructor(
    private readonly echo: (line: string) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  line(text: string): void {
    this.kept.push(HOST, `${this.now().toISOString()} ${text}`);
    this.echo(text);
  }

  tail(count?: number): string[] {
    return this.kept.tail(HOST, count);
  }

  /** Calls `listener` with each new line until the returned function is called. */
  follow(listener: (line: string) => void): () => void {
    return this.kept.follow(HOST, listener);
  }
}
