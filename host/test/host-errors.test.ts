import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allEvidence } from '../../test/helpers/error-evidence.js';
import { hostErrorDefinitions } from '../src/errors.js';
import { ROOT } from './helpers/test-host.js';

/**
 * Every code of runplan-host (HostErrors) is documented in docs/errors.md, part
 * "runplan-host", and raised by a test: the same rules as runplan's codes
 * (test/helpers/error-evidence.ts), over host/test too.
 */
const definitions = hostErrorDefinitions();
const codes = definitions.map((d) => d.code);
const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
const part = doc.slice(doc.search(/^# runplan-host$/m));
const sections = new Map([...part.matchAll(/^## (\S+)\n([\s\S]*?)(?=^## |(?![\s\S]))/gm)].map((m) => [m[1] as string, m[2] as string]));

describe('runplan-host error codes', () => {
  it('has a part "runplan-host" at the end of docs/errors.md', () => {
    expect(doc).toMatch(/^# runplan-host$/m);
    expect(part).not.toMatch(/^## RUNPLAN_[EW]_/m);
  });

  it('documents every code: its title and kind, what happened and when, and a line starting "Fix:"', () => {
    expect(codes.filter((c) => !sections.has(c))).toEqual([]);
    for (const d of definitions) {
      const section = sections.get(d.code) ?? '';
      expect(section, d.code).toContain(`**${d.title}** (${d.kind}).`);
      expect(section, d.code).toMatch(/^Fix: \S/m);
      expect(section.replace(/^Fix:.*$/m, '').trim().length, d.code).toBeGreaterThan(80);
    }
  });

  it('documents no code that does not exist', () => {
    expect([...sections.keys()].filter((c) => !codes.includes(c))).toEqual([]);
  });

  const evidence = allEvidence();

  it('raises every code in at least one test', () => {
    const raised = new Set(evidence.map((e) => e.code));
    expect(
      codes.filter((c) => !raised.has(c)),
      'codes no test raises: write a test that makes runplan-host raise each (host/test/host-cli.test.ts for what a user meets), or remove a dead code',
    ).toEqual([]);
  });

  it('expects no host code that does not exist (a renamed or misspelt code)', () => {
    expect(evidence.filter((e) => e.code.startsWith('RUNPLAN_HOST_') && !codes.includes(e.code))).toEqual([]);
  });
});
