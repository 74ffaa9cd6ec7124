import { describe, it } from 'vitest';
import { checkFixture, listFixtures } from '../helpers/fixtures.js';

/**
 * Every Node.js fixture app is deployed for real with `runplan run`, then checked
 * over HTTP against the expectations kept beside it (fixtures/node/<case>/expect.json).
 * Fixtures that need a test service (a private registry) are deployed by their own test file.
 */
describe('node fixtures', () => {
  for (const fixture of listFixtures('node').filter((f) => f.expect.setup === undefined)) {
    // A fixture that compiles a native module says how long it may take (about a minute on 2 idle cores).
    const timeout = typeof fixture.expect.timeoutSeconds === 'number' ? fixture.expect.timeoutSeconds * 1000 : undefined;
    it(`${fixture.name}: ${fixture.expect.rule}`, { ...(timeout ? { timeout } : {}) }, async () => {
      await checkFixture(fixture);
    });
  }
});
