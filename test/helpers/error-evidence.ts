import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { appFilesCases } from '../bad-input/cases/app-files.js';
import { coreCases } from '../bad-input/cases/core.js';
import { nodeCases } from '../bad-input/cases/node.js';
import { play1Cases } from '../bad-input/cases/play1.js';
import { rubyCases } from '../bad-input/cases/ruby.js';
import { ROOT } from './cli.js';
import { listFixtures } from './fixtures.js';

/**
 * Where the tests prove that runplan raises each error and warning code: the
 * places a code counts as "raised by a test" for test/unit/error-coverage.test.ts.
 * Only an expectation that fails unless runplan itself produced the code counts:
 *
 * - a bad-input case expecting the code (its runner requires `error CODE` or the
 *   warning in the CLI's output), unless the case is pending (an expected failure);
 * - a fixture whose expect.json names it as `errorCode` of a failing deployment, or
 *   in `output` (the fixture tests require those lines in the CLI's output);
 * - a conformance case an engine cannot honour (test/conformance/conformance-suite.ts,
 *   `says: 'CODE'`): the suite runs the case on that engine and requires the code, as
 *   the deployment's error or a warning in its output;
 * - a golden plan (test/golden) holding it as a plan warning or as the refusal of the
 *   fixture's plan (the golden test compares the whole CLI output with the file);
 * - in a test file, the code (`'RUNPLAN_E_X'`, `/RUNPLAN_E_X/`, `Errors.X.code`,
 *   `Errors.X.is(…)`) inside an `expect(…)` assertion that is not negated (`.not`,
 *   `toBe(false)`), not in a test marked `.fails`, `.skip` or `.todo`, and in a file
 *   that never makes that error itself (`Errors.X.create(…)`): an error made by hand
 *   proves nothing about runplan.
 *
 * Mentions elsewhere (comments, definitions, messages built for other purposes) do not count.
 * runplan-host's codes (RUNPLAN_HOST_E_…, `HostErrors.X`) count only in host/test, and
 * runplan's only outside it (host/test/host-errors.test.ts checks the host's).
 */
export interface Evidence {
  readonly code: string;
  /** Where, e.g. `test/unit/env.test.ts:42` or `bad-input node/engines-garbage`. */
  readonly where: string;
}

/** runplan's codes, and runplan-host's (RUNPLAN_HOST_E_…, host/test is scanned too). */
const CODE = /RUNPLAN_(?:HOST_)?[EW]_[A-Z0-9_]+/g;

function badInputEvidence(): Evidence[] {
  return [...nodeCases, ...rubyCases, ...play1Cases, ...coreCases, ...appFilesCases]
    .filter((c) => c.pending === undefined && c.expect.code !== undefined)
    .map((c) => ({ code: c.expect.code as string, where: `bad-input ${c.area}/${c.id}` }));
}

function fixtureEvidence(): Evidence[] {
  const out: Evidence[] = [];
  for (const f of listFixtures()) {
    const where = `fixtures/${f.type}/${f.name} (expect.json)`;
    if (f.expect.deploy === 'fails' && f.expect.errorCode) out.push({ code: f.expect.errorCode, where });
    for (const line of f.expect.output ?? []) for (const code of line.match(CODE) ?? []) out.push({ code, where });
  }
  return out;
}

function goldenEvidence(): Evidence[] {
  const out: Evidence[] = [];
  for (const f of listFixtures()) {
    const file = join(ROOT, 'test', 'golden', f.type, `${f.name.replace('/', '--')}.json`);
    if (!existsSync(file)) continue;
    const golden = JSON.parse(readFileSync(file, 'utf8')) as { warnings?: { code: string }[]; error?: string };
    const where = relative(ROOT, file);
    for (const w of golden.warnings ?? []) out.push({ code: w.code, where });
    const refused = golden.error?.match(/^error (RUNPLAN_E_[A-Z0-9_]+):/m)?.[1];
    if (refused) out.push({ code: refused, where });
  }
  return out;
}

/** Test sources scanned for assertions; the corpus tables are read as data (badInputEvidence) instead. */
function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...testFiles(p));
    else if (/\.ts$/.test(e.name)) out.push(p);
  }
  return out;
}

/** `a.b(c).d` → `a`. */
function chainRoot(e: ts.Expression): string | undefined {
  let x: ts.Expression = e;
  while (ts.isPropertyAccessExpression(x) || ts.isCallExpression(x) || ts.isElementAccessExpression(x) || ts.isNonNullExpression(x)) x = x.expression;
  return ts.isIdentifier(x) ? x.text : undefined;
}

/** `Group.KEY` when `Group` names a group of definitions (…Errors / …Warnings; HostErrors: runplan-host's): the code it stands for. */
function groupCode(node: ts.Node): string | undefined {
  if (!ts.isPropertyAccessExpression(node) || !ts.isIdentifier(node.expression)) return undefined;
  const group = node.expression.text.match(/(Errors|Warnings)$/)?.[1];
  if (!group) return undefined;
  const prefix = node.expression.text === 'HostErrors' ? 'RUNPLAN_HOST' : 'RUNPLAN';
  return `${prefix}_${group === 'Errors' ? 'E' : 'W'}_${node.name.text}`;
}

