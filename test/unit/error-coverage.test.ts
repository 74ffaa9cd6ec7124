import { describe, expect, it } from 'vitest';
import { defaultRegistry } from '../../src/compose/default-registry.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { CoreWarnings } from '../../src/errors/core-warnings.js';
import { listDefinitions } from '../../src/errors/runplan-error.js';
import { listWarningDefinitions } from '../../src/errors/warnings.js';
import { allEvidence, sourceEvidence } from '../helpers/error-evidence.js';

/**
 * Every error and warning code is raised by at least one test (docs/errors.md).
 * "Raised" means an expectation that fails unless runplan itself produced the code:
 * a bad-input case, a fixture's expect.json, a golden plan, or a non-negated
 * `expect(…)` in a test that does not make the error by hand — see
 * test/helpers/error-evidence.ts for the exact rules. A code no test can raise is
 * dead: remove it from its registry and from docs/errors.md.
 */
const codes = [...listDefinitions(CoreErrors), ...defaultRegistry().errorDefinitions(), ...listWarningDefinitions(CoreWarnings), ...defaultRegistry().warningDefinitions()].map((d) => d.code);

describe('error coverage', () => {
  const evidence = allEvidence();

  it('raises every error and warning code in at least one test', () => {
    const raised = new Set(evidence.map((e) => e.code));
    expect(
      codes.filter((c) => !raised.has(c)),
      'codes no test raises: write a test that makes runplan raise each (a bad-input case, a unit or CLI test), or remove a dead code',
    ).toEqual([]);
  });

  it("expects no code of runplan's areas that does not exist (a renamed or misspelt code)", () => {
    // Other areas are the tests' own: host buildpacks defined in a test (DEMO, PROCFILE…).
    const area = (code: string) => code.split('_')[2];
    const areas = new Set(codes.map(area));
    expect(evidence.filter((e) => areas.has(area(e.code)) && !codes.includes(e.code))).toEqual([]);
  });

  describe('counts only assertions on what runplan raised', () => {
    const scan = (text: string) => sourceEvidence('t.test.ts', text).map((e) => e.code);

    it('counts a positive expectation, by code text, by group reference and in an it.each table', () => {
      expect(scan("expect(out).toContain('error RUNPLAN_E_A_B');")).toEqual(['RUNPLAN_E_A_B']);
      expect(scan('await expect(run()).rejects.toMatchObject({\n  code: CoreErrors.A_B.code,\n});')).toEqual(['RUNPLAN_E_A_B']);
      expect(scan('expect(NodeWarnings.A_B.is(w)).toBe(true);')).toEqual(['RUNPLAN_W_A_B']);
      expect(scan("it.each([['x', 'RUNPLAN_E_A_B']])('%s', (x, code) => expect(f(x)).toThrow(code));")).toEqual(['RUNPLAN_E_A_B']);
    });

    it('ignores comments, mentions outside expectations, negations, errors made by hand and tests that do not pass as written', () => {
      expect(scan("// raises RUNPLAN_E_A_B\nconst c = 'RUNPLAN_E_A_B';\nexpect(out).toContain(c);")).toEqual([]);
      expect(scan("expect(out).not.toContain('RUNPLAN_E_A_B');\nexpect(CoreErrors.A_C.is(e)).toBe(false);")).toEqual([]);
      expect(scan('const e = CoreErrors.A_B.create({ message: "m" });\nexpect(CoreErrors.A_B.is(e)).toBe(true);')).toEqual([]);
      expect(scan("it.fails('pending', () => expect(out).toContain('RUNPLAN_E_A_B'));\nit.skip('later', () => expect(out).toContain('RUNPLAN_E_A_C'));")).toEqual([]);
    });
  });
});
