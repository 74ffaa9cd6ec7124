import semver from 'semver';

/** One long-term-support line of Node.js: its codename and the first release published as LTS. */
export interface LtsLine {
  readonly major: number;
  readonly codename: string;
  readonly firstLts: string;
}

/**
 * The Node.js release schedule: the registry copy keeps no dist-tags, so which
 * releases are LTS must come from data. A release is LTS when its line is listed
 * here and it is at or after the line's first LTS release — what the binary
 * itself reports as `process.release.lts`. An e2e fixture checks this table
 * against the binaries the tests download. A line enters this table when its
 * first LTS release is published (each October); hosts can pass their own table.
 */
export const NODE_LTS_LINES: readonly LtsLine[] = [
  { major: 4, codename: 'Argon', firstLts: '4.2.0' },
  { major: 6, codename: 'Boron', firstLts: '6.9.0' },
  { major: 8, codename: 'Carbon', firstLts: '8.9.0' },
  { major: 10, codename: 'Dubnium', firstLts: '10.13.0' },
  { major: 12, codename: 'Erbium', firstLts: '12.13.0' },
  { major: 14, codename: 'Fermium', firstLts: '14.15.0' },
  { major: 16, codename: 'Gallium', firstLts: '16.13.0' },
  { major: 18, codename: 'Hydrogen', firstLts: '18.12.0' },
  { major: 20, codename: 'Iron', firstLts: '20.9.0' },
  { major: 22, codename: 'Jod', firstLts: '22.11.0' },
  { major: 24, codename: 'Krypton', firstLts: '24.11.0' },
];

// Released versions are plain "major.minor.patch": compared as numbers, not through
// semver's parser, since latestLts looks at every published version (~680) and a
// cold `runplan plan` pays for each parse.
const PLAIN = /^(\d+)\.(\d+)\.(\d+)$/;

/** a − b for two versions, by number when both are plain, else by semver. */
function compareVersions(a: string, b: string): number {
  const x = PLAIN.exec(a);
  const y = PLAIN.exec(b);
  if (x === null || y === null) return semver.compare(a, b);
  for (let i = 1; i <= 3; i++) {
    const d = Number(x[i]) - Number(y[i]);
    if (d !== 0) return d;
  }
  return 0;
}

function majorOf(version: string): number {
  const plain = PLAIN.exec(version);
  return plain === null ? semver.major(version) : Number(plain[1]);
}

/** The LTS codename of a release, or undefined when it is not an LTS release. */
export function ltsCodename(version: string, lines: readonly LtsLine[] = NODE_LTS_LINES): string | undefined {
  const major = majorOf(version);
  const line = lines.find((l) => l.major === major);
  return line && compareVersions(version, line.firstLts) >= 0 ? line.codename : undefined;
}

/** The greatest available LTS release, or undefined when none is available. */
export function latestLts(available: readonly string[], lines: readonly LtsLine[] = NODE_LTS_LINES): string | undefined {
  // Planning runs for every build over ~680 versions: compute once per list and table.
  let perTable = latestCache.get(available);
  if (perTable === undefined) {
    perTable = new WeakMap();
    latestCache.set(available, perTable);
  }
  if (!perTable.has(lines)) {
    let best: string | undefined;
    for (const v of available) {
      if (ltsCodename(v, lines) !== undefined && (best === undefined || compareVersions(v, best) > 0)) best = v;
    }
    perTable.set(lines, best);
  }
  return perTable.get(lines);
}

const latestCache = new WeakMap<readonly string[], WeakMap<readonly LtsLine[], string | undefined>>();
