import type { z } from 'zod';
import { fastParse } from './fast-parse.js';

/**
 * `schema.safeParse(value)` without Zod's compiled fast path: Zod compiles a
 * validator per object schema (new Function) at its first parse, which a CLI
 * run that parses each schema once or twice pays and never earns back (≈ 6 ms of
 * a cold `runplan plan`, docs/perf.md). A valid value is taken by the validator
 * derived from the schema (fast-parse.ts), the rest by Zod, which reports the
 * issues. Zod's other path spreads a value's issues into one call, which
 * overflows the stack when there are some 100,000 of them: such a value is
 * checked again the default way, which reports them.
 */
export function quickSafeParse<T extends z.ZodType>(schema: T, value: unknown): z.ZodSafeParseResult<z.output<T>> {
  const fast = fastParse(schema, value);
  if (fast !== undefined) return { success: true, data: fast.data };
  try {
    return schema.safeParse(value, { jitless: true });
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return schema.safeParse(value);
  }
}
