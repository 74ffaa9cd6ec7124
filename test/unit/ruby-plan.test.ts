import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNodeBuildpack } from '../../buildpacks/node/index.js';
import { createRubyBuildpack, type RubyBuildpackOptions } from '../../buildpacks/ruby/index.js';
import { RubyErrors } from '../../buildpacks/ruby/errors.js';
import { findNginx, resolveRubyOptions, rubyInventoryProvider, RubyInventorySchema, type RubyInventoryData } from '../../buildpacks/ruby/options.js';
import { systemRubies } from '../../buildpacks/ruby/rubies.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { defaultRegistry } from '../../src/compose/default-registry.js';
import { explainFailure } from '../../src/steps/command-step.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { DirectorySource } from '../../src/files/directory-source.js';
import { MemorySource } from '../../src/files/memory-source.js';
import type { PlannedFile, RunPlan } from '../../src/plan/schema.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { testInventory } from '../helpers/inventory.js';
import { TEST_INVENTORY } from '../helpers/node-inventory.js';
import { tempDir } from '../helpers/temp.js';

const LOCK = 'GEM\n  specs:\n    nio4r (2.5.8)\n    puma (5.6.5)\n      nio4r (~> 2.0)\n    rack (2.2.22)\n\nDEPENDENCIES\n  puma\n  rack\n\nRUBY VERSION\n   ruby 3.1.2p20\n';
const APP = { Gemfile: "ruby '3.1.2'\ngem 'puma'\ngem 'rack'\n", 'Gemfile.lock': LOCK, 'config.ru': 'run ->(e) { [200, {}, []] }\n' };
const rubies = [{ version: '3.1.2', bindir: '/usr/bin', origin: 'test /usr/bin/ruby3.1', gemsFingerprint: 'f1' }];
const registry = (options: RubyBuildpackOptions = {}) =>
  new BuildpackRegistry([createNodeBuildpack({ inventory: TEST_INVENTORY }), createRubyBuildpack({ defaultSeries: '3.3', gemSource: 'local', nginxUser: null, nginx: 'nginx', ...options })]);
/** Plans with the Ruby part of the inventory holding `rubies`, changed by `machine`. */
const plan = (files: Record<string, string>, application: Record<string, string> = {}, options: RubyBuildpackOptions = {}, machine: Partial<RubyInventoryData> = {}, previous?: RunPlan) =>
  createPlan({
    registry: registry(options),
    inventory: testInventory({ ruby: { rubies, ...machine } }),
    files: new MemorySource(files),
    appDir: '/srv/app',
    env: { application },
    host: { port: 8080 },
    ...(previous ? { previous } : {}),
  });
/** A planned file's text, with its placeholders and variable references as written in the plan. */
const fileText = (file: PlannedFile | undefined) => (file?.content ?? []).map((c) => ('text' in c ? c.text : 'placeholder' in c ? `\${${c.placeholder}}` : `<${c.env}>`)).join('');
const nginxConf = (p: RunPlan) => fileText(p.files.find((f) => f.path === '.runplan/nginx/nginx.conf'));

