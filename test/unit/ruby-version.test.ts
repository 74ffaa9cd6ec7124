import { describe, expect, it } from 'vitest';
import { RubyErrors } from '../../buildpacks/ruby/errors.js';
import { compareVersions, parseRequirement, satisfies } from '../../buildpacks/ruby/gem-version.js';
import { parseLockFile, parseRubyDirective, parseVersionFile } from '../../buildpacks/ruby/gemfile.js';
import { resolveRubyVersion, type RubyVersionInput } from '../../buildpacks/ruby/resolve-ruby-version.js';
import type { InstalledRuby } from '../../buildpacks/ruby/rubies.js';

const rubies = (...versions: string[]): InstalledRuby[] => versions.map((version) => ({ version, bindir: `/opt/rubies/${version}/bin`, origin: `test ${version}` }));
const AVAILABLE = rubies('2.7.8', '3.1.2', '3.2.4', '3.3.0', '3.3.1', '3.3.6');
const base: RubyVersionInput = { gemfileName: 'Gemfile', directive: undefined, envVersion: undefined, available: AVAILABLE, defaultSeries: '3.3' };
const gemfile = (text: string) => parseRubyDirective(text);

describe('gem requirements', () => {
  it.each([
    ['3.1', '3.1.0', 0],
    ['3.1.2', '3.1.10', -1],
    ['3.10.0', '3.9.9', 1],
    ['3', '3.0.0', 0],
    ['2.7.8', '3.0', -1],
  ])('compares %s with %s', (a, b, expected) => expect(compareVersions(a, b)).toBe(expected));

  it.each([
    ['3.1.2', '3.1.2', true],
    ['3.1.2', '= 3.1.2', true],
    ['3.1.3', '3.1.2', false],
    ['3.1.9', '~> 3.1.2', true],
    ['3.2.0', '~> 3.1.2', false],
    ['3.1.1', '~> 3.1.2', false],
    ['3.9.0', '~> 3.1', true],
    ['4.0.0', '~> 3.1', false],
    ['3.0.0', '~> 3.1', false],
    ['3.3.6', '~> 3.3.0', true],
    ['3.4.0', '~> 3.3.0', false],
    ['3.4.0', '>= 3.0', true],
    ['2.7.8', '>= 3.0', false],
    ['3.0', '> 3.0', false],
    ['3.0.1', '> 3.0', true],
    ['3.2.9', '< 3.3', true],
    ['3.3', '<= 3.3', true],
    ['3.3.1', '!= 3.3.1', false],
  ])('%s satisfies %s: %s', (version, requirement, expected) => {
    expect(satisfies(version, parseRequirement(requirement)!)).toBe(expected);
  });

  it('refuses what is not a requirement', () => {
    for (const text of ['latest', '3.x', '~>', '>= 3.0; system("x")', '']) expect(parseRequirement(text)).toBeUndefined();
  });
});

describe('Gemfile ruby directive', () => {
  it.each([
    ["ruby '3.3.1'", { kind: 'requirements', requirements: ['3.3.1'] }],
    ['ruby "~> 3.3.0"', { kind: 'requirements', requirements: ['~> 3.3.0'] }],
    ["ruby '>= 3.0', '< 3.3'", { kind: 'requirements', requirements: ['>= 3.0', '< 3.3'] }],
    ["ruby('3.1.2')", { kind: 'requirements', requirements: ['3.1.2'] }],
    ["ruby '3.1.2', engine: 'ruby', engine_version: '3.1.2'", { kind: 'requirements', requirements: ['3.1.2'] }],
    ["ruby file: '.ruby-version'", { kind: 'file', path: '.ruby-version' }],
    ['ruby file: ".tool-versions"', { kind: 'file', path: '.tool-versions' }],
    ["ruby File.read('.ruby-version').strip", { kind: 'file', path: '.ruby-version' }],
    ["ruby File.read(File.join(__dir__, '.ruby-version')).strip", { kind: 'file', path: '.ruby-version' }],
    ["ruby ENV['RUBY']", { kind: 'unreadable' }],
  ])('reads %s', (line, expected) => {
    expect(gemfile(`source 'x'\n# ruby '1.0'\n${line}\ngem 'puma'\n`)).toMatchObject(expected);
  });

  it('ignores commented directives and gems named ruby-something', () => {
    expect(gemfile("# ruby '3.3.1'\ngem 'ruby-progressbar'\n")).toBeUndefined();
  });

  it.each([
    ['3.3.1\n', '3.3.1'],
    ['ruby-3.1.2', '3.1.2'],
    ['# comment\nruby 3.2.4\nnodejs 20\n', '3.2.4'],
    ['', undefined],
  ])('reads the version file %j', (text, expected) => {
    expect(parseVersionFile(text)).toBe(expected);
  });

  it('reads RUBY VERSION, specs and dependencies of a lock file', () => {
    const lock = parseLockFile(
      'GEM\n  specs:\n    nio4r (2.5.8)\n    puma (5.6.5)\n      nio4r (~> 2.0)\n\nPLATFORMS\n  x86_64-linux\n\nDEPENDENCIES\n  puma (~> 5.0)\n  rack!\n\nRUBY VERSION\n   ruby 3.1.2p20\n',
    );
    expect(Object.fromEntries(lock.specs)).toEqual({ nio4r: '2.5.8', puma: '5.6.5' });
    expect([...lock.dependencies]).toEqual(['puma', 'rack']);
    expect(lock.rubyVersion).toBe('3.1.2');
  });
});

