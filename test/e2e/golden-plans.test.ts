import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as kit from '../../scripts/fixture-kit.mjs';
import { declaredGems } from '../../buildpacks/ruby/gemfile.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { envArgs, listFixtures, type Fixture, type FixtureExpectation } from '../helpers/fixtures.js';
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

/** An SSH wire-format string: its length (4 bytes), then its bytes. */
function sshString(value: string | Buffer): Buffer {
  const bytes = Buffer.from(value);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** An ssh-ed25519 public key blob of 32 bytes of `fill`: the right shape, nobody's key. */
function standInPublicKey(fill: number): Buffer {
  return Buffer.concat([sshString('ssh-ed25519'), sshString(Buffer.alloc(32, fill))]);
}

/** An unencrypted OpenSSH private key of the right shape (which is all planning reads), the same on every run: the plans name its fingerprint. */
function standInSshKey(fill: number): string {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(1);
  const blob = Buffer.concat([
    Buffer.from('openssh-key-v1\0', 'latin1'),
    sshString('none'),
    sshString('none'),
    sshString(''),
    count,
    sshString(standInPublicKey(fill)),
    sshString(Buffer.alloc(16, fill)),
  ]);
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${(blob.toString('base64').match(/.{1,70}/g) ?? []).join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

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
  corruptMirror: 'https://play-mirror.example.org/corrupt/{version}/play-{version}.zip',
  isolatedCache: '/nonexistent/cache',
  SSH_GIT_BASE: 'ssh://git@127.0.0.1:2222/srv/git',
  SSH_CLIENT_KEY: standInSshKey(1),
  SSH_OTHER_KEY: standInSshKey(2),
  SSH_KNOWN_HOSTS: `[127.0.0.1]:2222 ssh-ed25519 ${standInPublicKey(3).toString('base64')}`,
  SSH_WRONG_KNOWN_HOSTS: `[127.0.0.1]:2222 ssh-ed25519 ${standInPublicKey(4).toString('base64')}`,
  SSH_KNOWN_HOSTS_FILE: '/etc/ssh/ssh_known_hosts',
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
    const gemfile = await readFile(join(copy.dir, gemfileName), 'utf8');
    // A gem from a git repository (`gem 'x', git: 'url'`) has a GIT section of its own, as bundler writes it.
    const fromGit = new Map([...gemfile.matchAll(/^gem\s+'([^']+)',\s*git:\s*'([^']+)'/gm)].map((m) => [m[1] as string, m[2] as string]));
    const gems = [...declaredGems(gemfile)].filter((g) => !fromGit.has(g)).sort();
    const git = [...fromGit].flatMap(([gem, remote]) => ['GIT', `  remote: ${remote}`, `  revision: ${'0'.repeat(40)}`, '  specs:', `    ${gem} (0.0.0)`, '']);
    const dependencies = [...gems, ...[...fromGit.keys()].map((g) => `${g}!`)].sort();
    const lock = [
      ...git,
      'GEM',
      '  specs:',
      ...gems.map((g) => `    ${g} (0.0.0)`),
      '',
      'PLATFORMS',
      '  ruby',
      '',
      'DEPENDENCIES',
      ...dependencies.map((g) => `  ${g}`),
      '',
      'BUNDLED WITH',
      '   0.0.0',
      '',
    ];
    await writeFile(join(copy.dir, gemfileName === 'gems.rb' ? 'gems.locked' : 'Gemfile.lock'), lock.join('\n'));
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