describe('ruby detection and checks (Ruby rule 1)', () => {
  it('detects Gemfile + config.ru ahead of node, even with a package.json', async () => {
    const { plan: p } = await plan({ ...APP, 'package.json': '{"main":"x.js"}' });
    expect(p.app.type).toBe('ruby');
    expect(p.app.detection.evidence).toEqual(['Gemfile found', 'config.ru found']);
    expect(p.app.detection.candidates.map((c) => [c.buildpack, c.status])).toEqual([
      ['ruby', 'pass'],
      ['node', 'pass'],
    ]);
  });

  it('leaves a Node.js application with a Gemfile but no config.ru to node', async () => {
    const { plan: p } = await plan({ Gemfile: "gem 'rake'\n", 'package.json': '{"main":"x.js"}' });
    expect(p.app.type).toBe('node');
  });

  it.each<[string, Record<string, string | undefined>, string, string]>([
    ['no config.ru', { 'config.ru': undefined }, RubyErrors.RUBY_CONFIG_RU_MISSING.code, 'config.ru'],
    ['no lock file', { 'Gemfile.lock': undefined }, RubyErrors.RUBY_LOCKFILE_MISSING.code, 'Gemfile.lock'],
    ['gems.rb with Gemfile.lock only', { Gemfile: undefined, 'gems.rb': "gem 'puma'\n" }, RubyErrors.RUBY_LOCKFILE_MISSING.code, 'gems.locked'],
    ['no puma', { Gemfile: "gem 'rack'\n", 'Gemfile.lock': 'GEM\n  specs:\n    rack (2.2.22)\n\nDEPENDENCIES\n  rack\n' }, RubyErrors.RUBY_PUMA_GEM_MISSING.code, 'Gemfile'],
  ])('refuses an application with %s, naming the file', async (_name, change, code, file) => {
    const files = Object.fromEntries(Object.entries({ ...APP, ...change }).filter(([, v]) => v !== undefined)) as Record<string, string>;
    await expect(plan(files)).rejects.toMatchObject({ code, file, kind: 'input' });
  });

  it("accepts gems.rb with gems.locked, and puma pulled in by the lock file's dependencies", async () => {
    const { plan: p } = await plan({ 'gems.rb': 'gemspec\n', 'gems.locked': LOCK, 'config.ru': 'x' }, { CC_RUBY_VERSION: '3.1' });
    expect(p.build.steps[0]?.description).toContain('gems.locked');
  });

  it('refuses another CC_RACKUP_SERVER, and a RUBY_ENV that is not a name', async () => {
    await expect(plan(APP, { CC_RACKUP_SERVER: 'thin' })).rejects.toMatchObject({ code: RubyErrors.RUBY_RACKUP_SERVER_INVALID.code, variable: 'CC_RACKUP_SERVER' });
    await expect(plan(APP, { RUBY_ENV: '-x' })).rejects.toMatchObject({ code: RubyErrors.RUBY_ENV_INVALID.code });
  });
});