describe('Ruby version resolution (Ruby rule 2)', () => {
  it.each<[string, Partial<RubyVersionInput>, string, string]>([
    ['Gemfile exact', { directive: gemfile("ruby '3.2.4'") }, '3.2.4', 'Gemfile ruby directive'],
    ['Gemfile ~> (patch level)', { directive: gemfile("ruby '~> 3.3.0'") }, '3.3.6', 'Gemfile ruby directive'],
    ['Gemfile ~> (minor level)', { directive: gemfile("ruby '~> 3.1'") }, '3.3.6', 'Gemfile ruby directive'],
    ['Gemfile >=', { directive: gemfile("ruby '>= 3.0'") }, '3.3.6', 'Gemfile ruby directive'],
    ['Gemfile range', { directive: gemfile("ruby '>= 3.0', '< 3.3'") }, '3.2.4', 'Gemfile ruby directive'],
    ['gems.rb', { gemfileName: 'gems.rb', directive: gemfile("ruby '3.1.2'") }, '3.1.2', 'gems.rb ruby directive'],
    ['Gemfile file:', { directive: gemfile("ruby file: '.ruby-version'"), directiveFileContent: 'ruby-3.3.0\n' }, '3.3.0', 'Gemfile ruby file: .ruby-version'],
    ['CC_RUBY_VERSION major', { envVersion: '3' }, '3.3.6', 'env CC_RUBY_VERSION'],
    ['CC_RUBY_VERSION major (2)', { envVersion: '2' }, '2.7.8', 'env CC_RUBY_VERSION'],
    ['CC_RUBY_VERSION minor', { envVersion: '3.2' }, '3.2.4', 'env CC_RUBY_VERSION'],
    ['CC_RUBY_VERSION exact', { envVersion: '3.3.1' }, '3.3.1', 'env CC_RUBY_VERSION'],
    ['CC_RUBY_VERSION trimmed', { envVersion: ' 3.1 ' }, '3.1.2', 'env CC_RUBY_VERSION'],
    ['default: greatest 3.3.Y', {}, '3.3.6', 'default'],
    ['empty CC_RUBY_VERSION is unset', { envVersion: '' }, '3.3.6', 'default'],
    ['host default series', { defaultSeries: '3.1' }, '3.1.2', 'default'],
    ['Gemfile wins over CC_RUBY_VERSION', { directive: gemfile("ruby '3.1.2'"), envVersion: '3.3' }, '3.1.2', 'Gemfile ruby directive'],
  ])('%s', (_name, input, version, source) => {
    const r = resolveRubyVersion({ ...base, ...input });
    expect(r.ruby.version).toBe(version);
    expect(r.decision.resolved).toBe(version);
    expect(r.decision.source).toBe(source);
    expect(r.decision.reason).toContain('available: 3.3.6, 3.3.1, 3.3.0, 3.2.4, 3.1.2, 2.7.8');
  });

  it('explains a CC_RUBY_VERSION the Gemfile overrides, with a warning when they disagree', () => {
    const r = resolveRubyVersion({ ...base, directive: gemfile("ruby '3.1.2'"), envVersion: '3.3' });
    expect(r.decision.overridden).toContainEqual(expect.objectContaining({ source: 'env CC_RUBY_VERSION', value: '3.3', reason: expect.stringContaining('disagrees') }));
    expect(r.warnings.map((w) => w.code)).toEqual(['RUNPLAN_W_RUBY_VERSION_CONFLICT']);
    const agreeing = resolveRubyVersion({ ...base, directive: gemfile("ruby '3.1.2'"), envVersion: '3.1' });
    expect(agreeing.warnings).toEqual([]);
    expect(agreeing.decision.overridden).toContainEqual(expect.objectContaining({ source: 'env CC_RUBY_VERSION', reason: expect.stringContaining('would also select 3.1.2') }));
  });

  it('reports the lock file and .ruby-version as evidence, and warns when they disagree', () => {
    const agree = resolveRubyVersion({ ...base, envVersion: '3.1', lockVersion: '3.1.2', dotRubyVersion: 'ruby-3.1.2\n' });
    expect(agree.warnings).toEqual([]);
    expect(agree.decision.overridden.map((o) => o.source)).toEqual(['default', 'Gemfile.lock RUBY VERSION', '.ruby-version']);
    const disagree = resolveRubyVersion({ ...base, envVersion: '3.1', lockFileName: 'gems.locked', lockVersion: '3.3.1', dotRubyVersion: '2.7.8' });
    expect(disagree.warnings.map((w) => w.file)).toEqual(['gems.locked', '.ruby-version']);
    expect(disagree.warnings[0]?.message).toBe('gems.locked was locked with Ruby 3.3.1 but Ruby 3.1.2 is selected');
  });

  it.each<[string, Partial<RubyVersionInput>, { variable?: string; file?: string }, string]>([
    [
      'CC_RUBY_VERSION with no match',
      { envVersion: '3.4' },
      { variable: 'CC_RUBY_VERSION' },
      'env CC_RUBY_VERSION asks for Ruby "3.4" (~> 3.4.0), which matches none of the available versions: 3.3.6, 3.3.1, 3.3.0, 3.2.4, 3.1.2, 2.7.8.',
    ],
    ['exact version not installed', { envVersion: '3.3.2' }, { variable: 'CC_RUBY_VERSION' }, 'none of the available versions'],
    ['Gemfile with no match', { directive: gemfile("ruby '~> 3.4.0'") }, { file: 'Gemfile' }, 'Gemfile ruby directive asks for Ruby "~> 3.4.0"'],
    ['default series absent', { available: rubies('3.1.2') }, {}, 'default asks for Ruby "3.3" (~> 3.3.0), which matches none of the available versions: 3.1.2.'],
    ['nothing installed', { available: [] }, {}, 'none installed'],
  ])('fails with the available versions listed: %s', (_name, input, at, message) => {
    expect(() => resolveRubyVersion({ ...base, ...input })).toThrowError(
      expect.objectContaining({ code: RubyErrors.RUBY_VERSION_UNAVAILABLE.code, kind: 'deployment', ...at, message: expect.stringContaining(message) }),
    );
  });

  it.each<[string, Partial<RubyVersionInput>]>([
    ['CC_RUBY_VERSION=latest', { envVersion: 'latest' }],
    ['CC_RUBY_VERSION=3.3.x', { envVersion: '3.3.x' }],
    ['CC_RUBY_VERSION=ruby-3.3.1', { envVersion: 'ruby-3.3.1' }],
    ['a dynamic directive', { directive: gemfile("ruby ENV['RUBY']") }],
    ['a file: that does not exist', { directive: gemfile("ruby file: '.ruby-version'") }],
    ['a file: holding no version', { directive: gemfile("ruby file: '.ruby-version'"), directiveFileContent: 'system\n' }],
  ])('refuses %s with a coded error', (_name, input) => {
    expect(() => resolveRubyVersion({ ...base, ...input })).toThrowError(expect.objectContaining({ code: RubyErrors.RUBY_VERSION_INVALID.code }));
  });
});

