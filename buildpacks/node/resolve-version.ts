import semver from 'semver';
import { decide, type Decision, keepPrevious, lineExcerpt, type OverriddenSource, type PlanWarning, quoteExcerpt } from '../../src/kit/index.js';
import { NodeErrors, NodeWarnings } from './errors.js';
import { latestLts, ltsCodename, NODE_LTS_LINES, type LtsLine } from './lts.js';

/** Which rule of the specification turned a request into a version. */
type VersionRule = 'release-line' | 'open-range' | 'range' | 'default-lts';

/** A request for a Node.js version and where it was written. */
interface VersionRequest {
  readonly value: string;
  /** e.g. "package.json engines.node". */
  readonly source: string;
  /** The file or variable at fault when the request is wrong. */
  readonly file?: string;
  readonly variable?: string;
}

/** Where a Node.js version may be asked for. */
export interface NodeVersionInput {
  /** package.json engines.node. */
  readonly engines?: string | undefined;
  /** The CC_NODE_VERSION variable. */
  readonly ccNodeVersion?: string | undefined;
  /** The text of .nvmrc, which is ignored but reported. */
  readonly nvmrc?: string | undefined;
  /** Every published version that can be installed. */
  readonly available: readonly string[];
  readonly ltsLines?: readonly LtsLine[];
  /** The version a previous plan took from the default: kept while available (plan --previous). */
  readonly previousDefault?: string | undefined;
}

/** The Node.js version of a plan, the rule that chose it, and its decision. */
export interface NodeVersionResolution {
  readonly version: string;
  readonly rule: VersionRule;
  readonly decision: Decision;
  readonly warnings: readonly PlanWarning[];
}

/** Specification rule 2: `A.B.x`, `^A.B.C` and `~A.B` mean "the latest available A.B". */
const RELEASE_LINE_FORMS: readonly RegExp[] = [/^v?(\d+)\.(\d+)\.[xX*]$/, /^\^v?(\d+)\.(\d+)\.\d+$/, /^~v?(\d+)\.(\d+)$/];
/** Specification rule 3: a lone lower bound. */
const OPEN_RANGE = /^>=\s*v?(\d+(?:\.\d+){0,2})$/;

/** The major and minor of a release-line request, or undefined for any other form. */
export function releaseLine(request: string): { major: number; minor: number } | undefined {
  for (const form of RELEASE_LINE_FORMS) {
    const m = form.exec(request.trim());
    if (m) return { major: Number(m[1]), minor: Number(m[2]) };
  }
  return undefined;
}

const stableCache = new WeakMap<readonly string[], string[]>();

const PLAIN_VERSION = /^(?:0|[1-9]\d{0,14})\.(?:0|[1-9]\d{0,14})\.(?:0|[1-9]\d{0,14})$/;

/** Stable releases only: the specification supports "any stable version". Computed once per list. */
function stableVersions(available: readonly string[]): string[] {
  let stable = stableCache.get(available);
  if (stable === undefined) {
    // Nearly every published version is plain MAJOR.MINOR.PATCH (each part a safe integer): answered without parsing it twice.
    stable = available.filter((v) => PLAIN_VERSION.test(v) || (semver.valid(v) !== null && semver.prerelease(v) === null));
    stableCache.set(available, stable);
  }
  return stable;
}

/**
 * Resolves the Node.js version (specification, engines.node rules 1–4; NOTES):
 * engines.node wins over CC_NODE_VERSION; .nvmrc is ignored; without either the
 * latest available LTS. Pure: the available versions are an input.
 */
