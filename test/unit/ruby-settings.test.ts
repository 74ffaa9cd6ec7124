import { describe, expect, it } from 'vitest';
import { RubyErrors, RubyWarnings } from '../../buildpacks/ruby/errors.js';
import { readPumaRb, resolvePumaSizing, sizeFromInstance } from '../../buildpacks/ruby/resolve-puma-sizing.js';
import { resolveRakeGoals } from '../../buildpacks/ruby/resolve-rake-goals.js';
import { resolveClientMaxBodySize } from '../../buildpacks/ruby/resolve-body-size.js';
import { resolveReadTimeout } from '../../buildpacks/ruby/resolve-read-timeout.js';
import { checkSidekiqYaml, resolveSidekiq } from '../../buildpacks/ruby/resolve-sidekiq.js';

const env = (vars: Record<string, string>) => ({ get: (name: string) => vars[name] });
const RAILS_PUMA_RB = `max_threads_count = ENV.fetch("RAILS_MAX_THREADS") { 5 }
min_threads_count = ENV.fetch("RAILS_MIN_THREADS") { max_threads_count }
threads min_threads_count, max_threads_count
port ENV.fetch("PORT") { 3000 }
# workers ENV.fetch("WEB_CONCURRENCY") { 2 }
`;

describe('Puma sizing (Ruby rule 5)', () => {
  it.each([
    [{ cpus: 1, memoryMb: 256 }, 1, 3],
    [{ cpus: 2, memoryMb: 512 }, 1, 3],
    [{ cpus: 2, memoryMb: 1024 }, 2, 5],
    [{ cpus: 1, memoryMb: 1536 }, 1, 5],
    [{ cpus: 2, memoryMb: 2048 }, 2, 5],
    [{ cpus: 4, memoryMb: 4096 }, 4, 5],
    [{ cpus: 8, memoryMb: 8192 }, 8, 5],
    [{ cpus: 16, memoryMb: 65536 }, 8, 5],
  ])('instance %j: %i workers, %i threads', (instance, workers, threads) => {
    expect(sizeFromInstance(instance)).toMatchObject({ workers, threads });
  });

  it.each<[string, string | undefined, ReturnType<typeof readPumaRb>]>([
    ['no file', undefined, { workers: { kind: 'absent' }, threads: { kind: 'absent' } }],
    ['literals', 'workers 3\nthreads 2, 8\n', { workers: { kind: 'literal', text: 'workers 3', max: 3 }, threads: { kind: 'literal', text: 'threads 2, 8', min: 2, max: 8 } }],
    ['parentheses, one thread count', 'workers(2)\nthreads(4)\n', { workers: { kind: 'literal', text: 'workers(2)', max: 2 }, threads: { kind: 'literal', text: 'threads(4)', max: 4 } }],
    ['Rails generated file', RAILS_PUMA_RB, { workers: { kind: 'absent' }, threads: { kind: 'env', text: 'threads min_threads_count, max_threads_count', variable: 'RAILS_MAX_THREADS' } }],
    [
      'ENV.fetch directly',
      'workers ENV.fetch("WEB_CONCURRENCY") { 2 }\n',
      { workers: { kind: 'env', text: 'workers ENV.fetch("WEB_CONCURRENCY") { 2 }', variable: 'WEB_CONCURRENCY' }, threads: { kind: 'absent' } },
    ],
    ['something else', 'workers Etc.nprocessors\n', { workers: { kind: 'other', text: 'workers Etc.nprocessors' }, threads: { kind: 'absent' } }],
  ])('reads config/puma.rb: %s', (_name, text, expected) => {
    expect(readPumaRb(text)).toEqual(expected);
  });

  const instance = { cpus: 2, memoryMb: 2048 };
  it.each<[string, Record<string, string>, string | undefined, { workers: number; min: number; max: number; args: string[]; sources: [string, string] }]>([
    [
      'CC_ variables win over config/puma.rb',
      { CC_PUMA_WORKERS: '3', CC_PUMA_THREADS: '2:6' },
      'workers 5\nthreads 1, 1\n',
      { workers: 3, min: 2, max: 6, args: ['-w', '3', '-t', '2:6'], sources: ['env CC_PUMA_WORKERS', 'env CC_PUMA_THREADS'] },
    ],
    ['CC_PUMA_THREADS as n', { CC_PUMA_THREADS: '4' }, undefined, { workers: 2, min: 4, max: 4, args: ['-w', '2', '-t', '4:4'], sources: ['instance size', 'env CC_PUMA_THREADS'] }],
    ['CC_PUMA_WORKERS=0 is single mode', { CC_PUMA_WORKERS: '0' }, undefined, { workers: 0, min: 5, max: 5, args: ['-w', '0', '-t', '5:5'], sources: ['env CC_PUMA_WORKERS', 'instance size'] }],
    ['config/puma.rb literals', {}, 'workers 1\nthreads 2, 3\n', { workers: 1, min: 2, max: 3, args: [], sources: ['config/puma.rb', 'config/puma.rb'] }],
    ['instance size when neither sets them', {}, undefined, { workers: 2, min: 5, max: 5, args: ['-w', '2', '-t', '5:5'], sources: ['instance size', 'instance size'] }],
    ['Rails file with RAILS_MAX_THREADS unset: instance size', {}, RAILS_PUMA_RB, { workers: 2, min: 5, max: 5, args: ['-w', '2', '-t', '5:5'], sources: ['instance size', 'instance size'] }],
    [
      'Rails file with RAILS_MAX_THREADS set: config/puma.rb reads it',
      { RAILS_MAX_THREADS: '7', RAILS_MIN_THREADS: '2' },
      RAILS_PUMA_RB,
      { workers: 2, min: 2, max: 7, args: ['-w', '2'], sources: ['instance size', 'config/puma.rb via RAILS_MAX_THREADS'] },
    ],
    [
      'WEB_CONCURRENCY read by config/puma.rb',
      { WEB_CONCURRENCY: '3' },
      'workers ENV.fetch("WEB_CONCURRENCY") { 2 }\n',
      { workers: 3, min: 5, max: 5, args: ['-t', '5:5'], sources: ['config/puma.rb via WEB_CONCURRENCY', 'instance size'] },
    ],
  ])('%s', (_name, vars, pumaRb, expected) => {
    const r = resolvePumaSizing({ env: env(vars), pumaRb, instance });
    expect([r.workers, r.minThreads, r.maxThreads]).toEqual([expected.workers, expected.min, expected.max]);
    expect(r.args).toEqual(expected.args);
    expect(r.decisions.map((d) => d.source)).toEqual(expected.sources);
    expect(r.envDefaults).toEqual([
      expect.objectContaining({ name: 'WEB_CONCURRENCY', value: String(expected.workers) }),
      expect.objectContaining({ name: 'RAILS_MAX_THREADS', value: String(expected.max) }),
    ]);
  });

  // Issue 36, item 5: `-w 1` on a one-CPU instance made Puma warn that a cluster of one worker is often a misconfiguration.
  it("runs one worker from the instance size in Puma's single mode, and says so; CC_PUMA_WORKERS=1 still asks for a cluster of one", () => {
    const small = { cpus: 1, memoryMb: 2048 };
    const r = resolvePumaSizing({ env: env({}), pumaRb: RAILS_PUMA_RB, instance: small });
    expect(r.workers).toBe(0);
    expect(r.args).toEqual(['-w', '0', '-t', '5:5']);
    expect(r.envDefaults).toContainEqual(expect.objectContaining({ name: 'WEB_CONCURRENCY', value: '0' }));
    expect(r.decisions[0]).toMatchObject({ resolved: '0 (single mode)', reason: expect.stringContaining("one worker runs in Puma's single mode (puma -w 0") });
    expect(r.decisions[0]?.reason).toContain('CC_PUMA_WORKERS=1');
    const asked = resolvePumaSizing({ env: env({ CC_PUMA_WORKERS: '1' }), pumaRb: RAILS_PUMA_RB, instance: small });
    expect([asked.workers, asked.args.slice(0, 2)]).toEqual([1, ['-w', '1']]);
  });

  it('reports the config/puma.rb values CC_ variables override, and WEB_CONCURRENCY that does not decide', () => {
    const r = resolvePumaSizing({ env: env({ CC_PUMA_WORKERS: '3', WEB_CONCURRENCY: '9' }), pumaRb: 'workers 5\n', instance });
    expect(r.decisions[0]?.overridden).toEqual([
      { source: 'config/puma.rb', value: 'workers 5', reason: 'CC_PUMA_WORKERS takes precedence' },
      { source: 'env WEB_CONCURRENCY', value: '9', reason: 'env CC_PUMA_WORKERS decides; WEB_CONCURRENCY is passed to the application as set' },
    ]);
  });

  it.each([
    ['CC_PUMA_WORKERS', 'two'],
    ['CC_PUMA_WORKERS', '-1'],
    ['CC_PUMA_WORKERS', '1.5'],
    ['CC_PUMA_WORKERS', '999'],
    ['CC_PUMA_THREADS', '0'],
    ['CC_PUMA_THREADS', '5:2'],
    ['CC_PUMA_THREADS', '1-5'],
    ['CC_PUMA_THREADS', '1:5:9'],
    ['CC_PUMA_THREADS', '0:4'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => resolvePumaSizing({ env: env({ [name]: value }), pumaRb: undefined, instance })).toThrowError(
      expect.objectContaining({ code: RubyErrors.RUBY_PUMA_SETTING_INVALID.code, variable: name }),
    );
  });
});