describe('ruby plan', () => {
  it("sizes webpacker's Node.js heap in the rake goals and build hooks for a dedicated build instance, and leaves the processes to the instance", async () => {
    const planned = (host: Parameters<typeof createPlan>[0]['host'], application: Record<string, string> = {}) =>
      createPlan({
        registry: registry(),
        inventory: testInventory({ ruby: { rubies } }),
        files: new MemorySource(APP),
        appDir: '/srv/app',
        env: { application: { CC_RAKEGOALS: 'assets:precompile', CC_POST_BUILD_HOOK: 'bin/webpack', CC_PRE_RUN_HOOK: 'true', ...application } },
        host: { port: 8080, ...host },
      });
    const step = (p: RunPlan, name: string) => p.build.steps.find((s) => s.name === name);
    const { plan: dedicated } = await planned({ instance: { cpus: 1, memoryMb: 1024 }, buildInstance: { cpus: 4, memoryMb: 4096 } });
    expect(dedicated.buildInstance).toMatchObject({ cpus: 4, memoryMb: 4096, decision: { id: 'build-instance', resolved: '4 CPUs, 4096 MiB' } });
    expect(step(dedicated, 'rake')?.env.NODE_OPTIONS).toBe('--max-old-space-size=3072');
    expect(step(dedicated, 'post-build-hook')?.env.NODE_OPTIONS).toBe('--max-old-space-size=3072');
    expect(dedicated.runHooks?.preRun[0]?.env.NODE_OPTIONS).toBeUndefined();
    expect(dedicated.processes.every((proc) => proc.env.NODE_OPTIONS === undefined)).toBe(true);
    expect(dedicated.decisions.find((d) => d.id === 'ruby.build-node-options')?.resolved).toBe('--max-old-space-size=3072');
    // The application's own limit is kept; without a dedicated build instance nothing is added.
    const own = await planned({ buildInstance: { cpus: 4, memoryMb: 4096 } }, { NODE_OPTIONS: '--max-old-space-size=2000' });
    expect(step(own.plan, 'rake')?.env.NODE_OPTIONS).toBeUndefined();
    const shared = await planned({ instance: { cpus: 1, memoryMb: 1024 } });
    expect(shared.plan.buildInstance).toBeUndefined();
    expect(step(shared.plan, 'rake')?.env.NODE_OPTIONS).toBeUndefined();
    await expect(planned({ buildInstance: { cpus: 0, memoryMb: 4096 } })).rejects.toMatchObject({
      code: CoreErrors.HOST_INVALID_SETTING.code,
      message: expect.stringContaining('build instance CPUs'),
    });
  });

  it('installs the bundle, runs the rake goals, checks nginx, then runs Puma behind nginx', async () => {
    const { plan: p } = await plan(APP, { CC_RAKEGOALS: 'assets:precompile,db:migrate' });
    expect(p.runtimes).toEqual([expect.objectContaining({ name: 'ruby', version: '3.1.2', distribution: 'test /usr/bin/ruby3.1' })]);
    expect(p.build.steps.map((s) => [s.name, s.run.kind === 'exec' ? s.run.argv.join(' ') : ''])).toEqual([
      ['bundle-install', 'bundle install --local'],
      ['rake-1', 'bundle exec rake assets:precompile'],
      ['rake-2', 'bundle exec rake db:migrate'],
      ['nginx-check', 'nginx -t -q -e stderr -p ${APP_HOME}/ -c ${APP_HOME}/.runplan/nginx/nginx.conf'],
    ]);
    // Absolute paths for bundler and nginx, filled by the executor: the plan names no directory of the application,
    // and finds Ruby on the executor's stack (${RUBY_BIN}), not where the planning machine had it.
    expect(p.build.steps[0]?.env).toMatchObject({ GEM_HOME: '${APP_HOME}/.runplan/gems', BUNDLE_GEMFILE: '${APP_HOME}/Gemfile' });
    expect(p.build.steps[0]?.pathPrepend).toEqual(['.runplan/gems/bin', '${RUBY_BIN}']);
    const [puma, web] = p.processes;
    expect(puma?.command).toEqual({ kind: 'exec', argv: ['bundle', 'exec', 'puma', '-b', 'unix://${RUN_DIR}/puma.sock', '-e', 'production', '-w', '2', '-t', '5:5'] });
    expect(puma?.env).toEqual({ GEM_HOME: '${APP_HOME}/.runplan/gems', BUNDLE_GEMFILE: '${APP_HOME}/Gemfile' });
    expect(web).toMatchObject({
      name: 'web',
      role: 'web',
      port: 8080,
      command: { kind: 'exec', argv: ['nginx', '-e', 'stderr', '-p', '${APP_HOME}/', '-c', '${APP_HOME}/.runplan/nginx/nginx.conf'] },
      // Issue 36, item 6: no request Rails may not route (GET / of an API-only application), only a connection.
      startAfter: [{ kind: 'unix-socket', socket: '${RUN_DIR}/puma.sock' }],
    });
    const conf = nginxConf(p);
    expect(conf).toContain('pid "${APP_HOME}/.runplan/nginx/nginx.pid";');
    expect(conf).toContain('upstream app_server { server "unix:${RUN_DIR}/puma.sock" fail_timeout=0; }');
    expect(p.files.find((f) => f.path === '.runplan/nginx/nginx.conf')?.content).toContainEqual({ placeholder: 'APP_HOME' });
    expect(JSON.stringify(p)).not.toContain('/srv/app');
    expect(p.healthCheck).toMatchObject({ kind: 'port', reason: expect.stringContaining('only once Puma answers') });
    const vars = Object.fromEntries(p.environment.variables.map((v) => [v.name, v.value]));
    expect(vars).toMatchObject({
      RUBY_ENV: 'production',
      RAILS_ENV: 'production',
      RACK_ENV: 'production',
      BUNDLE_FROZEN: 'true',
      BUNDLE_WITHOUT: 'development:test',
      WEB_CONCURRENCY: '2',
      RAILS_MAX_THREADS: '5',
    });
  });

  it('keys the gem layer on the lock file, Gemfile, Ruby, groups, gem source and installed gems', async () => {
    const key = async (files: Record<string, string>, env: Record<string, string> = {}, options: RubyBuildpackOptions = {}, machine: Partial<RubyInventoryData> = {}) =>
      (await plan(files, env, options, machine)).plan.layers[0]?.cacheKey;
    const k = await key(APP);
    expect(await key(APP)).toBe(k);
    expect(await key({ ...APP, 'Gemfile.lock': `${LOCK}\n` })).not.toBe(k);
    expect(await key({ ...APP, Gemfile: `${APP.Gemfile}# changed\n` })).not.toBe(k);
    expect(await key(APP, { BUNDLE_WITHOUT: 'test' })).not.toBe(k);
    expect(await key(APP, {}, { gemSource: 'remote' })).not.toBe(k);
    expect(await key(APP, {}, {}, { rubies: [{ ...rubies[0]!, gemsFingerprint: 'f2' }] })).not.toBe(k);
    expect(await key(APP, {}, {}, { nginx: '/usr/local/sbin/nginx', runsAsRoot: true })).toBe(k);
    expect(await key({ ...APP, 'config.ru': 'other' })).toBe(k);
  });

  it("uses bundler's default (a gem server) unless the host says local, with nothing else changed", async () => {
    const remote = (await plan(APP, {}, { gemSource: 'remote' })).plan.build.steps[0];
    const local = (await plan(APP)).plan.build.steps[0];
    expect(remote?.run).toEqual({ kind: 'exec', argv: ['bundle', 'install'] });
    expect(local?.run).toEqual({ kind: 'exec', argv: ['bundle', 'install', '--local'] });
    expect({ ...remote, run: null, description: null }).toEqual({ ...local, run: null, description: null });
  });

  it('sets RAILS_ENV and RACK_ENV from RUBY_ENV but keeps explicit ones', async () => {
    const { plan: p } = await plan(APP, { RUBY_ENV: 'staging', RACK_ENV: 'custom' });
    const vars = Object.fromEntries(p.environment.variables.map((v) => [v.name, v.value]));
    expect(vars).toMatchObject({ RAILS_ENV: 'staging', RACK_ENV: 'custom' });
    expect(p.decisions.find((d) => d.id === 'ruby.env')?.overridden).toEqual([expect.objectContaining({ source: 'env RACK_ENV', value: 'custom' })]);
    expect(p.processes[0]?.command).toMatchObject({ argv: expect.arrayContaining(['-e', 'staging']) });
  });

  it('plans Sidekiq processes supervised like web, and refuses them without the gem', async () => {
    const files = { ...APP, 'config/sidekiq.yml': ':concurrency: 2\n', 'Gemfile.lock': LOCK.replace('    rack (2.2.22)\n', '    rack (2.2.22)\n    sidekiq (6.4.1)\n') };
    const { plan: p } = await plan(files, { CC_ENABLE_SIDEKIQ: 'true' });
    expect(p.processes.map((x) => [x.name, x.role, x.restart.policy])).toEqual([
      ['puma', 'worker', 'always'],
      ['web', 'web', 'always'],
      ['sidekiq', 'worker', 'always'],
    ]);
    expect(p.processes[2]?.command).toEqual({ kind: 'exec', argv: ['bundle', 'exec', 'sidekiq', '-e', 'production'] });
    await expect(plan(APP, { CC_ENABLE_SIDEKIQ: 'true' })).rejects.toMatchObject({ code: RubyErrors.RUBY_SIDEKIQ_GEM_MISSING.code });
  });

  it('writes the basic-auth user file from references only, at run time with mode 0600', async () => {
    const { plan: p } = await plan(APP, { CC_HTTP_BASIC_AUTH: 'alice:s3cr3t-Alice', CC_HTTP_BASIC_AUTH_1: 'bob:s3cr3t-Bob' });
    const users = p.files.find((f) => f.path === '.runplan/nginx/users');
    expect(users).toMatchObject({ phase: 'run', mode: 0o600, secret: true });
    expect(fileText(users)).toBe('<CC_HTTP_BASIC_AUTH>:{PLAIN}<CC_HTTP_BASIC_AUTH>\n<CC_HTTP_BASIC_AUTH_1>:{PLAIN}<CC_HTTP_BASIC_AUTH_1>\n');
    expect(JSON.stringify(p)).not.toContain('s3cr3t');
    expect(nginxConf(p)).toContain('auth_basic_user_file "${APP_HOME}/.runplan/nginx/users";');
  });

  it('warns when config/secret.yml reads SECRET_KEY_BASE and it is unset', async () => {
    const files = { ...APP, 'config/secret.yml': 'production:\n  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>\n' };
    expect((await plan(files)).plan.warnings.map((w) => w.code)).toContain('RUNPLAN_W_RUBY_SECRET_KEY_BASE_MISSING');
    expect((await plan(files, { SECRET_KEY_BASE: 'x'.repeat(64) })).plan.warnings).toEqual([]);
  });

  it("never puts the storage variables' values in the plan", async () => {
    const values = { STORAGE_ADDON_KEY_ID: 'KEYID-7731', STORAGE_ADDON_KEY_SECRET: 'secret-7731', STORAGE_ADDON_BUCKET_NAME: 'bucket-7731', STORAGE_ADDON_ENDPOINT: 'endpoint-7731.example' };
    const { plan: p } = await plan(APP, values);
    const json = JSON.stringify(p);
    for (const v of Object.values(values)) expect(json).not.toContain(v);
    expect(p.decisions.find((d) => d.id === 'ruby.storage')).toMatchObject({ resolved: 'passed through unchanged' });
  });
});

