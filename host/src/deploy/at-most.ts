import { availableParallelism } from 'node:os';

/**
 * How many applications `serve` brings back at once when it starts. Each one is
 * half work (its build and its processes' boot, on this machine's cores) and half
 * waiting (the health gate, the 3 s stability window): a few per core keep the
 * cores busy while the windows overlap. All at once, 50 applications shared two
 * cores: every one came back at the end (75 s, median 70 s) and serve's heap grew
 * with 50 builds under way (178 MB; docs/perf.md, "runplan-host at fifty applications").
 */
export const BRING_BACK_AT_ONCE = Math.max(4, 4 * availableParallelism());

/** Runs `task` for each item, at most `width` at a time, in the items' order; resolves when all have ended. */
export async function atMost<T>(items: readonly T[], width: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
