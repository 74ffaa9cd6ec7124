import { describe, expect, it } from 'vitest';
import { DeployTimings } from '../src/deploy/deploy-timings.js';

/** serve's bring-back frees its place of the cores when a deploy's stability window begins: it is told each phase as it begins. */
describe('DeployTimings', () => {
  it('tells each phase once, as it begins, in the order entered', () => {
    const told: string[] = [];
    const timings = new DeployTimings((phase) => told.push(phase));
    timings.enter('wait');
    timings.enter('checkout');
    timings.enter('checkout');
    timings.enter('plan');
    timings.enter('build');
    timings.enter('stability window');
    expect(told).toEqual(['wait', 'checkout', 'plan', 'build', 'stability window']);
    expect(timings.describe()).toMatch(/^took [\d.]+ s: .*checkout [\d.]+ s, plan [\d.]+ s, build [\d.]+ s, stability window [\d.]+ s$/);
  });
});