describe('rake goals (Ruby rule 3)', () => {
  it.each<[string | undefined, string[]]>([
    [undefined, []],
    ['', []],
    ['assets:precompile', ['assets:precompile']],
    [' assets:precompile , db:migrate ', ['assets:precompile', 'db:migrate']],
    ['a,,b,', ['a', 'b']],
    ['build[production],cache:clear', ['build[production]', 'cache:clear']],
    ['db:migrate:status,VERSION=3', ['db:migrate:status', 'VERSION=3']],
  ])('%j runs %j in order', (value, goals) => {
    const r = resolveRakeGoals(value);
    expect(r.goals).toEqual(goals);
    expect(r.decision.resolved).toBe(goals.length ? goals.join(', ') : '(none)');
  });

  it.each(['-e system("id")', '--trace', 'db:migrate VERSION=1', 'a;b', 'x$(id)', 'a`b`'])('refuses %j', (value) => {
    expect(() => resolveRakeGoals(value)).toThrowError(expect.objectContaining({ code: RubyErrors.RUBY_RAKEGOALS_INVALID.code, variable: 'CC_RAKEGOALS' }));
  });
});

describe('NGINX_READ_TIMEOUT (Limits)', () => {
  it.each([
    [undefined, 300, 'default'],
    ['', 300, 'default'],
    ['60', 60, 'env NGINX_READ_TIMEOUT'],
    ['1', 1, 'env NGINX_READ_TIMEOUT'],
    ['45s', 45, 'env NGINX_READ_TIMEOUT'],
  ])('%j → %i s', (value, seconds, source) => {
    expect(resolveReadTimeout(value)).toMatchObject({ seconds, decision: { source, resolved: `${seconds}s` } });
  });
  it.each(['0', '-5', '1.5', '5m', '300; return 200', '999999'])('refuses %j', (value) => {
    expect(() => resolveReadTimeout(value)).toThrowError(expect.objectContaining({ code: RubyErrors.RUBY_NGINX_SETTING_INVALID.code, variable: 'NGINX_READ_TIMEOUT' }));
  });
});

