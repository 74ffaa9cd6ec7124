import { type Clock, systemClock } from 'runplan/process';

/** The real clock, whose back-off sleeps a test can hold until it lets them go. */
export class HeldClock implements Clock {
  private held = false;
  private readonly waiting = new Set<() => void>();
  readonly sleeps: number[] = [];

  now(): number {
    return systemClock.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (!this.held) return systemClock.sleep(ms, signal);
    return new Promise((resolve) => {
      const go = () => {
        this.waiting.delete(go);
        resolve();
      };
      this.waiting.add(go);
      signal?.addEventListener('abort', go, { once: true });
    });
  }

  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    for (const go of [...this.waiting]) go();
  }

  get holding(): number {
    return this.waiting.size;
  }
}
