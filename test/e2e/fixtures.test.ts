import { describe, it } from 'vitest';
import { checkFixture, listFixtures } from '../helpers/fixtures.js';

/**
 * Every Node.js fixture app is deployed for real with `runplan run`, then checked
 * over HTTP against the expectations kept beside it (fixtures/node/<case>/expect.json).
 */
describe('node fixtures', () => {
  for (const fixture of listFixtures('node')) {
    it(`${fixture.name}: ${fixture.expect.rule}`, async () => {
      await checkFixture(fixture);
    });
  }
});