export function resolveNodeVersion(input: NodeVersionInput): NodeVersionResolution {
  const available = stableVersions(input.available);
  const lines = input.ltsLines ?? NODE_LTS_LINES;
  const engines = nonEmpty(input.engines);
  const variable = nonEmpty(input.ccNodeVersion);
  const overridden: OverriddenSource[] = [];
  let request: VersionRequest | undefined;
  if (engines !== undefined) {
    request = { value: engines, source: 'package.json engines.node', file: 'package.json' };
    if (variable !== undefined) overridden.push({ source: 'env CC_NODE_VERSION', value: variable, reason: 'engines.node wins when both are set' });
  } else if (variable !== undefined) {
    request = { value: variable, source: 'env CC_NODE_VERSION', variable: 'CC_NODE_VERSION' };
  }
  const nvmrc = input.nvmrc?.trim();
  if (nvmrc !== undefined) {
    overridden.push({ source: '.nvmrc', value: nvmrc === '' ? null : lineExcerpt(nvmrc), reason: '.nvmrc is ignored, as on the service: set engines.node or CC_NODE_VERSION instead' });
  }

  if (request === undefined) {
    const version = latestLts(available, lines);
    if (version === undefined) {
      throw NodeErrors.NODE_VERSION_UNSATISFIABLE.create({ message: `no LTS release of Node.js is available (${available.length} versions listed).` });
    }
    const now = decision(null, 'default', version, `no engines.node and no CC_NODE_VERSION: the latest LTS version available (${ltsCodename(version, lines)}, rule 1)`, overridden);
    const kept = input.previousDefault;
    if (kept !== undefined && kept !== version && available.includes(kept)) {
      return { version: kept, rule: 'default-lts', warnings: [], decision: keepPrevious(now, kept) };
    }
    return { version, rule: 'default-lts', warnings: [], decision: now };
  }

  const warnings: PlanWarning[] = [];
  const line = releaseLine(request.value);
  if (line !== undefined) {
    const version = semver.rsort(available.filter((v) => semver.major(v) === line.major && semver.minor(v) === line.minor))[0];
    if (version === undefined) throw unsatisfiable(request, `${line.major}.${line.minor}.0`, available);
    const caret = request.value.trim().startsWith('^');
    const reason = `${quoteExcerpt(request.value)} selects the latest available ${line.major}.${line.minor} version (rule 2)${
      caret ? `; this is narrower than npm's ^, which would allow any ${line.major}.x: the specification says ${line.major}.${line.minor}` : ''
    }`;
    return { version, rule: 'release-line', warnings, decision: decision(request.value, request.source, version, reason, overridden) };
  }

  const range = semver.validRange(request.value.trim());
  if (range === null) {
    throw NodeErrors.NODE_VERSION_INVALID.create({
      message: `${request.source} is ${quoteExcerpt(request.value)}, which is not a Node.js version or range.`,
      ...where(request),
    });
  }
  const version = semver.maxSatisfying(available, range);
  if (version === null) throw unsatisfiable(request, semver.minVersion(range)?.version ?? '0.0.0', available);
  const open = OPEN_RANGE.exec(request.value.trim());
  if (open) {
    const advised = `^${semver.coerce(open[1])?.version ?? open[1]}`;
    warnings.push(
      NodeWarnings.NODE_ENGINES_OPEN_RANGE.create({
        message: `${request.source} is ${quoteExcerpt(request.value)}: any future major version satisfies it, so a new Node.js release may break the application.`,
        ...where(request),
        fix: `Use "${advised}" so that the application keeps running on the same release line.`,
      }),
    );
    const reason = `${quoteExcerpt(request.value)} alone is discouraged (rule 3): the greatest available version satisfying it is used; "${advised}" is advised`;
    return { version, rule: 'open-range', warnings, decision: decision(request.value, request.source, version, reason, overridden) };
  }
  const reason = semver.valid(request.value.trim())
    ? `${quoteExcerpt(request.value)} names an exact version (rule 4: any stable version is supported)`
    : `the greatest available version satisfying ${quoteExcerpt(request.value)} (rule 4: any stable version is supported)`;
  return { version, rule: 'range', warnings, decision: decision(request.value, request.source, version, reason, overridden) };
}

/** The available versions closest to `anchor`: the greatest below it and the least above it. */
export function nearestVersions(anchor: string, available: readonly string[]): string[] {
  const sorted = semver.sort([...available]);
  // A release line beyond what semver can compare ("99999999999999999999.0.x" makes 1e+20.0.0) lies above every version.
  if (semver.valid(anchor) === null) return sorted.slice(-1);
  const below = sorted.filter((v) => semver.lt(v, anchor)).pop();
  const above = sorted.find((v) => semver.gte(v, anchor));
  return [below, above].filter((v): v is string => v !== undefined);
}

function unsatisfiable(request: VersionRequest, anchor: string, available: readonly string[]) {
  const nearest = nearestVersions(anchor, available);
  return NodeErrors.NODE_VERSION_UNSATISFIABLE.create({
    message: `${request.source} asks for ${quoteExcerpt(request.value)}, which no available Node.js version satisfies; the nearest available versions are ${nearest.join(' and ') || 'none'}.`,
    ...where(request),
    fix: `Request one of the nearest available versions, e.g. ${nearest.map((v) => `"${semver.major(v)}.${semver.minor(v)}.x"`).join(' or ') || '"24.x"'}.`,
    details: { requested: request.value, nearest },
  });
}

function where(request: VersionRequest): { file?: string; variable?: string } {
  return { ...(request.file ? { file: request.file } : {}), ...(request.variable ? { variable: request.variable } : {}) };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function decision(requested: string | null, source: string, resolved: string, reason: string, overridden: OverriddenSource[]): Decision {
  return decide({ id: 'node.version', subject: 'Node.js version', requests: [{ source, value: requested }], resolved, reason, lost: overridden });
}