describe("a previous plan's default (plan --previous)", () => {
  it('keeps the Ruby a default chose while it is installed and in the default series, saying what the default gives now', () => {
    const r = resolveRubyVersion({ ...base, previousDefault: '3.3.1' });
    expect(r.ruby).toEqual(AVAILABLE.find((x) => x.version === '3.3.1'));
    expect(r.warnings).toEqual([]);
    expect(r.decision).toMatchObject({
      id: 'ruby.version',
      requested: '3.3',
      source: 'previous plan',
      resolved: '3.3.1',
      reason: expect.stringMatching(/^kept from the previous plan .*the default now gives 3\.3\.6 \(no Gemfile directive and no CC_RUBY_VERSION: the default is the greatest 3\.3\.Y; available: /),
    });
    expect(r.decision.overridden).toEqual([{ source: 'default', value: '3.3.6', reason: expect.stringContaining('plan without --previous') }]);
  });

  it('is the default itself when the default has not moved', () => {
    expect(resolveRubyVersion({ ...base, previousDefault: '3.3.6' }).decision).toMatchObject({ source: 'default', resolved: '3.3.6' });
  });

  it('checks the kept Ruby against the lock file and .ruby-version like any other', () => {
    const r = resolveRubyVersion({ ...base, previousDefault: '3.3.1', lockVersion: '3.3.6' });
    expect(r.warnings.map((w) => w.message)).toEqual(['Gemfile.lock was locked with Ruby 3.3.6 but Ruby 3.3.1 is selected']);
  });

  it('is not kept when the application asks for a version', () => {
    expect(resolveRubyVersion({ ...base, envVersion: '3.3', previousDefault: '3.3.1' }).decision).toMatchObject({ source: 'env CC_RUBY_VERSION', resolved: '3.3.6' });
    expect(resolveRubyVersion({ ...base, directive: gemfile("ruby '~> 3.3.0'"), previousDefault: '3.3.1' }).decision).toMatchObject({ source: 'Gemfile ruby directive', resolved: '3.3.6' });
  });

  it('is not kept once it is no longer installed, or outside the default series', () => {
    expect(resolveRubyVersion({ ...base, previousDefault: '3.3.2' }).decision).toMatchObject({ source: 'default', resolved: '3.3.6' });
    expect(resolveRubyVersion({ ...base, previousDefault: '3.2.4' }).decision).toMatchObject({ source: 'default', resolved: '3.3.6' });
    expect(resolveRubyVersion({ ...base, defaultSeries: '3.2', previousDefault: '3.3.1' }).decision).toMatchObject({ source: 'default', resolved: '3.2.4' });
  });
});
