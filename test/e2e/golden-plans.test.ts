import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as kit from '../../scripts/fixture-kit.mjs';
import { ROOT, runCli } from '../helpers/cli.js';
import { envArgs, listFixtures, type Fixture, type FixtureExpectation } from '../helpers/fixtures.js';
import { SSH_STAND_INS, standInLockFile } from '../helpers/stand-ins.js';
import { removeAfterFile } from '../helpers/temp.js';

/**
 * One golden plan per fixture (test/golden/<type>/<case>[--<variant>].json),
 * made with the CLI from a fixed inventory (test/golden/inventory.json) so that
 * it depends on runplan's planning only, not on this machine or the registry's
 * newest releases. Any change of any plan shows up here and in review.
 * Regenerate after an intended change: `npm run golden` (see test/golden/README.md).
 */
const GOLDEN = join(ROOT, 'test', 'golden');
const INVENTORY = join(GOLDEN, 'inventory.json');
const UPDATE = process.env.RUNPLAN_UPDATE_GOLDEN === '1';

interface GoldenInventory {
  buildpacks: { ruby: { rubies: { version: string }[] } };
}
const rubyVersion = (JSON.parse(readFileSync(INVENTORY, 'utf8')) as GoldenInventory).buildpacks.ruby.rubies[0]?.version as string;
const [rubyMajor, rubyMinor] = rubyVersion.split('.');

/** Stand-in values for what the fixtures' tests fill from the machine or from the services they start. */
const STAND_INS: Readonly<Record<string, string>> = {
  RUBY_VERSION: rubyVersion,
  RUBY_SERIES: `${rubyMajor}.${rubyMinor}`,
  RUBY_MAJOR: rubyMajor as string,
  DEBIAN_BUNDLER: '0.0.0',
  port: '8080',
  REDIS_PORT: '6379',
  VERDACCIO_HOST: '127.0.0.1:4873',
  VERDACCIO_TOKEN: 'golden-token-4f1c2a9e',
  VERDACCIO_INTEGRITY: 'sha512-golden',
  corruptMirror: 'https://play-mirror.example.org/corrupt/{version}/play-{version}.zip',
  isolatedCache: '/nonexistent/cache',
  ...SSH_STAND_INS,
};
const standIn: kit.PlaceholderResolver = (name, argument) => (argument === undefined ? STAND_INS[name] : undefined);

/**
 * The fixture as planned for its golden plan: templates filled with the golden
 * inventory's versions, and, where its test makes a lock file on the machine, a
 * stand-in lock file naming each gem of the Gemfile at version 0.0.0 (the gem
 * versions of a real lock file are this machine's).
 */
async function goldenCopy(fixture: Fixture): Promise<string> {
  const { prepare = [], ...rest } = fixture.expect;
  const needsLock = prepare.some((command) => command.includes('lock'));
  const copy = kit.prepareCopy({ ...fixture, expect: rest }, standIn, { copy: needsLock });
  if (copy.cleanup === undefined) return copy.dir;
  removeAfterFile(copy.cleanup);
  if (needsLock) {
    const gemfileName = existsSync(join(copy.dir, 'gems.rb')) ? 'gems.rb' : 'Gemfile';
    const lock = standInLockFile(await readFile(join(copy.dir, gemfileName), 'utf8'));
    await writeFile(join(copy.dir, gemfileName === 'gems.rb' ? 'gems.locked' : 'Gemfile.lock'), lock);
  }
  return copy.dir;
}

function goldenFile(fixture: Fixture): string {
  return join(GOLDEN, fixture.type, `${fixture.name.replace('/', '--')}.json`);
}

describe.concurrent('golden plans', () => {
  for (const fixture of listFixtures()) {
    it(`${fixture.type}/${fixture.name}`, async () => {
      const dir = await goldenCopy(fixture);
      const given = kit.fillPlaceholders(
        { env: fixture.expect.env ?? {}, addons: fixture.expect.addons ?? {}, args: fixture.expect.args ?? [], hostEnv: fixture.expect.hostEnv ?? {}, type: fixture.expect.type } as FixtureExpectation,
        standIn,
      );
      const hostEnv = { RUNPLAN_RUBY_DEFAULT_SERIES: '', RUNPLAN_RUBY_GEM_SOURCE: 'local', RUNPLAN_PLAY1_DEFAULT_VERSION: '', ...given.hostEnv };
      const result = await runCli(['plan', dir, '--inventory', INVENTORY, '--json', ...envArgs(given), ...(given.args ?? [])], hostEnv);
      const actual = result.code === 0 ? JSON.parse(result.stdout) : { exitCode: result.code, error: result.stderr.split(dir).join('<app>') };
      const file = goldenFile(fixture);
      const text = `${JSON.stringify(actual, null, 2)}\n`;
      if (UPDATE) {
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, text);
        return;
      }
      expect(existsSync(file), `no golden plan ${file}: run \`npm run golden\` and review the new file`).toBe(true);
      expect(text, `the plan of ${fixture.type}/${fixture.name} changed; if that is intended, run \`npm run golden\` and review the diff`).toBe(await readFile(file, 'utf8'));
    });
  }
});
