/**
 * One deploy per application at a time; deploys of different applications run
 * side by side. A deploy that has to wait is told so (`onWait`) once, with what
 * the holder is doing (`holder`, a phrase such as "another deploy of web is running").
 */
export class AppLocks {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly holders = new Map<string, string>();

  async acquire(appId: string, holder: string, onWait: (holder: string) => void): Promise<() => void> {
    const previous = this.tails.get(appId);
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = (previous ?? Promise.resolve()).then(() => mine);
    this.tails.set(appId, tail);
    if (previous) {
      onWait(this.holders.get(appId) ?? 'another deploy is running');
      await previous;
    }
    this.holders.set(appId, holder);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (this.tails.get(appId) === tail) {
        this.tails.delete(appId);
        this.holders.delete(appId);
      }
      release();
    };
  }

  /** Resolves once no deploy holds or waits for any application's lock. */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }
}
