/**
 * The Play 1.x series the buildpack knows, the values PLAY1_VERSION accepts for
 * each, and the release each series installs. Releases are the latest of each
 * series according to the play1 project's release notes; Java ranges are what
 * those notes say each series was made and tested for (see docs/buildpacks/play1.md).
 */
export interface Play1Series {
  /** "1.2" … "1.11". */
  readonly series: string;
  /** Every value of PLAY1_VERSION / platform/play1_version that selects the series. */
  readonly accepted: readonly string[];
  /** The concrete release installed for the series. */
  readonly release: string;
  /** Java feature releases the series was made for, inclusive. */
  readonly java: { readonly min: number; readonly max: number };
  /** Major Python version the release's `play` launcher is written for (1.7 moved to Python 3). */
  readonly python: 2 | 3;
}

const series = (name: string, release: string, java: [number, number], python: 2 | 3, extra: readonly string[] = []): Play1Series => ({
  series: name,
  // "1.10" → "110": the short code is the series without its dot.
  accepted: [name, name.replace('.', ''), ...extra],
  release,
  java: { min: java[0], max: java[1] },
  python,
});

export const PLAY1_SERIES: readonly Play1Series[] = [
  series('1.2', '1.2.7.2', [6, 7], 2),
  // The specification also lists `12` for 1.3 — a slip (it is 1.2's code); NOTES.md settles `13`.
  series('1.3', '1.3.4', [6, 8], 2),
  series('1.4', '1.4.6', [7, 8], 2),
  series('1.5', '1.5.3', [8, 9], 2),
  series('1.6', '1.6.0', [8, 14], 2),
  series('1.7', '1.7.1', [11, 17], 3),
  series('1.8', '1.8.0', [11, 19], 3),
  series('1.9', '1.9.0', [11, 19], 3),
  series('1.10', '1.10.0', [17, 21], 3),
  series('1.11', '1.11.0', [17, 21], 3),
];

/**
 * Used when neither PLAY1_VERSION nor platform/play1_version says anything: the
 * newest series, the only maintained one, whose launcher runs on the Python 3
 * and the Java 17/21 that current hosts provide (series up to 1.6 need Python 2).
 */
export const DEFAULT_PLAY1_SERIES = '1.11';

/** Every accepted value, in series order. */
export const ACCEPTED_VALUES: readonly string[] = PLAY1_SERIES.flatMap((s) => s.accepted);

export function seriesFor(value: string): Play1Series | undefined {
  return PLAY1_SERIES.find((s) => s.accepted.includes(value));
}
