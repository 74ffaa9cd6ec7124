import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFixture, listFixtures, type Fixture } from '../helpers/fixtures.js';
import { standInDistributions, startPlay1Mirror, type Play1Mirror } from '../helpers/play1.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Every Play 1.x fixture is deployed for real with `runplan run` against a
 * STAND-IN framework (no real Play can be had here: see
 * test/stand-in/play1/README.md) served from a local mirror, so the real
 * version, download, checksum, cache, unpack and command-line paths run. Each
 * fixture's expect.json says what the running application must answer.
 */
let mirror: Play1Mirror;
let isolatedCache: string;
const placeholders = () => ({ corruptMirror: mirror.template('zip', 'corrupt'), isolatedCache });

beforeAll(async () => {
  mirror = await startPlay1Mirror(await standInDistributions());
  isolatedCache = await tempDir('runplan-play1-isolated-cache-');
});
afterAll(() => mirror?.close());

const check = (fixture: Fixture) => checkFixture(fixture, { hostEnv: mirror.hostEnv(), placeholders: placeholders() });

describe('play1 fixtures', () => {
  for (const fixture of listFixtures('play1')) {
    it(`${fixture.name}: ${fixture.expect.rule}`, async () => {
      await check(fixture);
      if (fixture.name === 'corrupted-download') {
        // Nothing of the bad download was kept, so the genuine archive installs into the same cache.
        expect(await readdir(join(isolatedCache, 'play1'))).toEqual([]);
        const retried = { ...fixture.expect, deploy: 'healthy' as const, hostEnv: { RUNPLAN_CACHE_DIR: '{{isolatedCache}}' }, output: ['unpacked Play 1.11.0 (zip) into the shared cache'] };
        await check({ ...fixture, expect: retried });
        expect(await readdir(join(isolatedCache, 'play1'))).toHaveLength(1);
      }
    });
  }
});
