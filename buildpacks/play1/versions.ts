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
  /**
   * What a Java above `java.max` does: "refused" when the series' launcher adds JVM
   * options newer JVMs refuse (1.2–1.5, NOTES.md), so a newer Java is an error
   * before the build; "untested" when it may well run (a warning).
   */
  readonly javaAbove: 'refused' | 'untested';
  /** Major Python version the release's `play` launcher is written for (1.7 moved to Python 3). */
  readonly python: 2 | 3;
  /** The command of that Python looked for on PATH. */
  readonly pythonCommand: 'python2' | 'python3';
}

const series = (name: string, release: string, java: [number, number], javaAbove: Play1Series['javaAbove'], python: 2 | 3): Play1Series => ({
  series: name,
  // "1.10" → "110": the short code is the series without its dot.
  accepted: [name, name.replace('.', '')],
  release,
  java: { min: java[0], max: java[1] },
  javaAbove,
  python,
  pythonCommand: python === 2 ? 'python2' : 'python3',
});

/** The Play 1.x series runplan knows, oldest first, with their launcher and Java versions. */
export const PLAY1_SERIES: readonly Play1Series[] = [
  // Launchers up to 1.6 are Python 2 (framework/pym uses print statements and
  // `except X, e`); 1.7.0's release notes: "#1355 Play scripts upgrade to Python 3".
  series('1.2', '1.2.7.2', [6, 7], 'refused', 2),
  // The specification also lists `12` for 1.3 — a slip (it is 1.2's code); NOTES.md settles `13`.
  series('1.3', '1.3.4', [6, 8], 'refused', 2),
  series('1.4', '1.4.6', [7, 8], 'refused', 2),
  series('1.5', '1.5.3', [8, 9], 'refused', 2),
  series('1.6', '1.6.0', [8, 14], 'untested', 2),
  series('1.7', '1.7.1', [11, 17], 'untested', 3),
  series('1.8', '1.8.0', [11, 19], 'untested', 3),
  series('1.9', '1.9.0', [11, 19], 'untested', 3),
  series('1.10', '1.10.0', [17, 21], 'untested', 3),
  series('1.11', '1.11.0', [17, 21], 'untested', 3),
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
