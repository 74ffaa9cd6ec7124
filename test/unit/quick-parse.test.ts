import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PlanContributionSchema } from '../../src/buildpack/contribution-schema.js';
import { quickSafeParse } from '../../src/plan/quick-parse.js';

describe('quickSafeParse', () => {
  const Steps = z.object({ steps: z.array(z.object({ name: z.string() })) });

  it('gives what safeParse gives, for valid and invalid values', () => {
    for (const value of [{ steps: [{ name: 'a' }] }, { steps: [{ name: 7 }] }, { steps: 'no' }, null]) {
      expect(JSON.stringify(quickSafeParse(Steps, value))).toBe(JSON.stringify(Steps.safeParse(value)));
    }
  });

  it("reports a buildpack's contribution with 100,000 invalid steps as invalid, not as a crash", () => {
    const contribution = { runtimes: [], decisions: [], steps: Array.from({ length: 100_000 }, () => ({ name: 7 })), layers: [], processes: [], files: [], warnings: [] };
    // Zod's path without the compiled validators overflows the stack here: the value is checked again the default way.
    expect(() => PlanContributionSchema.safeParse(contribution, { jitless: true })).toThrow(RangeError);
    const parsed = quickSafeParse(PlanContributionSchema, contribution);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.length).toBeGreaterThan(1);
  });
});
