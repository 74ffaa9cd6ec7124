import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ini from 'ini';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { escapeFileValue } from '../../src/plan/file-values.js';
import { parsePlan } from '../../src/planning/create-plan.js';
import { ROOT } from '../helpers/cli.js';

/**
 * How a variable's value is written for the reader of a generated file (issue 21).
 * The property tests (test/property/generated-files.test.ts) read any token back
 * with ini and yaml; test/e2e/token-quoting.test.ts has npm and Yarn read them.
 */
describe('values escaped for the file they go into', () => {
  it('writes a token of token characters into .npmrc as is, as npm config set does', () => {
    for (const token of ['npm_AbC012345', 'eyJhbGciOiJIUzI1NiJ9.e30.x-y_z', 'YWJj+ZGVm/Z2hp==', 'a:b@c%d~e']) expect(escapeFileValue(token, 'npmrc-value')).toBe(token);
  });

  it('writes any other as a JSON string that ini reads whole, with npm references escaped', () => {
    expect(escapeFileValue('tok#a;b', 'npmrc-value')).toBe('"tok#a;b"');
    expect(ini.parse(`k=${escapeFileValue('tok#a;b', 'npmrc-value')}`).k).toBe('tok#a;b');
    // One backslash before ${…} for npm's env-replace, itself escaped for JSON.
    expect(escapeFileValue('a${HOME}', 'npmrc-value')).toBe('"a\\\\${HOME}"');
    expect(escapeFileValue('a\\${HOME}', 'npmrc-value')).toBe('"a\\\\\\\\\\\\${HOME}"');
    // ini's line pattern stops at U+2028: escaped, the key is kept.
    expect(ini.parse(`k=${escapeFileValue('a\u2028b c', 'npmrc-value')}`).k).toBe('a\u2028b c');
  });

  it('escapes quotes, backslashes and characters YAML does not take as written inside double quotes', () => {
    const token = 'q"b\\c\u0007\u007f\u0085\u2028\ufeff\ufffe-ü';
    const inside = escapeFileValue(token, 'yaml-double-quoted');
    expect(inside).toBe('q\\"b\\\\c\\x07\\x7f\\x85\\u2028\\ufeff\\ufffe-ü');
    expect(parseYaml(`k: "${inside}"`)).toEqual({ k: token });
  });

  it('leaves a value without escape as it is', () => {
    expect(escapeFileValue('a#b"c', undefined)).toBe('a#b"c');
  });

  it('refuses a run-phase chunk with escape in the plan itself, for every engine (an image writes run-phase files in shell)', () => {
    const plan = parsePlan(JSON.parse(readFileSync(join(ROOT, 'test', 'golden', 'node', 'default-lts.json'), 'utf8')));
    const file = { path: 'conf/x', phase: 'run' as const, mode: 0o600, secret: true, content: [{ env: 'API_TOKEN', escape: 'npmrc-value' as const }], reason: 'test' };
    expect(() => parsePlan({ ...plan, files: [file] })).toThrowError(/escape is only for build-phase files/);
    expect(() => parsePlan({ ...plan, files: [{ ...file, phase: 'build' as const }] })).not.toThrow();
  });
});
