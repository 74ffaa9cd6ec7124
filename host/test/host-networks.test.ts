import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { ReleaseNetworks } from 'runplan';
import { startHostReleaseNetworks } from '../src/tenancy/host-networks.js';

/**
 * Two hosts starting at once on one machine (test files side by side, or two
 * roots sharing its network) each find a /24 of 10.88.0.0/16 free; when both
 * took the same one, the bridge of the greater name gives way.
 */
describe("the releases' networks of two hosts started at once", () => {
  const started: ReleaseNetworks[] = [];

  afterAll(async () => {
    for (const networks of started) await networks.stop();
  });

  it('gives each its own /24, also when both try the same one first', async () => {
    // The same first two hex digits: the same /24 tried first by both.
    const prefix = randomBytes(1).toString('hex');
    const ids = [0, 1].map(() => `${prefix}${randomBytes(6).toString('hex').slice(0, 10)}`);
    const [one, two] = await Promise.all(ids.map((id) => startHostReleaseNetworks(id, [])));
    started.push(one as ReleaseNetworks, two as ReleaseNetworks);
    expect(one?.subnet).toMatch(/^10\.88\.\d+\.0\/24$/);
    expect(two?.subnet).not.toBe(one?.subnet);
  });
});