describe('ruby buildpack options (host level)', () => {
  it("reads its defaults from runplan's own environment, never from the application", () => {
    expect(resolveRubyOptions({}, {})).toMatchObject({ defaultSeries: '3.3', gemSource: 'remote' });
    expect(resolveRubyOptions({}, { RUNPLAN_RUBY_DEFAULT_SERIES: '3.1', RUNPLAN_RUBY_GEM_SOURCE: 'local' })).toMatchObject({ defaultSeries: '3.1', gemSource: 'local' });
    expect(resolveRubyOptions({ gemSource: 'remote' }, { RUNPLAN_RUBY_GEM_SOURCE: 'local' }).gemSource).toBe('remote');
    expect(() => resolveRubyOptions({ defaultSeries: '3' })).toThrow(/default series/);
    expect(() => resolveRubyOptions({}, { RUNPLAN_RUBY_GEM_SOURCE: 'mirror' })).toThrow(/gem source/);
  });

  it('finds nginx in the sbin directories when PATH lacks them', () => {
    expect(findNginx('/nonexistent')).toBe('/usr/sbin/nginx');
  });

  it('ignores RUNPLAN_RUBY_* set as application variables', async () => {
    const { plan: p } = await plan(APP, { RUNPLAN_RUBY_GEM_SOURCE: 'remote' });
    expect(p.build.steps[0]?.run).toEqual({ kind: 'exec', argv: ['bundle', 'install', '--local'] });
  });

  it('passes through defaultRegistry, whose provider gathers the rubies it is given', async () => {
    const r = defaultRegistry({ node: { inventory: TEST_INVENTORY }, ruby: { rubies, defaultSeries: '3.1', nginx: 'nginx' } });
    const { plan: p, inventory } = await createPlan({ registry: r, files: new MemorySource({ ...APP, Gemfile: "gem 'puma'\n" }), appDir: '/srv/app' });
    expect(p.runtimes[0]?.decision).toMatchObject({ source: 'default', requested: '3.1', resolved: '3.1.2' });
    expect(inventory.buildpacks).toEqual({ ruby: { rubies, nginx: 'nginx', runsAsRoot: process.getuid?.() === 0 } });
  });

  it('gathers the interpreters, nginx and whether runplan runs as root into its part of the inventory', async () => {
    const listed = async () => rubies;
    const part = await rubyInventoryProvider(resolveRubyOptions({ rubies: listed, nginx: '/opt/nginx/sbin/nginx' }, {})).gather({ cacheDir: '/c' });
    expect(RubyInventorySchema.parse(part)).toEqual({ rubies, nginx: '/opt/nginx/sbin/nginx', runsAsRoot: process.getuid?.() === 0 });
    const found = await rubyInventoryProvider(resolveRubyOptions({ rubies: [{ version: '3.3.6', bindir: '/b', origin: 'o' }] }, {})).gather({ cacheDir: '/c' });
    expect(found).toMatchObject({ rubies: [{ version: '3.3.6', bindir: '/b', origin: 'o' }], nginx: findNginx() });
    expect(found.rubies[0]).not.toHaveProperty('gemsFingerprint');
  });

  it("finds Debian's Ruby on this machine, at the version it reports itself", async () => {
    // Debian's security updates move the patch version: ask the interpreter, never write it down.
    const version = execFileSync('ruby', ['-e', 'print RUBY_VERSION'], { encoding: 'utf8' });
    const found = await systemRubies();
    expect(found).toContainEqual(expect.objectContaining({ version, bindir: '/usr/bin', gemsFingerprint: expect.stringMatching(/^[0-9a-f]{16}$/) }));
  });
});

