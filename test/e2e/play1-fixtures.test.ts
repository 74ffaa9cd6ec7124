import { spawnSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunPlanSchema } from '../../src/plan/schema.js';
import { ROOT, runCli } from '../helpers/cli.js';
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
        const archives = join(isolatedCache, 'trees', 'archive');
        expect(await readdir(archives).catch(() => [])).toEqual([]);
        const retried = {
          ...fixture.expect,
          deploy: 'healthy' as const,
          hostEnv: { RUNPLAN_CACHE_DIR: '{{isolatedCache}}' },
          output: ['play-1.11.0.zip into the shared cache', '[framework] cached '],
        };
        await check({ ...fixture, expect: retried });
        expect(await readdir(archives)).toHaveLength(1);
      }
    });
  }
});

describe('runplan plan for Play 1.x', () => {
  const app = join(ROOT, 'fixtures', 'play1', 'env-reference');

  it('prints a schema-valid plan explaining the version, without secret values', async () => {
    const { code, stdout } = await runCli(['plan', app, '--json', '--env', 'PLAY1_VERSION=17', '--addon-env', 'pg:PG_PASSWORD=pg-plan-secret-55'], mirror.hostEnv());
    expect(code).toBe(0);
    const plan = RunPlanSchema.parse(JSON.parse(stdout));
    expect(plan.app.type).toBe('play1');
    expect(plan.runtimes[0]?.decision).toMatchObject({ requested: '17', source: 'env PLAY1_VERSION (--env)', resolved: '1.7.1', reason: expect.stringContaining('17 is the short code of 1.7') });
    // What the series needs of the host, stated as data.
    expect(plan.runtimes.map((r) => [r.name, r.needs])).toEqual([
      ['play', undefined],
      ['java', { command: 'java', min: 11, max: 17, above: 'untested' }],
      ['python', { command: 'python3', min: 3, max: 3, above: 'refused' }],
    ]);
    expect(stdout).not.toContain('pg-plan-secret-55');
  });

  // Read from the machine, never assumed: only meaningful where python2 does not answer (Debian 12 has none).
  const hasPython2 = spawnSync('python2', ['--version']).status === 0;
  it.skipIf(hasPython2)('refuses, before any build, a series whose launcher needs the Python 2 this machine lacks, with the code, the need, what was found and the fix', async () => {
    const { code, stderr } = await runCli(['run', app, '--env', 'PLAY1_VERSION=12'], mirror.hostEnv());
    expect(code).toBe(1);
    expect(stderr).toContain('error RUNPLAN_E_PLAY1_PYTHON_MISSING: Play 1.2.7.2 (series 1.2) needs Python 2: its play launcher is a Python 2 script, and this host has no working python2 on PATH');
    expect(stderr).toContain('fix: Choose Play 1.7 or newer (e.g. PLAY1_VERSION=1.11), whose launcher runs on Python 3, or install a Python 2 as python2');
    expect(stderr).not.toContain('step ');
    expect(mirror.requests.filter((path) => path.includes('1.2.7.2'))).toEqual([]);
  });

  it('refuses to plan a Play application when the host configured no mirror', async () => {
    const { code, stderr } = await runCli(['plan', app], { RUNPLAN_PLAY1_MIRROR: '', RUNPLAN_PLAY1_CHECKSUMS: '' });
    expect(code).toBe(2);
    expect(stderr).toContain('error RUNPLAN_E_PLAY1_MIRROR_UNSET: Play 1.11.0 must be downloaded, but no mirror is configured');
    expect(stderr).toContain('variable: RUNPLAN_PLAY1_MIRROR');
  });
});