// Issue 36, item 4: nginx's own 1 MiB limit answered 413 to an ordinary photo upload.
describe('the largest request body (NGINX_CLIENT_MAX_BODY_SIZE, platform/http.json client_max_body_size)', () => {
  it.each<[string | undefined, string | undefined, string, string]>([
    [undefined, undefined, '100m', 'default'],
    ['', undefined, '100m', 'default'],
    [undefined, '20m', '20m', 'platform/http.json client_max_body_size'],
    ['1G', '20m', '1g', 'env NGINX_CLIENT_MAX_BODY_SIZE'],
    ['512k', undefined, '512k', 'env NGINX_CLIENT_MAX_BODY_SIZE'],
    ['0', undefined, '0', 'env NGINX_CLIENT_MAX_BODY_SIZE'],
  ])('%j with http.json %j → %s', (variable, fromFile, size, source) => {
    const r = resolveClientMaxBodySize(variable, fromFile);
    expect(r).toMatchObject({ size, decision: { source, reason: expect.stringContaining('413') } });
    if (variable && fromFile) expect(r.decision.overridden).toEqual([expect.objectContaining({ source: 'platform/http.json client_max_body_size', value: fromFile })]);
  });
  it.each(['1.5m', '10 m', '-1', '5t', '100m; return 200', '99999999'])('refuses %j', (value) => {
    expect(() => resolveClientMaxBodySize(value, undefined)).toThrowError(expect.objectContaining({ code: RubyErrors.RUBY_NGINX_SETTING_INVALID.code, variable: 'NGINX_CLIENT_MAX_BODY_SIZE' }));
  });
});