describe('nginx and Ruby by name, found on the stack of whoever carries the plan out', () => {
  const stack = (p: RunPlan, options: RubyBuildpackOptions, machine: Partial<RubyInventoryData>) =>
    createRubyBuildpack(options).stack?.(p, RubyInventorySchema.parse({ rubies, nginx: 'nginx', runsAsRoot: true, ...machine }));

  it('names nginx and puts ${NGINX_BIN} on its PATH, never with `user root` (the executor starts it unprivileged)', async () => {
    const { plan: p } = await plan(APP, {}, { nginx: undefined, nginxUser: undefined }, { nginx: '/usr/sbin/nginx', runsAsRoot: true });
    const web = p.processes.find((x) => x.name === 'web');
    expect(web?.command).toMatchObject({ argv: ['nginx', '-e', 'stderr', '-p', '${APP_HOME}/', '-c', '${APP_HOME}/.runplan/nginx/nginx.conf'] });
    expect(web?.pathPrepend).toEqual(['${NGINX_BIN}']);
    const check = p.build.steps.find((s) => s.name === 'nginx-check');
    expect(check?.run).toMatchObject({ argv: ['nginx', '-t', '-q', '-e', 'stderr', '-p', '${APP_HOME}/', '-c', '${APP_HOME}/.runplan/nginx/nginx.conf'] });
    expect(check?.pathPrepend).toEqual(['${NGINX_BIN}']);
    // Where planning found them is told, in the explanation only.
    expect(p.decisions.find((d) => d.id === 'ruby.programs')?.reason).toContain('Ruby 3.1.2 in /usr/bin (test /usr/bin/ruby3.1), nginx at /usr/sbin/nginx');
    expect(nginxConf(p)).not.toMatch(/^user /m);
    const notRoot = await plan(APP, {}, { nginx: undefined, nginxUser: undefined }, { runsAsRoot: false });
    expect(nginxConf(notRoot.plan)).not.toMatch(/^user /m);
  });

  it("fills ${RUBY_BIN} with the bindir of this host's Ruby of the plan's version, and ${NGINX_BIN} with nginx's directory (the host's option first)", async () => {
    const { plan: p } = await plan(APP, {}, { nginx: undefined, nginxUser: 'www-data' });
    expect(nginxConf(p)).toMatch(/^user www-data;$/m);
    // Another host: its Ruby 3.1.2 lives elsewhere, beside another Ruby.
    const elsewhere = [
      { version: '3.3.0', bindir: '/opt/rubies/3.3.0/bin', origin: 'host /opt/rubies/3.3.0/bin/ruby' },
      { version: '3.1.2', bindir: '/opt/rubies/3.1.2/bin', origin: 'host /opt/rubies/3.1.2/bin/ruby' },
    ];
    expect(await stack(p, {}, { rubies: elsewhere, nginx: '/usr/local/nginx/sbin/nginx' })).toEqual({ RUBY_BIN: '/opt/rubies/3.1.2/bin', NGINX_BIN: '/usr/local/nginx/sbin' });
    expect(await stack(p, { nginx: '/opt/nginx/sbin/nginx' }, { nginx: '/usr/sbin/nginx' })).toEqual({ RUBY_BIN: '/usr/bin', NGINX_BIN: '/opt/nginx/sbin' });
  });

  it("refuses to carry a plan out on a host without the plan's Ruby or without nginx, saying what it has", async () => {
    const { plan: p } = await plan(APP);
    expect(() => stack(p, {}, { rubies: [{ version: '3.3.0', bindir: '/opt/rubies/3.3.0/bin', origin: 'o' }], nginx: '/usr/sbin/nginx' })).toThrow(
      expect.objectContaining({
        code: RubyErrors.RUBY_VERSION_UNAVAILABLE.code,
        message: expect.stringContaining('the plan was made for Ruby 3.1.2, which this host does not have (installed: 3.3.0)'),
      }),
    );
    expect(() => stack(p, {}, { nginx: 'nginx' })).toThrow(expect.objectContaining({ code: RubyErrors.RUBY_NGINX_MISSING.code, kind: 'deployment' }));
    expect(() => stack(p, { nginx: '/opt/bin/openresty' }, {})).toThrow(expect.objectContaining({ code: RubyErrors.RUBY_NGINX_MISSING.code, message: expect.stringContaining('is not named nginx') }));
  });
});