type Verdict = 'asserted' | 'negated' | 'none';

/** The names along a callee chain: `it.skip.each` → ['each', 'skip']. */
function calleeNames(e: ts.Expression): string[] {
  const names: string[] = [];
  for (let x: ts.Expression = e; ts.isPropertyAccessExpression(x) || ts.isCallExpression(x); x = x.expression) if (ts.isPropertyAccessExpression(x)) names.push(x.name.text);
  return names;
}

const TEST_FUNCTIONS = /^(it|test|describe)$/;

/**
 * Whether `node` sits in an `expect(…)` assertion, and whether that assertion is
 * negated; a row of an `it.each([…])` table counts as asserted: the test it feeds
 * asserts on its values.
 */
function assertion(node: ts.Node): Verdict {
  for (let p: ts.Node | undefined = node.parent; p; p = p.parent) {
    if (!ts.isCallExpression(p)) continue;
    const root = chainRoot(p.expression);
    if (TEST_FUNCTIONS.test(root ?? '') && ts.isPropertyAccessExpression(p.expression) && p.expression.name.text === 'each' && p.arguments.some((a) => a.pos <= node.pos && node.end <= a.end))
      return 'asserted';
    if (root !== 'expect') continue;
    // The whole chain `expect(a).not.toBe(b)`, from its outermost call.
    let top: ts.Node = p;
    while (top.parent && (ts.isPropertyAccessExpression(top.parent) || (ts.isCallExpression(top.parent) && top.parent.expression === top))) top = top.parent;
    const names = calleeNames(top as ts.Expression);
    const last = ts.isCallExpression(top) ? top : undefined;
    const falseArgument = last?.arguments.length === 1 && last.arguments[0]?.kind === ts.SyntaxKind.FalseKeyword;
    if (names.includes('not') || names.includes('toBeFalsy') || (falseArgument && /^to(Be|Equal|StrictEqual)$/.test(names[0] ?? ''))) return 'negated';
    return 'asserted';
  }
  return 'none';
}

/** Inside `it.fails(…)`, `it.skip.each(…)(…)`, `describe.todo(…)`…: a test that does not pass as written. */
function inDisabledTest(node: ts.Node): boolean {
  for (let p: ts.Node | undefined = node.parent; p; p = p.parent) {
    if (ts.isCallExpression(p) && TEST_FUNCTIONS.test(chainRoot(p.expression) ?? '') && calleeNames(p.expression).some((n) => /^(fails|skip|todo)$/.test(n))) return true;
  }
  return false;
}

/** Files that only deal with definitions (the registry's own tests) or with this scan. */
const NOT_EVIDENCE = [
  join('test', 'unit', 'errors.test.ts'),
  join('test', 'unit', 'error-coverage.test.ts'),
  join('test', 'helpers', 'error-evidence.ts'),
  join('test', 'bad-input', 'cases'),
  join('host', 'test', 'host-errors.test.ts'),
];

const HOST_CODE = /^RUNPLAN_HOST_/;

/**
 * runplan's tests for runplan's codes, and runplan-host's (host/test) for the host's
 * own: each uses the other's codes only as data (a host code as a buildpack prefix, a
 * runplan code recorded by the host's store).
 */
function testSourceEvidence(): Evidence[] {
  const scan = (dir: string, host: boolean) =>
    testFiles(join(ROOT, dir))
      .map((file) => relative(ROOT, file))
      .filter((rel) => !NOT_EVIDENCE.some((n) => rel === n || rel.startsWith(`${n}/`)))
      .flatMap((rel) => sourceEvidence(rel, readFileSync(join(ROOT, rel), 'utf8')))
      .filter((e) => HOST_CODE.test(e.code) === host);
  return [...scan('test', false), ...scan(join('host', 'test'), true)];
}

/** The assertions of one test source (`rel` names it in `where`). */
export function sourceEvidence(rel: string, text: string): Evidence[] {
  const source = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { code: string; node: ts.Node }[] = [];
  const madeByHand = new Set<string>();
  const visit = (node: ts.Node): void => {
    const code = groupCode(node);
    if (code && ts.isPropertyAccessExpression(node.parent)) {
      const member = node.parent.name.text;
      if (member === 'create') madeByHand.add(code);
      else if (member === 'code' || (member === 'is' && ts.isCallExpression(node.parent.parent))) found.push({ code, node });
    }
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node) || ts.isRegularExpressionLiteral(node)) {
      for (const c of node.getText(source).match(CODE) ?? []) found.push({ code: c, node });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found
    .filter(({ code, node }) => !madeByHand.has(code) && !inDisabledTest(node) && assertion(node) === 'asserted')
    .map(({ code, node }) => ({ code, where: `${rel}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}` }));
}

function conformanceEvidence(): Evidence[] {
  const file = 'test/conformance/conformance-suite.ts';
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/\bsays: '(RUNPLAN_[EW]_[A-Z0-9_]+)'/g)].map((m) => ({ code: m[1] as string, where: `${file} (a case an engine says it cannot honour)` }));
}

export function allEvidence(): Evidence[] {
  return [...badInputEvidence(), ...fixtureEvidence(), ...conformanceEvidence(), ...goldenEvidence(), ...testSourceEvidence()];
}
