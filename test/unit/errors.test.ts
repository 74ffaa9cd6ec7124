import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { defineErrors, listDefinitions, RunplanError } from '../../src/errors/runplan-error.js';
import { defaultRegistry } from '../../src/compose/default-registry.js';
import { defineWarnings, listWarningDefinitions } from '../../src/errors/warnings.js';
import { CoreWarnings } from '../../src/errors/core-warnings.js';
import { ROOT } from '../helpers/cli.js';

const documented = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
const documentedCodes = [...documented.matchAll(/^## (RUNPLAN_[EW]_[A-Z0-9_]+)\s*$/gm)].map((m) => m[1]);
const definedCodes = [...listDefinitions(CoreErrors), ...defaultRegistry().errorDefinitions()].map((d) => d.code);
const definedWarnings = [...listWarningDefinitions(CoreWarnings), ...defaultRegistry().warningDefinitions()].map((d) => d.code);

describe('error registry', () => {
  it('documents every error code in docs/errors.md', () => {
    const undocumented = definedCodes.filter((c) => !documentedCodes.includes(c));
    expect(undocumented).toEqual([]);
  });

  it('documents every warning code in docs/errors.md', () => {
    expect(definedWarnings.filter((c) => !documentedCodes.includes(c))).toEqual([]);
  });

  it('documents no code that does not exist', () => {
    const stale = documentedCodes.filter((c) => !definedCodes.includes(c as string) && !definedWarnings.includes(c as string));
    expect(stale).toEqual([]);
  });

  it('gives every documented code a cause and a fix', () => {
    for (const code of [...definedCodes, ...definedWarnings]) {
      const section = documented.split(`## ${code}\n`)[1]?.split(/^## /m)[0] ?? '';
      expect(section, code).toMatch(/Fix:/);
      expect(section.trim().length, code).toBeGreaterThan(40);
    }
  });

  it('uses unique codes shaped RUNPLAN_E_<AREA>_<WHAT>', () => {
    expect(new Set(definedCodes).size).toBe(definedCodes.length);
    for (const code of definedCodes) expect(code).toMatch(/^RUNPLAN_E_[A-Z0-9]+_[A-Z0-9_]+$/);
  });

  it('refuses a malformed code', () => {
    expect(() => defineErrors({ lowercase: { title: 't', kind: 'input', fix: 'f' } })).toThrow(/invalid error code/);
    expect(() => defineWarnings({ NOAREA: { title: 't', fix: 'f' } })).toThrow(/invalid warning code/);
  });

  it("creates plan warnings with the definition's fix unless the occurrence has its own", () => {
    const W = defineWarnings({ TEST_THING: { title: 't', fix: 'do this' } });
    expect(W.TEST_THING.create({ message: 'm', file: 'f' })).toEqual({ code: 'RUNPLAN_W_TEST_THING', message: 'm', file: 'f', fix: 'do this' });
    expect(W.TEST_THING.create({ message: 'm', fix: 'other' }).fix).toBe('other');
  });

  it('carries code, file, variable and fix, and serialises them', () => {
    const error = CoreErrors.ENV_INVALID_NAME.create({ message: 'bad name', variable: 'A-B', file: 'app.env' });
    expect(error).toBeInstanceOf(RunplanError);
    expect(error.message).toBe('RUNPLAN_E_ENV_INVALID_NAME: bad name');
    expect(error.reason).toBe('bad name');
    expect(CoreErrors.ENV_INVALID_NAME.is(error)).toBe(true);
    expect(CoreErrors.CLI_USAGE.is(error)).toBe(false);
    expect(error.toJSON()).toEqual({
      code: 'RUNPLAN_E_ENV_INVALID_NAME',
      kind: 'input',
      message: 'bad name',
      file: 'app.env',
      variable: 'A-B',
      fix: CoreErrors.ENV_INVALID_NAME.fix,
    });
  });
});