describe('ruby plan with a previous plan (plan --previous)', () => {
  const DEFAULTED = { ...APP, Gemfile: "gem 'puma'\ngem 'rack'\n", 'Gemfile.lock': LOCK.replace(/\nRUBY VERSION\n.*\n$/, '') };
  const ruby = (version: string) => ({ version, bindir: `/opt/rubies/${version}/bin`, origin: `test ${version}` });

  it('keeps the Ruby a default chose while it is installed, saying what the default gives now', async () => {
    const { plan: previous } = await plan(DEFAULTED, {}, {}, { rubies: [ruby('3.3.0')] });
    expect(previous.runtimes[0]?.decision).toMatchObject({ source: 'default', resolved: '3.3.0' });
    const { plan: p } = await plan(DEFAULTED, {}, {}, { rubies: [ruby('3.3.0'), ruby('3.3.6')] }, previous);
    expect(p.runtimes[0]).toMatchObject({
      version: '3.3.0',
      distribution: 'test 3.3.0',
      decision: { source: 'previous plan', resolved: '3.3.0', reason: expect.stringContaining('the default now gives 3.3.6') },
    });
    expect(p.build.steps[0]?.pathPrepend).toEqual(['.runplan/gems/bin', '${RUBY_BIN}']);
    expect(p.decisions.find((d) => d.id === 'ruby.programs')?.reason).toContain('Ruby 3.3.0 in /opt/rubies/3.3.0/bin');
  });

  it('takes the default once the Ruby is gone or the default series changed, and follows a version the application asks for', async () => {
    const { plan: previous } = await plan(DEFAULTED, {}, {}, { rubies: [ruby('3.3.0')] });
    expect((await plan(DEFAULTED, {}, {}, { rubies: [ruby('3.3.6')] }, previous)).plan.runtimes[0]?.decision).toMatchObject({ source: 'default', resolved: '3.3.6' });
    expect((await plan(DEFAULTED, {}, { defaultSeries: '3.4' }, { rubies: [ruby('3.3.0'), ruby('3.4.1')] }, previous)).plan.runtimes[0]?.decision).toMatchObject({
      source: 'default',
      resolved: '3.4.1',
    });
    expect((await plan(DEFAULTED, { CC_RUBY_VERSION: '3.3' }, {}, { rubies: [ruby('3.3.0'), ruby('3.3.6')] }, previous)).plan.runtimes[0]?.decision).toMatchObject({
      source: 'env CC_RUBY_VERSION',
      resolved: '3.3.6',
    });
  });
});

