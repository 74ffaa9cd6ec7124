import { expect, it } from 'vitest';
import { CASES, conformanceSuite, fixture } from './conformance-suite.js';

conformanceSuite('local');

it('every case names a fixture that exists', () => {
  for (const c of CASES) expect(() => fixture(c.fixture)).not.toThrow();
});
