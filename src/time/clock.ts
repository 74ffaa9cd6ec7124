/**
 * Time as a dependency, so back-off and health-check retries can be tested
 * without sleeping: tests pass a clock whose `sleep` returns at once.
 */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: Date.now() and setTimeout. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/**
 * A clock whose sleeps advance virtual time instantly. Real I/O still happens;
 * only waiting is skipped. `sleeps` records every requested delay.
 */
export class InstantClock implements Clock {
  private current: number;
  readonly sleeps: number[] = [];

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.current += ms;
    // Yield so that real I/O (sockets, child processes) makes progress between polls.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