describe('what nginx serves stays inside the application (issue 11)', () => {
  const onDisk = async (extra: (dir: string) => Promise<void>) => {
    const base = await tempDir();
    const app = join(base, 'app');
    await mkdir(join(app, 'public'), { recursive: true });
    await mkdir(join(base, 'host'));
    await writeFile(join(base, 'host', 'shadow'), 'HOST-SECRET\n');
    for (const [name, text] of Object.entries(APP)) await writeFile(join(app, name), text);
    await writeFile(join(app, 'public', 'hello.txt'), 'hello');
    await extra(app);
    return { base, app };
  };
  const planDir = (app: string, application: Record<string, string>) =>
    createPlan({ registry: registry(), inventory: testInventory({ ruby: { rubies } }), files: new DirectorySource(app), appDir: app, env: { application }, host: { port: 8080 } });
  const STATIC = { STATIC_FILES_PATH: '/pub/', STATIC_URL_PREFIX: '/files/' };

  it('refuses STATIC_FILES_PATH naming a link that leads out of the application', async () => {
    const { app } = await onDisk(async (dir) => symlink(join(dir, '..', 'host'), join(dir, 'pub')));
    const error = await planDir(app, STATIC).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toMatchObject({ code: CoreErrors.APP_PATH_OUTSIDE.code, file: 'pub' });
    expect(error?.message).not.toContain('HOST-SECRET');
  });

  it('refuses an http.json error page that is a link leading out', async () => {
    const { app } = await onDisk(async (dir) => {
      await symlink(join(dir, '..', 'host', 'shadow'), join(dir, 'public', '404.html'));
      await mkdir(join(dir, 'platform'));
      await writeFile(join(dir, 'platform', 'http.json'), '{"error_pages": {"404": "/public/404.html"}}');
    });
    await expect(planDir(app, {})).rejects.toMatchObject({ code: CoreErrors.APP_PATH_OUTSIDE.code, file: 'public/404.html' });
  });

  it('checks the build copy again: a link inside the static directory leading out fails the served-files step', async () => {
    const { base, app } = await onDisk(async () => undefined);
    const { plan: p } = await planDir(app, { STATIC_FILES_PATH: '/public/', STATIC_URL_PREFIX: '/files/' });
    expect(p.build.steps.map((s) => s.name)).toEqual(['bundle-install', 'served-files-check', 'nginx-check']);
    const check = p.build.steps.find((s) => s.name === 'served-files-check');
    if (check?.run.kind !== 'exec') throw new Error('no served-files-check step');
    const [file, ...args] = check.run.argv;
    const run = () => spawnSync(file as string, args, { cwd: app, encoding: 'utf8' });
    expect(run().status).toBe(0);
    await symlink(join(base, 'host', 'shadow'), join(app, 'public', 'leak'));
    const failed = run();
    expect(failed.status).toBe(2);
    expect(failed.stdout).not.toContain('HOST-SECRET');
    expect(explainFailure(check, { notFound: false, exitCode: 2, output: failed.stdout.split('\n') })).toMatchObject({ code: CoreErrors.APP_PATH_OUTSIDE.code, file: 'public' });
  });

  it('has nginx refuse links in what it serves (disable_symlinks), in a configuration nginx -t accepts', async () => {
    const { plan: p } = await plan({ ...APP, 'public/a.txt': 'a', 'platform/http.json': '{"error_pages": {"404": "/public/a.txt"}}' }, { STATIC_FILES_PATH: '/public/', STATIC_URL_PREFIX: '/files/' });
    const conf = nginxConf(p);
    expect(conf.match(/disable_symlinks on "from=\$\{APP_HOME\}";/g)).toHaveLength(2);
  });
});

