import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PlanContributionSchema } from '../../src/buildpack/contribution-schema.js';
import { fastParse } from '../../src/plan/fast-parse.js';
import { quickSafeParse } from '../../src/plan/quick-parse.js';
import { RunPlanSchema } from '../../src/plan/schema.js';
import { ROOT } from '../helpers/cli.js';

/** Every golden plan (test/golden/<type>/<case>.json) that is a plan, not a refusal. */
function goldenPlans(): unknown[] {
  const dir = join(ROOT, 'test/golden');
  const plans: unknown[] = [];
  for (const type of readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory())) {
    for (const file of readdirSync(join(dir, type.name)).filter((f) => f.endsWith('.json'))) {
      const doc = JSON.parse(readFileSync(join(dir, type.name, file), 'utf8'));
      if (Array.isArray(doc.processes)) plans.push(doc);
    }
  }
  return plans;
}

const PLANS = goldenPlans();

/** The fast validator agrees with Zod: it accepts what Zod accepts, with Zod's output to the byte, and nothing else. */
function expectAgreement(schema: z.ZodType, value: unknown): boolean {
  const zod = schema.safeParse(value);
  const fast = fastParse(schema, value);
  expect(fast !== undefined).toBe(zod.success);
  if (fast !== undefined && zod.success) {
    expect(fast.data).toStrictEqual(zod.data);
    expect(JSON.stringify(fast.data)).toBe(JSON.stringify(zod.data));
  }
  return zod.success;
}

type Path = (string | number)[];

/** Every place in a value: object keys and array indexes, depth first. */
function pathsOf(value: unknown, at: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [at];
  const children = Array.isArray(value) ? value.map((v, i) => pathsOf(v, [...at, i])) : Object.entries(value).map(([k, v]) => pathsOf(v, [...at, k]));
  return [at, ...children.flat()];
}

function get(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], value);
}

/** Values that break a plan's fields in the ways a buildpack's bug or an edited file would. */
const ODD_VALUES: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  70000,
  511,
  true,
  '',
  'x',
  '/abs',
  '../up',
  'a//b',
  './a',
  'bad\nline',
  '${APP_HOME}/x',
  '${RUN_DIR}/s.sock',
  '(unclosed',
  'RUNPLAN_W_X_Y',
  'RUNPLAN_E_X_Y',
  'x'.repeat(5000),
  'sha256-abc=',
  'https://example.test/a.tgz',
  'exec',
  'shell',
  'install',
  'http',
  'build',
  'run',
  [],
  ['x'],
  {},
  { kind: 'exec', argv: [] },
  { kind: 'shell', script: 'true' },
  { text: 'a' },
  { env: 'A', escape: 'npmrc-value' },
  { placeholder: 'APP_HOME' },
];

type Mutation = { kind: 'set'; path: number; value: number } | { kind: 'delete'; path: number } | { kind: 'extra'; path: number } | { kind: 'copy'; path: number; from: number };

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), path: fc.nat(), value: fc.nat({ max: ODD_VALUES.length - 1 }) }),
  fc.record({ kind: fc.constant('delete' as const), path: fc.nat() }),
  fc.record({ kind: fc.constant('extra' as const), path: fc.nat() }),
  fc.record({ kind: fc.constant('copy' as const), path: fc.nat(), from: fc.nat() }),
);

/** A copy of the plan with each mutation applied at a place of it. */
function mutate(plan: unknown, mutations: Mutation[]): unknown {
  const copy = structuredClone(plan);
  for (const m of mutations) {
    const paths = pathsOf(copy).filter((p) => p.length > 0);
    const path = paths[m.path % paths.length] as Path;
    const parent = get(copy, path.slice(0, -1)) as Record<string | number, unknown>;
    const key = path[path.length - 1] as string | number;
    if (m.kind === 'set') parent[key] = structuredClone(ODD_VALUES[m.value]);
    else if (m.kind === 'delete') Array.isArray(parent) ? parent.splice(key as number, 1) : delete parent[key];
    else if (m.kind === 'copy') parent[key] = structuredClone(get(copy, paths[m.from % paths.length] as Path));
    else {
      const target = get(copy, path);
      if (target !== null && typeof target === 'object' && !Array.isArray(target)) (target as Record<string, unknown>).unknownField = 1;
      else if (Array.isArray(target)) target.push(target.length > 0 ? structuredClone(target[0]) : 'x');
    }
  }
  return copy;
}

describe('fastParse agrees with the Zod schema it is derived from', () => {
  it('accepts every golden plan, with the output Zod gives', () => {
    expect(PLANS.length).toBeGreaterThan(20);
    for (const plan of PLANS) expect(expectAgreement(RunPlanSchema, plan)).toBe(true);
  });

  it('gives the same answer as Zod on mutated plans (one to three changes anywhere)', () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 3 }), (which, mutations) => {
        if (expectAgreement(RunPlanSchema, mutate(PLANS[which % PLANS.length], mutations))) accepted++;
        else refused++;
      }),
      { numRuns: 3000 },
    );
    // Both answers were exercised.
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it('gives the same answer on the parts of plans checked as a contribution', () => {
    fc.assert(
      fc.property(fc.nat(), fc.array(mutation, { minLength: 0, maxLength: 2 }), (which, mutations) => {
        const plan = PLANS[which % PLANS.length] as Record<string, unknown>;
        const contribution = {
          runtimes: plan.runtimes,
          decisions: plan.decisions,
          steps: (plan.build as { steps: unknown }).steps,
          layers: plan.layers,
          processes: plan.processes,
          files: plan.files,
          warnings: plan.warnings,
        };
        expectAgreement(PlanContributionSchema, mutate(contribution, mutations));
      }),
      { numRuns: 500 },
    );
  });

  it('leaves to Zod what it does not know, and the values Zod converts', () => {
    const schemas: Array<[z.ZodType, unknown]> = [
      [z.object({ a: z.string() }).strict(), { a: 'x' }],
      [z.object({ a: z.string().default('d') }), {}],
      [z.object({ n: z.coerce.number() }), { n: '1' }],
      [z.object({ s: z.string().transform((s) => s.length) }), { s: 'abc' }],
      [z.object({ t: z.string().trim() }), { t: ' a ' }],
      [z.record(z.enum(['a', 'b']), z.string()), { a: 'x', b: 'y' }],
    ];
    for (const [schema, value] of schemas) {
      expect(quickSafeParse(schema, value)).toEqual(schema.safeParse(value));
      if (fastParse(schema, value) !== undefined) expectAgreement(schema, value);
    }
  });
});
