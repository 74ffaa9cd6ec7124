import { availableParallelism } from 'node:os';

/**
 * How many applications `serve` brings back at once when it starts. Each one is
 * half work (its build and its processes' boot, on this machine's cores) and half
 * waiting (the health gate, the 3 s stability window): a few per core keep the
 * cores busy. All at once, 50 applications shared two cores: every one came back at
 * the end (75 s, median 70 s) and serve's heap grew with 50 builds under way (178 MB;
 * docs/perf.md, "runplan-host at fifty applications"). A bring-back gives its place
 * up when its stability window begins (`free` below): the window only waits.
 */
export const BRING_BACK_AT_ONCE = Math.max(4, 4 * availableParallelism());

/**
 * Runs `task` for each item, at most `width` holding a place at a time, started in the
 * items' order; resolves when all have ended. A task gives its place to the next item
 * when it ends, or earlier by calling `free` (once it only waits, not works).
 */
export async function atMost<T>(items: readonly T[], width: number, task: (item: T, free: () => void) => Promise<void>): Promise<void> {
  let places = width;
  const waiting: (() => void)[] = [];
  const take = async (): Promise<() => void> => {
    if (places > 0) places -= 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      // The place goes straight to the next waiting item, in the items' order.
      const next = waiting.shift();
      if (next) next();
      else places += 1;
    };
  };
  await Promise.all(
    items.map(async (item) => {
      const free = await take();
      try {
        await task(item, free);
      } finally {
        free();
      }
    }),
  );
}
