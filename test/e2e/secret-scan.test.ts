import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as kit from '../../scripts/fixture-kit.mjs';
import { ROOT, runCli } from '../helpers/cli.js';
import { envArgs, listFixtures, type Fixture, type FixtureExpectation } from '../helpers/fixtures.js';
import { SSH_STAND_INS, standInLockFile } from '../helpers/stand-ins.js';
import { deploymentDirs, removeAfterFile, tempDir } from '../helpers/temp.js';

/**
 * Every fixture planned, and a few built, with known secret values in the
 * variables that hold credentials; the values must appear in no output, no plan
 * and no file the build left (the .npmrc holding NPM_TOKEN during the build steps
 * is removed once they are done, issue 21). Plans come from the golden inventory:
 * no program runs, no connection.
 */
const INVENTORY = join(ROOT, 'test', 'golden', 'inventory.json');

const SSH_LINES = Array.from({ length: 40 }, (_, i) => `b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABD${String(i).padStart(4, '0')}`);
const SSH_KEY = ['-----BEGIN OPENSSH PRIVATE KEY-----', ...SSH_LINES, '-----END OPENSSH PRIVATE KEY-----'].join('\n');
const SECRETS = {
  NPM_TOKEN: 'npm_scan_secret_token_7f3a9c',
  CC_HTTP_BASIC_AUTH: 'scanuser:scan_basic_pw_5d2e',
  CC_HTTP_BASIC_AUTH_1: 'other:scan_basic_pw2_8b1f',
  DATABASE_URL: 'postgres://db:scan_db_pw_4c7d@db.internal:5432/app',
} as const;
/** What must never be printed or written: each value, the passwords alone, and every line of the key. */
const NEEDLES = [...Object.values(SECRETS), 'scan_basic_pw_5d2e', 'scan_basic_pw2_8b1f', 'scan_db_pw_4c7d', ...SSH_LINES];

function leaks(text: string): string[] {
  return NEEDLES.filter((n) => text.includes(n));
}

async function secretArgs(): Promise<string[]> {
  const file = join(await tempDir('runplan-scan-env-'), 'keys.env');
  await writeFile(file, `DEPLOY_SSH_PRIVATE_KEY="${SSH_KEY}"\n`);
  return [...Object.entries(SECRETS).flatMap(([k, v]) => ['--env', `${k}=${v}`]), '--app-env-file', file];
}

const golden = JSON.parse(await readFile(INVENTORY, 'utf8')) as { buildpacks: { ruby: { rubies: { version: string }[] } } };
const rubyVersion = golden.buildpacks.ruby.rubies[0]?.version as string;
const [rubyMajor, rubyMinor] = rubyVersion.split('.');
const STAND_INS: Readonly<Record<string, string>> = {
  RUBY_VERSION: rubyVersion,
  RUBY_SERIES: `${rubyMajor}.${rubyMinor}`,
  RUBY_MAJOR: rubyMajor as string,
  DEBIAN_BUNDLER: '0.0.0',
  port: '8080',
  REDIS_PORT: '6379',
  VERDACCIO_HOST: '127.0.0.1:4873',
  VERDACCIO_TOKEN: 'scan-verdaccio-token',
  VERDACCIO_INTEGRITY: 'sha512-scan',
  corruptMirror: 'https://play-mirror.example.org/corrupt/{version}/play-{version}.zip',
  isolatedCache: '/nonexistent/cache',
  ...SSH_STAND_INS,
};
const standIn: kit.PlaceholderResolver = (name, argument) => (argument === undefined ? STAND_INS[name] : undefined);

/** The fixture as the golden plans plan it: templates filled, a stand-in lock file where its test makes one. */
async function plannedCopy(fixture: Fixture): Promise<string> {
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

describe.concurrent('no secret in any plan or planning output', () => {
  for (const fixture of listFixtures()) {
    it(`${fixture.type}/${fixture.name}`, async () => {
      const dir = await plannedCopy(fixture);
      const given = kit.fillPlaceholders(
        { env: fixture.expect.env ?? {}, addons: fixture.expect.addons ?? {}, args: fixture.expect.args ?? [], hostEnv: fixture.expect.hostEnv ?? {}, type: fixture.expect.type } as FixtureExpectation,
        standIn,
      );
      const hostEnv = { RUNPLAN_RUBY_DEFAULT_SERIES: '', RUNPLAN_RUBY_GEM_SOURCE: 'local', RUNPLAN_PLAY1_DEFAULT_VERSION: '', ...given.hostEnv };
      const { output } = await runCli(['plan', dir, '--inventory', INVENTORY, '--json', ...envArgs(given), ...(given.args ?? []), ...(await secretArgs())], hostEnv);
      expect(leaks(output)).toEqual([]);
    });
  }
});

/** Every file under `root` (symbolic links not followed) with its text, for scanning. */
async function* files(root: string): AsyncGenerator<string> {
  for (const entry of await readdir(root, { withFileTypes: true }).catch(() => [])) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (entry.isFile()) yield path;
  }
}

async function scanTree(root: string): Promise<string[]> {
  const found: string[] = [];
  for await (const path of files(root)) {
    const text = (await readFile(path)).toString('latin1');
    const hits = leaks(text);
    if (hits.length === 0) continue;
    found.push(`${relative(root, path)}: ${hits.map((h) => h.slice(0, 12)).join(', ')}`);
  }
  return found;
}

describe('no secret in any build output or file a build wrote', () => {
  it('node application with an install script, NPM_TOKEN and an SSH key', async () => {
    const dir = await tempDir('runplan-scan-app-');
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'scan', version: '1.0.0', main: 'server.js', scripts: { install: 'echo installing; env | grep -c NPM_TOKEN' } }));
    await writeFile(join(dir, 'server.js'), '');
    const dirs = await deploymentDirs();
    const plan = await runCli(['plan', dir, '--json', ...(await secretArgs())], dirs.env);
    const build = await runCli(['build', dir, ...(await secretArgs())], dirs.env);
    expect(build.code, build.output.slice(-2000)).toBe(0);
    expect(leaks(plan.output + build.output)).toEqual([]);
    expect(await scanTree(dirs.workDir)).toEqual([]);
    const [app] = await readdir(dirs.workDir);
    for (const cache of ['npm-cache', 'layers']) expect(await scanTree(join(dirs.cacheDir, cache, app as string))).toEqual([]);
  }, 300_000);

  it('the Express fixture with basic-auth, database and key secrets (NPM_TOKEN left out: the public registry refuses an unknown token)', async () => {
    const fixture = listFixtures('node').find((f) => f.name === 'express') as Fixture;
    const dirs = await deploymentDirs();
    const args = (await secretArgs()).filter((a, i, all) => !a.startsWith('NPM_TOKEN=') && !(a === '--env' && all[i + 1]?.startsWith('NPM_TOKEN=')));
    const build = await runCli(['build', fixture.dir, ...args], dirs.env);
    expect(build.code, build.output.slice(-2000)).toBe(0);
    expect(leaks(build.output)).toEqual([]);
    expect(await scanTree(dirs.workDir)).toEqual([]);
  }, 600_000);
});
