import { decide, type Decision, keepPrevious, lineExcerpt, type OverriddenSource, type PlanWarning, quoteExcerpt } from '../../src/kit/index.js';
import { RubyErrors, RubyWarnings } from './errors.js';
import { compareVersions, formatRequirement, isVersion, parseRequirement, satisfiesAll, sortDescending, type Requirement } from './gem-version.js';
import { parseVersionFile, type RubyDirective } from './gemfile.js';
import type { InstalledRuby } from './rubies.js';
import { dotRubyVersionFix, unavailableFix } from './version-advice.js';

export interface RubyVersionInput {
  /** "Gemfile" or "gems.rb". */
  readonly gemfileName: string;
  readonly directive: RubyDirective | undefined;
  /** Content of the file a `ruby file:` directive names (undefined when absent). */
  readonly directiveFileContent?: string | undefined;
  /** CC_RUBY_VERSION (empty counts as unset). */
  readonly envVersion: string | undefined;
  /** Evidence only: the lock file's RUBY VERSION and .ruby-version. */
  readonly lockFileName?: string;
  readonly lockVersion?: string | undefined;
  readonly dotRubyVersion?: string | undefined;
  readonly available: readonly InstalledRuby[];
  /** Series used when nothing asks, e.g. "3.3". */
  readonly defaultSeries: string;
  /** The version a previous plan took from the default: kept while available and in the default series (plan --previous). */
  readonly previousDefault?: string | undefined;
}

export interface RubyVersionResolution {
  readonly ruby: InstalledRuby;
  readonly decision: Decision;
  readonly warnings: readonly PlanWarning[];
}

interface Request {
  readonly source: string;
  readonly requested: string;
  readonly requirements: readonly Requirement[];
  readonly rule: string;
  readonly file?: string;
  readonly variable?: string;
}

/**
 * The Ruby to run (specification, Ruby rule 2 and Versioning): the `ruby`
 * directive of gems.rb / Gemfile (exact, `~>`, `>=`, `file:`) wins; otherwise
 * CC_RUBY_VERSION (`3` the greatest 3.X.Y, `3.3` the greatest 3.3.Y, `3.3.1`
 * exactly); otherwise the greatest version of the default series. The greatest
 * available version satisfying the request is chosen. The lock file's RUBY
 * VERSION and .ruby-version are reported as evidence; disagreements are warned about.
 */
export function resolveRubyVersion(input: RubyVersionInput): RubyVersionResolution {
  const overridden: OverriddenSource[] = [];
  const fromGemfile = gemfileRequest(input);
  const envVersion = input.envVersion?.trim() ? input.envVersion.trim() : undefined;
  const fromEnv = envVersion === undefined ? undefined : envRequest(envVersion);
  const fromDefault = seriesRequest(input.defaultSeries, 'default', `no Gemfile directive and no CC_RUBY_VERSION: the default is the greatest ${input.defaultSeries}.Y`);
  const chosen = fromGemfile ?? fromEnv ?? fromDefault;

  const available = sortDescending(input.available.map((r) => r.version));
  const greatest = available.find((v) => satisfiesAll(v, chosen.requirements));
  const kept =
    chosen === fromDefault &&
    input.previousDefault !== undefined &&
    input.previousDefault !== greatest &&
    available.includes(input.previousDefault) &&
    satisfiesAll(input.previousDefault, chosen.requirements)
      ? input.previousDefault
      : undefined;
  const version = kept ?? greatest;
  const dotUsed = fromGemfile?.file === '.ruby-version';
  const dot = input.dotRubyVersion === undefined ? undefined : parseVersionFile(input.dotRubyVersion);
  if (version === undefined) {
    const kind = chosen === fromGemfile ? 'gemfile' : chosen === fromEnv ? 'env' : 'default';
    throw RubyErrors.RUBY_VERSION_UNAVAILABLE.create({
      message: `${chosen.source} asks for Ruby ${quoteExcerpt(chosen.requested)} (${lineExcerpt(chosen.requirements.map(formatRequirement).join(', '))}), which matches none of the available versions: ${available.length > 0 ? available.join(', ') : 'none installed'}.`,
      ...(chosen.file ? { file: chosen.file } : {}),
      // The default is not the user's request, but CC_RUBY_VERSION is how they choose another.
      ...(chosen.variable || kind === 'default' ? { variable: chosen.variable ?? 'CC_RUBY_VERSION' } : {}),
      fix: unavailableFix({ kind, gemfileName: input.gemfileName, available, defaultSeries: input.defaultSeries, dotRubyVersion: dotUsed ? undefined : dot }),
      details: { requested: lineExcerpt(chosen.requested), available },
    });
  }
  const ruby = input.available.find((r) => r.version === version) as InstalledRuby;

  const warnings: PlanWarning[] = [];
  const conflict = (source: string, value: string, message: string, file?: string, variable?: string) => {
    warnings.push(RubyWarnings.RUBY_VERSION_CONFLICT.create({ message, ...(file ? { file } : {}), ...(variable ? { variable } : {}) }));
    overridden.push({ source, value, reason: `disagrees: ${message}` });
  };

  if (fromGemfile && fromEnv) {
    const envPick = available.find((v) => satisfiesAll(v, fromEnv.requirements));
    if (envPick === version) overridden.push({ source: fromEnv.source, value: envVersion as string, reason: `the Gemfile directive takes precedence (it would also select ${version})` });
    else
      conflict(
        fromEnv.source,
        envVersion as string,
        `CC_RUBY_VERSION=${envVersion} is ignored because ${input.gemfileName} asks for ${fromGemfile.requested}, which takes precedence`,
        undefined,
        'CC_RUBY_VERSION',
      );
  }
  if (chosen !== fromDefault) overridden.push({ source: 'default', value: input.defaultSeries, reason: `used only when neither the ${input.gemfileName} ruby directive nor CC_RUBY_VERSION is set` });

  const lockName = input.lockFileName ?? 'Gemfile.lock';
  if (input.lockVersion !== undefined) {
    if (compareVersions(input.lockVersion, version) === 0) overridden.push({ source: `${lockName} RUBY VERSION`, value: input.lockVersion, reason: 'evidence only; agrees' });
    else conflict(`${lockName} RUBY VERSION`, input.lockVersion, `${lockName} was locked with Ruby ${input.lockVersion} but Ruby ${version} is selected`, lockName);
  }
  if (dot !== undefined && !dotUsed) {
    if (isVersion(dot) && compareVersions(dot, version) === 0)
      overridden.push({ source: '.ruby-version', value: dot, reason: 'evidence only (the service reads the Gemfile and CC_RUBY_VERSION); agrees' });
    else {
      const message = `.ruby-version says ${lineExcerpt(dot)} but Ruby ${version} is selected (.ruby-version is not read by the service unless the Gemfile says ruby file: ".ruby-version").`;
      const fix = dotRubyVersionFix({ gemfileName: input.gemfileName, gemfileRequest: fromGemfile?.requested, dotRubyVersion: dot, selected: version, available });
      warnings.push(RubyWarnings.RUBY_VERSION_FILE_IGNORED.create({ message, file: '.ruby-version', ...(fromGemfile ? {} : { variable: 'CC_RUBY_VERSION' }), fix }));
      overridden.push({ source: '.ruby-version', value: dot, reason: `ignored: ${message}` });
    }
  }

  const decision: Decision = decide({
    id: 'ruby.version',
    subject: 'Ruby version',
    requests: [{ source: chosen.source, value: chosen.requested }],
    resolved: greatest as string,
    reason: `${chosen.rule}; available: ${available.join(', ')}`,
    lost: overridden,
  });
  return { ruby, warnings, decision: kept === undefined ? decision : keepPrevious(decision, kept) };
}

