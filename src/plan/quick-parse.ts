import type { z } from 'zod';

/**
 * `schema.safeParse(value)` without Zod's compiled fast path: Zod compiles a
 * validator per object schema (new Function) at its first parse, which a CLI
 * run that parses each schema once or twice pays and never earns back (≈ 6 ms of
 * a cold `runplan plan`, docs/perf.md). Zod's other path spreads a value's issues
 * into one call, which overflows the stack when there are some 100,000 of them:
 * such a value is checked again the default way, which reports them.
 */
export function quickSafeParse<T extends z.ZodType>(schema: T, value: unknown): z.ZodSafeParseResult<z.output<T>> {
  try {
    return schema.safeParse(value, { jitless: true });
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return schema.safeParse(value);
  }
}
