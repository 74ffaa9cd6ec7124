import { decide, type Decision, keepPrevious, type OverriddenSource, quoteExcerpt } from '../../src/kit/index.js';
import { Play1Errors } from './errors.js';
import { DEFAULT_PLAY1_SERIES, PLAY1_SERIES, seriesFor, type Play1Series } from './versions.js';

export const VERSION_VARIABLE = 'PLAY1_VERSION';
export const VERSION_FILE = 'platform/play1_version';

/** Where each possible request came from, as read; undefined when the source is absent. */
export interface VersionInputs {
  /** PLAY1_VERSION of the run environment, with the set it came from (e.g. "application variables"). */
  readonly variable?: { readonly value: string; readonly origin: string };
  /** The text of platform/play1_version. */
  readonly file?: string;
  /** The host's default series (an accepted value), when the host configured one. */
  readonly hostDefault?: { readonly value: string; readonly origin: string };
  /** The release a previous plan took from runplan's default, when it can still be installed (plan --previous). */
  readonly previousDefault?: string | undefined;
}

/** The Play 1.x series of a plan, and its decision. */
export interface VersionResolution {
  readonly series: Play1Series;
  readonly decision: Decision;
}

/**
 * Which Play release to install (specification, Versioning; NOTES.md "Play 1.x
 * version"): PLAY1_VERSION wins over platform/play1_version; an empty variable
 * or file counts as unset; with neither, the host's default, else the newest
 * series. Values are accepted exactly as listed in versions.ts; anything else is
 * RUNPLAN_E_PLAY1_VERSION_INVALID listing them.
 */
export function resolvePlay1Version(inputs: VersionInputs): VersionResolution {
  const overridden: OverriddenSource[] = [];
  const fromVariable = inputs.variable?.value.trim();
  const fromFile = inputs.file?.trim();

  if (inputs.variable !== undefined && fromVariable === '') {
    overridden.push({ source: `env ${VERSION_VARIABLE}`, value: inputs.variable.value, reason: 'empty, so treated as unset' });
  }
  if (inputs.file !== undefined && fromFile === '') {
    overridden.push({ source: VERSION_FILE, value: null, reason: 'the file is empty, so treated as absent' });
  }

  if (fromVariable) {
    if (fromFile) overridden.push({ source: VERSION_FILE, value: fromFile, reason: `${VERSION_VARIABLE} takes precedence over ${VERSION_FILE}` });
    const series = accept(fromVariable, { variable: VERSION_VARIABLE }, `${VERSION_VARIABLE}=${quoteExcerpt(fromVariable)} is`);
    return { series, decision: decision(fromVariable, `env ${VERSION_VARIABLE} (${inputs.variable?.origin})`, series, overridden) };
  }
  if (fromFile) {
    const series = accept(fromFile, { file: VERSION_FILE }, `${VERSION_FILE} holds ${quoteExcerpt(fromFile)}, which is`);
    return { series, decision: decision(fromFile, VERSION_FILE, series, overridden) };
  }
  if (inputs.hostDefault) {
    const value = inputs.hostDefault.value.trim();
    const series = accept(value, { variable: inputs.hostDefault.origin }, `the host's default Play version ${quoteExcerpt(value)} (${inputs.hostDefault.origin}) is`);
    return {
      series,
      decision: decision(
        null,
        `host default (${inputs.hostDefault.origin})`,
        series,
        overridden,
        `neither ${VERSION_VARIABLE} nor ${VERSION_FILE} is set, so the host's default series ${series.series} applies`,
      ),
    };
  }
  const series = seriesFor(DEFAULT_PLAY1_SERIES) as Play1Series;
  const now = decision(
    null,
    'default',
    series,
    overridden,
    `neither ${VERSION_VARIABLE} nor ${VERSION_FILE} is set, so runplan's default series ${series.series} applies (the newest series; its launcher runs on Python 3 and Java ${series.java.min}–${series.java.max})`,
  );
  const kept = PLAY1_SERIES.find((s) => s.release === inputs.previousDefault && s.release !== series.release);
  return kept ? { series: kept, decision: keepPrevious(now, kept.release) } : { series, decision: now };
}

/** Why an accepted value means its series, including the specification's `12` collision. */
function explainValue(value: string, series: Play1Series): string {
  if (value === '12') {
    return '12 is the short code of 1.2. The specification lists 12 for 1.3 as well, which collides with 1.2; as NOTES.md settles, 12 means 1.2 and 1.3 is selected with 1.3 or 13';
  }
  if (value === '13') return "13 is the short code of 1.3 (used instead of the specification's colliding 12, as NOTES.md settles)";
  if (value === series.series) return `${value} selects the Play ${series.series} series`;
  return `${value} is the short code of ${series.series}`;
}

function decision(requested: string | null, source: string, series: Play1Series, overridden: OverriddenSource[], why?: string): Decision {
  const head = why ?? explainValue(requested as string, series);
  return decide({
    id: 'play1.version',
    subject: 'Play 1.x version',
    requests: [{ source, value: requested }],
    resolved: series.release,
    reason: `${head}; series ${series.series} installs its latest release, ${series.release}`,
    lost: overridden,
  });
}

/** The accepted values, grouped by series, for messages. */
function acceptedValuesText(): string {
  return PLAY1_SERIES.map((s) => `${s.accepted.join(' or ')} (${s.series})`).join(', ');
}

function accept(value: string, at: { variable?: string; file?: string }, what: string): Play1Series {
  const series = seriesFor(value);
  if (series) return series;
  const release = /^1\.(\d+)\.\d+/.exec(value);
  const hint = release && seriesFor(`1.${release[1]}`) ? ` Give the series (1.${release[1]}), not a release: each series installs its latest release.` : '';
  throw Play1Errors.PLAY1_VERSION_INVALID.create({
    message: `${what} not an accepted Play 1.x version. Accepted values: ${acceptedValuesText()}.${hint}`,
    ...at,
  });
}