function gemfileRequest(input: RubyVersionInput): Request | undefined {
  const { directive, gemfileName } = input;
  if (directive === undefined) return undefined;
  const invalid = (why: string) => RubyErrors.RUBY_VERSION_INVALID.create({ message: `${gemfileName}: the ruby directive \`${lineExcerpt(directive.text)}\` ${why}.`, file: gemfileName });
  if (directive.kind === 'unreadable') throw invalid('is not a literal version, requirement or file: and cannot be read without running the Gemfile');
  if (directive.kind === 'file') {
    if (input.directiveFileContent === undefined) throw invalid(`names ${directive.path}, which does not exist`);
    const value = parseVersionFile(input.directiveFileContent);
    if (value === undefined || !isVersion(value)) throw invalid(`names ${directive.path}, which holds ${quoteExcerpt(value ?? '')} rather than a version such as 3.3.1`);
    return {
      source: `${gemfileName} ruby file: ${directive.path}`,
      requested: value,
      requirements: [{ operator: '=', version: value }],
      rule: `the ${gemfileName} directive reads the version from ${directive.path}; exactly ${value}`,
      file: directive.path,
    };
  }
  const requirements = directive.requirements.map((r) => parseRequirement(r));
  if (requirements.length === 0 || requirements.some((r) => r === undefined)) throw invalid('holds something other than version requirements such as "3.3.1", "~> 3.3.0" or ">= 3.2"');
  const reqs = requirements as Requirement[];
  const exact = reqs.length === 1 && reqs[0]?.operator === '=';
  return {
    source: `${gemfileName} ruby directive`,
    requested: directive.requirements.join(', '),
    requirements: reqs,
    rule: exact
      ? `a version given in ${gemfileName} is used (Ruby rule 2): exactly ${reqs[0]?.version}`
      : `a version given in ${gemfileName} is used (Ruby rule 2): the greatest available version satisfying ${reqs.map(formatRequirement).join(', ')}`,
    file: gemfileName,
  };
}

function envRequest(value: string): Request {
  if (/^\d+$/.test(value)) {
    return {
      source: 'env CC_RUBY_VERSION',
      requested: value,
      requirements: [{ operator: '~>', version: `${value}.0` }],
      rule: `CC_RUBY_VERSION=${value} selects the greatest ${value}.X.Y`,
      variable: 'CC_RUBY_VERSION',
    };
  }
  if (/^\d+\.\d+$/.test(value)) return seriesRequest(value, 'env CC_RUBY_VERSION', `CC_RUBY_VERSION=${value} selects the greatest ${value}.Y`, 'CC_RUBY_VERSION');
  if (/^\d+\.\d+\.\d+$/.test(value)) {
    return {
      source: 'env CC_RUBY_VERSION',
      requested: value,
      requirements: [{ operator: '=', version: value }],
      rule: `CC_RUBY_VERSION=${value} selects exactly that version`,
      variable: 'CC_RUBY_VERSION',
    };
  }
  throw RubyErrors.RUBY_VERSION_INVALID.create({
    message: `CC_RUBY_VERSION=${quoteExcerpt(value)} is none of the forms 3, 3.3 or 3.3.1.`,
    variable: 'CC_RUBY_VERSION',
  });
}

function seriesRequest(series: string, source: string, rule: string, variable?: string): Request {
  return { source, requested: series, requirements: [{ operator: '~>', version: `${series}.0` }], rule, ...(variable ? { variable } : {}) };
}
