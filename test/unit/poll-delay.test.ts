import { describe, expect, it } from 'vitest';
import { pollDelay } from '../../src/time/poll-delay.js';

describe('pollDelay', () => {
  it('polls every 20 ms while most applications boot, then backs off for slow boots', () => {
    expect([0, 1_999, 2_000, 9_999, 10_000, 600_000].map(pollDelay)).toEqual([20, 20, 50, 50, 250, 250]);
  });
});
