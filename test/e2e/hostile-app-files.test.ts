import { execFileSync } from 'node:child_process';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';

// Issue 11, findings 2, 5, 10, 11, 12, 13: an application's files are untrusted; nothing of the host comes out.
const SECRET = 'HOST-SHADOW-LINE-5b9e';

/** A host directory holding a secret file, and an empty application directory beside it. */
async function hostAndApp(): Promise<{ app: string; secret: string; outside: string }> {
  const base = await tempDir('runplan-hostile-');
  const app = join(base, 'app');
  const outside = join(base, 'outside');
  await mkdir(app);
  await mkdir(outside);
  const secret = join(base, 'shadow');
  await writeFile(secret, `${SECRET}\nroot:x:0:0:root:/root:/bin/bash\n`);
  return { app, secret, outside };
}

async function put(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
}

const PLAY = { 'conf/application.conf': 'application.name=x\n', 'conf/routes': 'GET / Application.index\n' };
const NODE = { 'package.json': '{"name":"x","main":"server.js"}', '.gitignore': 'node_modules\n', 'server.js': '' };
const RUBY_LOCK = 'GEM\n  specs:\n    nio4r (2.5.8)\n    puma (5.6.5)\n      nio4r (~> 2.0)\n    rack (2.2.22)\n    sidekiq (6.5.1)\n\nDEPENDENCIES\n  puma\n  rack\n  sidekiq\n';

/** A coded refusal (exit 2) without a stack trace, the host's secret, or the secret file's path. */
function expectCodedRefusal(result: { code: number | null; output: string }, code: string, secretPath?: string): void {
  expect(result.output).toContain(`error ${code}:`);
  expect(result.code).toBe(2);
  expect(result.output).not.toContain(SECRET);
  expect(result.output).not.toContain('root:x:0:0');
  expect(result.output).not.toMatch(/^\s+at /m);
  if (secretPath) expect(result.output).not.toContain(secretPath);
}

describe('symbolic links out of the application are refused, and the host file never printed (finding 2)', () => {
  it('platform/play1_version → a host file', async () => {
    const { app, secret } = await hostAndApp();
    await put(app, PLAY);
    await mkdir(join(app, 'platform'));
    await symlink(secret, join(app, 'platform', 'play1_version'));
    expectCodedRefusal(await runCli(['plan', app]), 'RUNPLAN_E_APP_PATH_OUTSIDE', secret);
  });

  it('conf/application.conf → a host file', async () => {
    const { app, secret } = await hostAndApp();
    await put(app, { 'conf/routes': PLAY['conf/routes'] });
    await symlink(secret, join(app, 'conf', 'application.conf'));
    expectCodedRefusal(await runCli(['plan', app, '--type', 'play1']), 'RUNPLAN_E_APP_PATH_OUTSIDE', secret);
  });

  it('package.json → a host file', async () => {
    const { app, secret } = await hostAndApp();
    await symlink(secret, join(app, 'package.json'));
    expectCodedRefusal(await runCli(['plan', app, '--type', 'node']), 'RUNPLAN_E_APP_PATH_OUTSIDE', secret);
  });

  it('.npmrc → a host file: not in plan --json', async () => {
    const { app, secret } = await hostAndApp();
    await put(app, NODE);
    await symlink(secret, join(app, '.npmrc'));
    const result = await runCli(['plan', app, '--json', '--env', 'NPM_TOKEN=tok_e2e_1']);
    expectCodedRefusal(result, 'RUNPLAN_E_APP_PATH_OUTSIDE', secret);
  });

  it('a ruby file: directive naming .ruby-version → a host file', async () => {
    const { app, secret } = await hostAndApp();
    await put(app, { Gemfile: "ruby file: '.ruby-version'\ngem 'puma'\ngem 'rack'\ngem 'sidekiq'\n", 'Gemfile.lock': RUBY_LOCK, 'config.ru': 'run ->(e) { [200, {}, []] }\n' });
    await symlink(secret, join(app, '.ruby-version'));
    expectCodedRefusal(await runCli(['plan', app]), 'RUNPLAN_E_APP_PATH_OUTSIDE', secret);
  });
});

