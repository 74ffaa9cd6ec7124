import { describe, expect, it } from 'vitest';
import { atMost, BRING_BACK_AT_ONCE } from '../src/deploy/at-most.js';

/** serve brings its applications back a few at a time (host/src/deploy/at-most.ts): never more at once, every one of them, in order. */
describe('atMost', () => {
  it('runs every item, in order, never more than `width` at once', async () => {
    const started: number[] = [];
    let running = 0;
    let most = 0;
    await atMost([...Array(23).keys()], 4, async (item) => {
      started.push(item);
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
    });
    expect(started).toEqual([...Array(23).keys()]);
    expect(most).toBe(4);
  });

  it('gives a place to the next item as soon as a task frees it, before the task ends', async () => {
    const started: number[] = [];
    let working = 0;
    let most = 0;
    let together = 0;
    let mostTogether = 0;
    await atMost([...Array(12).keys()], 3, async (item, free) => {
      started.push(item);
      working += 1;
      together += 1;
      most = Math.max(most, working);
      mostTogether = Math.max(mostTogether, together);
      await new Promise((resolve) => setImmediate(resolve));
      working -= 1;
      free();
      free(); // a second call gives nothing more back
      // The waiting part (a stability window): no place held, the next items work meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 5));
      together -= 1;
    });
    expect(started).toEqual([...Array(12).keys()]);
    expect(most).toBe(3);
    expect(mostTogether).toBeGreaterThan(3);
  });

  it('runs nothing for no item, and at least 4 at once when serve brings applications back', async () => {
    await atMost([], 8, async () => {
      throw new Error('never called');
    });
    expect(BRING_BACK_AT_ONCE).toBeGreaterThanOrEqual(4);
  });
});
