import { describe, expect, it } from 'vitest';
import { RubyErrors, RubyWarnings } from '../../buildpacks/ruby/errors.js';
import { parseRubyDirective } from '../../buildpacks/ruby/gemfile.js';
import { resolveRubyVersion, type RubyVersionInput } from '../../buildpacks/ruby/resolve-ruby-version.js';
import type { InstalledRuby } from '../../buildpacks/ruby/rubies.js';
import { dotRubyVersionFix, unavailableFix } from '../../buildpacks/ruby/version-advice.js';

const rubies = (...versions: string[]): InstalledRuby[] => versions.map((version) => ({ version, bindir: `/opt/rubies/${version}/bin`, origin: `test ${version}` }));
/** What Debian 12 has: Ruby 3.1 only, while the service's default series is 3.3. */
const DEBIAN: RubyVersionInput = { gemfileName: 'Gemfile', directive: undefined, envVersion: undefined, available: rubies('3.1.2'), defaultSeries: '3.3' };

describe('a Ruby this machine does not have (Ruby rule 2, Versioning)', () => {
  it('refuses the default series it lacks, naming the versions it has and the CC_RUBY_VERSION that picks one', () => {
    expect(() => resolveRubyVersion(DEBIAN)).toThrowError(
      expect.objectContaining({
        code: RubyErrors.RUBY_VERSION_UNAVAILABLE.code,
        variable: 'CC_RUBY_VERSION',
        fix: 'Set CC_RUBY_VERSION=3.1 (this machine has Ruby 3.1.2; the default series, 3.3, is not installed), or write ruby "~> 3.1.0" in Gemfile; the host can make 3.1 its default with RUNPLAN_RUBY_DEFAULT_SERIES=3.1.',
      }),
    );
  });

  it('points at .ruby-version when it names a Ruby this machine has', () => {
    expect(() => resolveRubyVersion({ ...DEBIAN, dotRubyVersion: 'ruby-3.1.2\n' })).toThrowError(
      expect.objectContaining({ fix: expect.stringContaining('or add ruby file: ".ruby-version" to Gemfile (.ruby-version says 3.1.2, which this machine has)') }),
    );
  });

  it('fits the fix to where the request came from', () => {
    expect(() => resolveRubyVersion({ ...DEBIAN, envVersion: '3.3' })).toThrowError(
      expect.objectContaining({ variable: 'CC_RUBY_VERSION', fix: 'Set CC_RUBY_VERSION=3.1 (this machine has Ruby 3.1.2).' }),
    );
    expect(() => resolveRubyVersion({ ...DEBIAN, directive: parseRubyDirective("ruby '~> 3.3.0'\n") })).toThrowError(
      expect.objectContaining({
        file: 'Gemfile',
        fix: 'Change the ruby directive of Gemfile to a version this machine has (3.1.2), e.g. ruby "~> 3.1.0", and lock the bundle again (bundle lock); or install the requested Ruby on the host.',
      }),
    );
    expect(unavailableFix({ kind: 'default', gemfileName: 'Gemfile', available: [], defaultSeries: '3.3' })).toMatch(/^Install Ruby on the host/);
  });
});

describe('.ruby-version the Gemfile does not read', () => {
  it('warns with the Gemfile line or the variable that deploys it, or the version it should say', () => {
    const { warnings } = resolveRubyVersion({ ...DEBIAN, envVersion: '3.1', dotRubyVersion: '3.0.4\n' });
    expect(warnings).toEqual([
      {
        code: RubyWarnings.RUBY_VERSION_FILE_IGNORED.code,
        message: '.ruby-version says 3.0.4 but Ruby 3.1.2 is selected (.ruby-version is not read by the service unless the Gemfile says ruby file: ".ruby-version").',
        file: '.ruby-version',
        variable: 'CC_RUBY_VERSION',
        fix: 'Make .ruby-version say 3.1.2, or delete it; to deploy what it says instead, add ruby file: ".ruby-version" to Gemfile (or set CC_RUBY_VERSION=3.0.4), which needs Ruby 3.0.4 installed on the host (it has 3.1.2).',
      },
    ]);
  });

  it('says the Gemfile decides when it has a directive', () => {
    expect(dotRubyVersionFix({ gemfileName: 'Gemfile', gemfileRequest: '~> 3.1.0', dotRubyVersion: '3.3.1', selected: '3.1.2', available: ['3.3.1', '3.1.2'] })).toBe(
      'Gemfile decides (ruby ~> 3.1.0): make .ruby-version say 3.1.2, or replace the directive with ruby file: ".ruby-version" to deploy what it says.',
    );
  });
});
