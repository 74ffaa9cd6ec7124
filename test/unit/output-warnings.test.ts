import { describe, expect, it } from 'vitest';
import { OutputWarnings } from '../../src/process/output-warnings.js';

const rule = {
  pattern: '^npm warn install-scripts\\s{2,}(\\S+@\\S+) \\(',
  warning: { code: 'RUNPLAN_W_NODE_INSTALL_SCRIPTS_BLOCKED', message: 'npm blocked the install scripts of {matches}.', fix: 'Allow them.' },
};

describe('warnOn rules', () => {
  it('names what the lines name, once each, and nothing when no line matches', () => {
    const w = new OutputWarnings([rule]);
    expect(w.warnings()).toEqual([]);
    for (const line of [
      'added 3 packages',
      'npm warn install-scripts   a@1.0.0 (postinstall: node x)',
      'npm warn install-scripts   b@2.0.0 (install: make)',
      'npm warn install-scripts   a@1.0.0 (postinstall: node x)',
    ])
      w.push(line);
    expect(w.warnings()).toEqual([{ code: rule.warning.code, message: 'npm blocked the install scripts of a@1.0.0, b@2.0.0.', fix: 'Allow them.' }]);
  });

  it('names at most 20, then counts the rest', () => {
    const w = new OutputWarnings([rule]);
    for (let i = 0; i < 25; i++) w.push(`npm warn install-scripts   p${i}@1.0.0 (install: x)`);
    expect(w.warnings()[0]?.message).toMatch(/p19@1\.0\.0 and 5 more\.$/);
  });
});
