/**
 * Shared pieces of the property tests (docs/security.md, "Property tests"):
 * hostile inputs, the run counts, the seed, and the one property every parser
 * and resolver has — it returns, or it throws a coded RunplanError.
 *
 * fast-check prints the seed and the path of a failing run with its shrunk
 * counter-example; RUNPLAN_PROPERTY_SEED=<seed> replays every property of a run
 * with that seed, RUNPLAN_PROPERTY_RUNS=<factor> multiplies the run counts (for
 * a longer search than the suite's budget allows).
 */
import fc from 'fast-check';
import { RunplanError } from '../../src/errors/runplan-error.js';

const seed = process.env.RUNPLAN_PROPERTY_SEED;
const factor = Number(process.env.RUNPLAN_PROPERTY_RUNS ?? '1');
if (seed !== undefined && seed !== '') fc.configureGlobal({ seed: Number(seed) });

/** Runs of one property: `base` scaled by RUNPLAN_PROPERTY_RUNS (at least 1). */
function runs(base: number): number {
  return Math.max(1, Math.round(base * (Number.isFinite(factor) && factor > 0 ? factor : 1)));
}

/** Runs for in-process properties (a few ms each), for those that start nginx -t (≈ 20 ms each), and for whole deployments (≈ 30 s each). */
export const RUNS = { pure: runs(1000), plan: runs(300), nginx: runs(100), deploy: runs(4) } as const;

/** True for what runplan may let escape: its own error, with a documented code. */
export function isCoded(error: unknown): error is RunplanError {
  return error instanceof RunplanError && /^RUNPLAN_E_[A-Z0-9]+_[A-Z0-9_]+$/.test(error.code);
}

/** The value `f` returns, or undefined when it throws a coded error; anything else is rethrown (and fails the property). */
export function codedOr<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch (error) {
    if (isCoded(error)) return undefined;
    throw error;
  }
}

/** codedOr for promises. */
export async function codedOrAsync<T>(f: () => Promise<T>): Promise<T | undefined> {
  try {
    return await f();
  } catch (error) {
    if (isCoded(error)) return undefined;
    throw error;
  }
}

/** Fragments an attacker or an unlucky user puts into a value: control characters, quotes, nginx and shell syntax, odd numbers, unicode. */
const FRAGMENTS = [
  '',
  ' ',
  '\t',
  '\n',
  '\r',
  '\r\n',
  '\0',
  '\x1b[31m',
  '\x7f',
  '\u2028',
  '\uFEFF',
  '\u00e9',
  '日本',
  '🚀',
  '"',
  "'",
  '`',
  '\\',
  '\\u',
  '$',
  '${HOME}',
  '$(id)',
  ';',
  '{',
  '}',
  '#',
  '=',
  ':',
  ',',
  '/',
  '//',
  '..',
  '../',
  '~',
  '*',
  '%',
  '%2e',
  '^',
  '>=',
  '~>',
  'x',
  '.x',
  'v',
  '-',
  '_',
  '0',
  '1',
  '3',
  '18',
  '24',
  '007',
  '-1',
  '1e309',
  'NaN',
  'Infinity',
  '0x1f',
  '9007199254740993',
  '99999999999999999999999',
  '1.2',
  '3.3',
  '1.11',
  '22.11.0',
  'true',
  'null',
  '[]',
  '{}',
  'a'.repeat(300),
  ' include /etc/passwd;',
  ' return 200 "x";',
  'script-shell=/bin/sh',
  '[section]',
  '%platform.',
  'ruby ',
  'file:',
];

/** A string made of hostile fragments and arbitrary unicode (control characters included). */
export const hostileString: fc.Arbitrary<string> = fc
  .array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...FRAGMENTS) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) }), { maxLength: 8 })
  .map((parts) => parts.join(''));

/** Mostly a valid value, else one with hostile fragments around or inside it, or a hostile string: reaches the code behind the first check. */
export function nearly(valid: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: valid },
    fc.tuple(valid, hostileString).map(([v, h]) => v + h),
    fc.tuple(hostileString, valid).map(([h, v]) => h + v),
    fc.tuple(valid, fc.nat(), hostileString).map(([v, i, h]) => v.slice(0, i % (v.length + 1)) + h + v.slice(i % (v.length + 1))),
    hostileString,
  );
}

/** Any JSON value, including the wrong types for a field (numbers, objects, arrays, null, booleans). */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 2, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, [], {}, ['x'], { x: 1 }) },
);

/** An optional value: undefined, or one drawn from `arb`. */
export function optional<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.option(arb, { nil: undefined, freq: 3 });
}
