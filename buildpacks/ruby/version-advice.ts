import { assignmentExcerpt, lineExcerpt } from '../../src/kit/index.js';
import { compareVersions, isVersion } from './gem-version.js';

/**
 * The exact settings that would make the Ruby version work on this machine: the
 * fixes of RUBY_VERSION_UNAVAILABLE and RUBY_VERSION_FILE_IGNORED. Pure: the
 * request and the versions installed in, the sentence out.
 */

/** Where the Ruby request that decided came from. */
type RubyRequestKind = 'gemfile' | 'env' | 'default';

/** "3.1" for "3.1.2". */
const seriesOf = (version: string) => version.split('.').slice(0, 2).join('.');

export interface UnavailableAdvice {
  readonly kind: RubyRequestKind;
  readonly gemfileName: string;
  /** The installed versions, greatest first. */
  readonly available: readonly string[];
  readonly defaultSeries: string;
  /** .ruby-version's version, when the file exists and the Gemfile does not read it. */
  readonly dotRubyVersion?: string | undefined;
}

/** The fix of RUBY_VERSION_UNAVAILABLE: the versions this machine has and the setting that picks one. */
export function unavailableFix(advice: UnavailableAdvice): string {
  const greatest = advice.available[0];
  if (greatest === undefined) return 'Install Ruby on the host (Debian: apt-get install ruby, then ruby-bundler); runplan finds every ruby on PATH and under /opt/rubies.';
  const series = seriesOf(greatest);
  const has = `this machine has Ruby ${advice.available.join(', ')}`;
  if (advice.kind === 'gemfile') {
    return `Change the ruby directive of ${advice.gemfileName} to a version this machine has (${advice.available.join(', ')}), e.g. ruby "~> ${series}.0", and lock the bundle again (bundle lock); or install the requested Ruby on the host.`;
  }
  const dot = advice.dotRubyVersion;
  const dotFits = dot !== undefined && isVersion(dot) && advice.available.some((v) => compareVersions(v, dot) === 0);
  const viaDot = dotFits ? `, or add ruby file: ".ruby-version" to ${advice.gemfileName} (.ruby-version says ${lineExcerpt(dot)}, which this machine has)` : '';
  if (advice.kind === 'env') return `Set ${assignmentExcerpt('CC_RUBY_VERSION', series)} (${has})${viaDot}.`;
  return `Set ${assignmentExcerpt('CC_RUBY_VERSION', series)} (${has}; the default series, ${advice.defaultSeries}, is not installed), or write ruby "~> ${series}.0" in ${advice.gemfileName}${viaDot}; the host can make ${series} its default with RUNPLAN_RUBY_DEFAULT_SERIES=${series}.`;
}

export interface DotRubyVersionAdvice {
  readonly gemfileName: string;
  /** The Gemfile directive's request, when it has one (it then decides). */
  readonly gemfileRequest?: string | undefined;
  readonly dotRubyVersion: string;
  readonly selected: string;
  readonly available: readonly string[];
}

/** The fix of RUBY_VERSION_FILE_IGNORED: the Gemfile line or variable that deploys what .ruby-version says, or the value it should say. */
export function dotRubyVersionFix(advice: DotRubyVersionAdvice): string {
  const dot = lineExcerpt(advice.dotRubyVersion);
  if (!isVersion(advice.dotRubyVersion)) return `.ruby-version holds no Ruby version: make it say ${advice.selected}, or delete it.`;
  const installed = isVersion(advice.dotRubyVersion) && advice.available.some((v) => compareVersions(v, advice.dotRubyVersion) === 0);
  const needs = installed ? '' : `, which needs Ruby ${dot} installed on the host (it has ${advice.available.join(', ') || 'none'})`;
  if (advice.gemfileRequest !== undefined) {
    return `${advice.gemfileName} decides (ruby ${lineExcerpt(advice.gemfileRequest)}): make .ruby-version say ${advice.selected}, or replace the directive with ruby file: ".ruby-version" to deploy what it says${needs}.`;
  }
  const variable = ` (or set ${assignmentExcerpt('CC_RUBY_VERSION', advice.dotRubyVersion)})`;
  return `Make .ruby-version say ${advice.selected}, or delete it; to deploy what it says instead, add ruby file: ".ruby-version" to ${advice.gemfileName}${variable}${needs}.`;
}