describe('Sidekiq (Ruby rule 4)', () => {
  const files = [
    { path: 'config/sidekiq.yml', text: ':concurrency: 5\n' },
    { path: 'config/a.yml', text: ':queues:\n  - default\n  - [mailers, 2]\n' },
    { path: 'config/b.yml', text: 'production:\n  :logfile: ./log/sidekiq.log\n' },
  ];
  it.each<[string, string | undefined, string | undefined, string[][], string]>([
    ['nothing set', undefined, undefined, [], 'default'],
    ['CC_ENABLE_SIDEKIQ=false', 'false', undefined, [], 'env CC_ENABLE_SIDEKIQ'],
    ['CC_ENABLE_SIDEKIQ=true', 'true', undefined, [[]], 'env CC_ENABLE_SIDEKIQ'],
    [
      'files, one process each, even when disabled',
      'false',
      'config/a.yml, ./config/b.yml',
      [
        ['-C', 'config/a.yml'],
        ['-C', 'config/b.yml'],
      ],
      'env CC_SIDEKIQ_FILES',
    ],
    ['files win over CC_ENABLE_SIDEKIQ=true', 'true', '/config/a.yml', [['-C', 'config/a.yml']], 'env CC_SIDEKIQ_FILES'],
  ])('%s', async (_name, enable, list, args, source) => {
    const r = await resolveSidekiq(enable, list, files, 'production');
    expect(r.processes.map((p) => p.args)).toEqual(args);
    expect(r.decision.source).toBe(source);
  });

  it('says CC_SIDEKIQ_FILES is set but lists no file, rather than "not set"', async () => {
    for (const enable of [undefined, 'false']) {
      const r = await resolveSidekiq(enable, ',,, ,', files, 'production');
      expect(r.processes).toEqual([]);
      expect(r.decision.reason).toContain('CC_SIDEKIQ_FILES is set but lists no file');
      expect(r.warnings.map((w) => w.code)).toEqual([RubyWarnings.RUBY_SIDEKIQ_FILES_EMPTY.code]);
    }
    expect((await resolveSidekiq('true', ' , ', files, 'production')).warnings.map((w) => w.code)).toEqual([RubyWarnings.RUBY_SIDEKIQ_FILES_EMPTY.code]);
    expect((await resolveSidekiq(undefined, '', files, 'production')).warnings).toEqual([]);
  });

  it('names processes after their place in the list', async () => {
    expect((await resolveSidekiq(undefined, 'config/a.yml,config/b.yml', files, 'production')).processes.map((p) => p.name)).toEqual(['sidekiq-1', 'sidekiq-2']);
  });

  it('refuses a listed file that does not exist, or leaves the repository', async () => {
    for (const list of ['config/missing.yml', 'config/a.yml,nope.yml', '../etc/passwd']) {
      await expect(resolveSidekiq(undefined, list, files, 'production')).rejects.toMatchObject({ code: RubyErrors.RUBY_SIDEKIQ_FILE_MISSING.code, variable: 'CC_SIDEKIQ_FILES' });
    }
  });

  it('warns that Sidekiq 6 ignores :logfile: and :pidfile:, also per environment', async () => {
    expect((await checkSidekiqYaml('a.yml', ':pidfile: tmp/s.pid\n:concurrency: 2\n', 'production')).map((w) => w.code)).toEqual([RubyWarnings.RUBY_SIDEKIQ_LOGFILE_IGNORED.code]);
    expect((await checkSidekiqYaml('b.yml', 'production:\n  :logfile: x.log\n', 'production'))[0]?.message).toContain(':logfile:');
    expect(await checkSidekiqYaml('b.yml', 'staging:\n  :logfile: x.log\n', 'production')).toEqual([]);
  });

  it('refuses YAML that does not parse or is not a mapping, with the position', async () => {
    await expect(checkSidekiqYaml('s.yml', ':queues:\n  - a\n - b\n', 'production')).rejects.toMatchObject({
      code: RubyErrors.RUBY_SIDEKIQ_FILE_INVALID.code,
      file: 's.yml',
      message: expect.stringMatching(/line \d+, column \d+/),
    });
    await expect(checkSidekiqYaml('s.yml', '- a\n- b\n', 'production')).rejects.toThrow(/not a list/);
  });

  it('refuses a YAML alias bomb with a coded error instead of filling memory (issue 11)', async () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 10; i++)
      levels.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    await expect(checkSidekiqYaml('config/sidekiq.yml', `${levels.join('\n')}\n`, 'production')).rejects.toMatchObject({
      code: RubyErrors.RUBY_SIDEKIQ_FILE_INVALID.code,
      file: 'config/sidekiq.yml',
    });
  });
});
