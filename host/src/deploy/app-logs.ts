/** The last lines of each application (its processes and its deploys), and who follows them (`logs -f`). */
export class AppLogs {
  private readonly lines = new Map<string, string[]>();
  private readonly followers = new Map<string, Set<(line: string) => void>>();

  constructor(private readonly kept = 2_000) {}

  push(appId: string, line: string): void {
    const list = this.lines.get(appId) ?? [];
    list.push(line);
    if (list.length > this.kept) list.splice(0, list.length - this.kept);
    this.lines.set(appId, list);
    for (const follow of this.followers.get(appId) ?? []) follow(line);
  }

  /** A line of the host's in the log of every application this serve keeps one for (the edge was down: none of them answered). */
  pushToAll(line: string): void {
    for (const appId of this.lines.keys()) this.push(appId, line);
  }

  tail(appId: string, count = 200): string[] {
    return (this.lines.get(appId) ?? []).slice(-count);
  }

  /** Calls `listener` with each new line until the returned function is called. */
  follow(appId: string, listener: (line: string) => void): () => void {
    const set = this.followers.get(appId) ?? new Set();
    set.add(listener);
    this.followers.set(appId, set);
    return () => set.delete(listener);
  }
}