describe('host settings of the Ruby buildpack (issue 11)', () => {
  it('refuses a bad RUNPLAN_RUBY_DEFAULT_SERIES or gem source with a coded error naming the variable', () => {
    expect(() => resolveRubyOptions({}, { RUNPLAN_RUBY_DEFAULT_SERIES: 'abc' })).toThrowError(
      expect.objectContaining({ code: CoreErrors.HOST_INVALID_SETTING.code, variable: 'RUNPLAN_RUBY_DEFAULT_SERIES' }),
    );
    expect(() => resolveRubyOptions({}, { RUNPLAN_RUBY_GEM_SOURCE: 'mirror' })).toThrowError(
      expect.objectContaining({ code: CoreErrors.HOST_INVALID_SETTING.code, variable: 'RUNPLAN_RUBY_GEM_SOURCE' }),
    );
  });

  it('only when the Ruby buildpack is used: a Node.js application still plans', async () => {
    const bad = createRubyBuildpack({ defaultSeries: 'abc' });
    const reg = new BuildpackRegistry([createNodeBuildpack({ inventory: TEST_INVENTORY }), bad]);
    const node = await createPlan({ registry: reg, inventory: testInventory({ ruby: { rubies } }), files: new MemorySource({ 'package.json': '{"main":"a.js"}' }), appDir: '/srv/app', env: {} });
    expect(node.plan.app.type).toBe('node');
    await expect(createPlan({ registry: reg, inventory: testInventory({ ruby: { rubies } }), files: new MemorySource(APP), appDir: '/srv/app', env: {} })).rejects.toMatchObject({
      code: CoreErrors.HOST_INVALID_SETTING.code,
    });
  });
});