describe('non-regular and oversized files (findings 11, 12, 13)', () => {
  it('platform/play1_version as a directory or a FIFO is a coded error, and a FIFO does not hang planning', async () => {
    const { app } = await hostAndApp();
    await put(app, PLAY);
    await mkdir(join(app, 'platform', 'play1_version'), { recursive: true });
    expectCodedRefusal(await runCli(['plan', app]), 'RUNPLAN_E_APP_FILE_NOT_REGULAR');
    execFileSync('rmdir', [join(app, 'platform', 'play1_version')]);
    execFileSync('mkfifo', [join(app, 'platform', 'play1_version')]);
    const started = Date.now();
    const fifo = await runCli(['plan', app]);
    expectCodedRefusal(fifo, 'RUNPLAN_E_APP_FILE_NOT_REGULAR');
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('a 3 MB binary version file gives a short message with control characters escaped', async () => {
    const { app } = await hostAndApp();
    await put(app, PLAY);
    const binary = Buffer.alloc(3_000_000);
    for (let i = 0; i < binary.length; i++) binary[i] = (i * 7919) % 256;
    await put(app, { 'platform/play1_version': '' });
    await writeFile(join(app, 'platform', 'play1_version'), binary);
    const result = await runCli(['plan', app]);
    expectCodedRefusal(result, 'RUNPLAN_E_PLAY1_VERSION_INVALID');
    expect(result.output.length).toBeLessThan(2_000);
    // No raw control character but the newlines between lines of the report.
    expect(result.output).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
  });

  it('a 50 MB unterminated package.json is refused by size, a 3 MB one with a bounded excerpt at the real position', async () => {
    const { app } = await hostAndApp();
    await writeFile(join(app, 'package.json'), `{"name": "${'x'.repeat(50_000_000)}`);
    const large = await runCli(['plan', app, '--type', 'node']);
    expectCodedRefusal(large, 'RUNPLAN_E_APP_FILE_TOO_LARGE');
    expect(large.output.length).toBeLessThan(1_000);
    await writeFile(join(app, 'package.json'), `{\n  "main": "a.js",\n  "name": "${'x'.repeat(3_000_000)}`);
    const unterminated = await runCli(['plan', app, '--type', 'node']);
    expectCodedRefusal(unterminated, 'RUNPLAN_E_NODE_PACKAGE_JSON_INVALID');
    expect(unterminated.output).toContain('at line 3, column 11');
    expect(unterminated.output.length).toBeLessThan(1_000);
  });

  it('a Sidekiq file that is a directory is not reported as missing', async () => {
    const { app } = await hostAndApp();
    // Any Ruby this machine has: the check comes after the version is chosen.
    await put(app, { Gemfile: "ruby '>= 2.0'\ngem 'puma'\ngem 'rack'\ngem 'sidekiq'\n", 'Gemfile.lock': RUBY_LOCK, 'config.ru': 'run ->(e) { [200, {}, []] }\n' });
    await mkdir(join(app, 'config', 'sidekiq-a.yml'), { recursive: true });
    const result = await runCli(['plan', app, '--env', 'CC_SIDEKIQ_FILES=config/sidekiq-a.yml']);
    expectCodedRefusal(result, 'RUNPLAN_E_APP_FILE_NOT_REGULAR');
    expect(result.output).toContain('config/sidekiq-a.yml is a directory');
  });
});

describe('uncoded crashes (finding 11)', () => {
  it.each([['22'], ['{"v": 22}'], ['[22]'], ['null'], ['true']])('engines.node = %s', async (value) => {
    const { app } = await hostAndApp();
    await put(app, { ...NODE, 'package.json': `{"main": "server.js", "engines": {"node": ${value}}}` });
    expectCodedRefusal(await runCli(['plan', app]), 'RUNPLAN_E_NODE_PACKAGE_JSON_INVALID');
  });

  it('100,000 nested arrays in dependencies', async () => {
    const { app } = await hostAndApp();
    await put(app, { ...NODE, 'package.json': `{"main": "server.js", "dependencies": {"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}}` });
    expectCodedRefusal(await runCli(['plan', app]), 'RUNPLAN_E_NODE_PACKAGE_JSON_INVALID');
  });

  it('RUNPLAN_RUBY_DEFAULT_SERIES=abc does not stop planning a Node.js application, and is a coded error for a Ruby one', async () => {
    const { app } = await hostAndApp();
    await put(app, NODE);
    expect((await runCli(['plan', app], { RUNPLAN_RUBY_DEFAULT_SERIES: 'abc' })).code).toBe(0);
    const ruby = await hostAndApp();
    await put(ruby.app, { Gemfile: "gem 'puma'\ngem 'rack'\ngem 'sidekiq'\n", 'Gemfile.lock': RUBY_LOCK, 'config.ru': 'run ->(e) { [200, {}, []] }\n' });
    const result = await runCli(['plan', ruby.app], { RUNPLAN_RUBY_DEFAULT_SERIES: 'abc' });
    expectCodedRefusal(result, 'RUNPLAN_E_HOST_INVALID_SETTING');
    expect(result.output).toContain('variable: RUNPLAN_RUBY_DEFAULT_SERIES');
  });
});

describe('nothing runs or is written outside the application (findings 5, 10)', () => {
  it.each([['../../etc/passwd'], ['/etc/passwd']])('main %s is refused when planning', async (main) => {
    const { app } = await hostAndApp();
    await put(app, { ...NODE, 'package.json': JSON.stringify({ main }) });
    expectCodedRefusal(await runCli(['build', app]), 'RUNPLAN_E_APP_PATH_OUTSIDE');
  });

  it('a committed .yarn link to an outside folder is refused before anything is written there', async () => {
    const { app, outside } = await hostAndApp();
    await put(app, { ...NODE, 'yarn.lock': '' });
    await symlink(outside, join(app, '.yarn'));
    const { env } = await deploymentDirs();
    expectCodedRefusal(await runCli(['build', app, '--env', 'CC_NODE_BUILD_TOOL=yarn-berry'], env), 'RUNPLAN_E_APP_PATH_OUTSIDE');
    expect(await readdir(outside)).toEqual([]);
  });

  it('main reached through a link to a host file fails the build with APP_PATH_OUTSIDE, never running or printing it', async () => {
    const { app, secret } = await hostAndApp();
    await put(app, { '.gitignore': 'node_modules\n', 'package.json': '{"name":"x","main":"server.js"}' });
    await symlink(secret, join(app, 'server.js'));
    const { env } = await deploymentDirs();
    const result = await runCli(['build', app], env);
    expect(result.output).toContain('error RUNPLAN_E_APP_PATH_OUTSIDE:');
    expect(result.code).toBe(2);
    expect(result.output).not.toContain(SECRET);
    expect(result.output).not.toMatch(/^\s+at /m);
  });
});
