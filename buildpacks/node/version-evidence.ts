import semver from 'semver';
import { lineExcerpt, type OverriddenSource, type PlanWarning, quoteExcerpt } from '../../src/kit/index.js';
import { NodeWarnings } from './errors.js';

/**
 * What else an application says about its Node.js and package manager, beside
 * what the specification reads (engines.node, CC_NODE_VERSION, the lockfiles and
 * packageManager). Version managers' files are ignored as .nvmrc is, and
 * reported; package.json `devEngines` (the npm RFC that npm 10.9+ enforces for
 * its own commands) is reported when it disagrees with what was chosen.
 */

/** The Node.js version a `.tool-versions` file (asdf, mise) names: undefined without a nodejs line, null for a line without a version. */
export function toolVersionsNode(text: string): string | null | undefined {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, '').trim();
    const [tool, ...versions] = line.split(/\s+/);
    if (tool === 'nodejs' || tool === 'node') return versions.length > 0 ? versions.join(' ') : null;
  }
  return undefined;
}

/** The Node.js version of a parsed `mise.toml` `[tools]` table (`node = "22"` or `node = { version = "22" }`). */
export function miseNode(parsed: unknown): string | null | undefined {
  const tools = (parsed as { tools?: unknown } | null)?.tools;
  if (typeof tools !== 'object' || tools === null) return undefined;
  const entry = (tools as Record<string, unknown>).node ?? (tools as Record<string, unknown>).nodejs;
  if (entry === undefined) return undefined;
  if (typeof entry === 'string') return entry;
  if (Array.isArray(entry)) return entry.filter((v) => typeof v === 'string').join(' ') || null;
  const version = (entry as { version?: unknown } | null)?.version;
  return typeof version === 'string' ? version : null;
}

export interface VersionManagerFiles {
  readonly nodeVersion?: string | undefined;
  readonly toolVersions?: string | undefined;
  /** mise.toml as parsed, or "invalid" when it is not TOML. */
  readonly mise?: unknown;
}

const IGNORED = 'set engines.node or CC_NODE_VERSION instead';

/** The version managers' files as ignored sources of the node.version decision. */
export function ignoredVersionFiles(files: VersionManagerFiles): OverriddenSource[] {
  const out: OverriddenSource[] = [];
  const shown = (value: string | null) => (value === null || value.trim() === '' ? null : lineExcerpt(value.trim()));
  if (files.nodeVersion !== undefined) {
    out.push({ source: '.node-version', value: shown(files.nodeVersion), reason: `.node-version is ignored, as on the service: ${IGNORED}` });
  }
  const tool = files.toolVersions === undefined ? undefined : toolVersionsNode(files.toolVersions);
  if (tool !== undefined) out.push({ source: '.tool-versions nodejs', value: shown(tool), reason: `.tool-versions is ignored, as on the service: ${IGNORED}` });
  if (files.mise === 'invalid') {
    out.push({ source: 'mise.toml [tools] node', value: null, reason: `mise.toml is not valid TOML and is ignored anyway, as on the service: ${IGNORED}` });
  } else if (files.mise !== undefined) {
    const mise = miseNode(files.mise);
    if (mise !== undefined) out.push({ source: 'mise.toml [tools] node', value: shown(mise), reason: `mise.toml is ignored, as on the service: ${IGNORED}` });
  }
  return out;
}

interface DevEngine {
  readonly name?: unknown;
  readonly version?: unknown;
}

/** The entries of `devEngines.<field>` (an object or an array of them) for one of `names`. */
function devEngine(devEngines: unknown, field: 'runtime' | 'packageManager', names: readonly string[] | undefined): DevEngine[] {
  const value = (devEngines as Record<string, unknown> | null | undefined)?.[field];
  const list = (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((e): e is DevEngine => typeof e === 'object' && e !== null);
  return names === undefined ? list : list.filter((e) => typeof e.name === 'string' && names.includes(e.name));
}

/** Whether `version` satisfies a devEngines version (a semver range; absent means any). */
function accepts(range: unknown, version: string): boolean {
  if (typeof range !== 'string' || range.trim() === '') return true;
  return semver.validRange(range) !== null && semver.satisfies(version, range);
}

export interface DevEnginesEvidence {
  readonly node: OverriddenSource[];
  readonly tool: OverriddenSource[];
  readonly warnings: PlanWarning[];
}

/**
 * package.json devEngines against the chosen Node.js version and build tool:
 * a disagreement is an overridden source of the decision it concerns, and a
 * warning (the service never reads devEngines; npm 10.9+ refuses its own
 * commands when they disagree, so the application's developers see another
 * Node.js than the one deployed).
 */
export function devEnginesEvidence(devEngines: unknown, chosen: { node: string; manager: string; managerVersion: string | undefined }): DevEnginesEvidence {
  const out: DevEnginesEvidence = { node: [], tool: [], warnings: [] };
  if (devEngines === undefined) return out;
  const runtimes = devEngine(devEngines, 'runtime', undefined);
  const node = runtimes.filter((e) => e.name === 'node');
  if (runtimes.length > 0 && (node.length === 0 || !node.some((e) => accepts(e.version, chosen.node)))) {
    const asked = node.length === 0 ? runtimes.map((e) => String(e.name)).join(', ') : node.map((e) => String(e.version ?? 'any')).join(' or ');
    const reason = `devEngines is not read by the service; Node.js ${chosen.node} was chosen from engines.node, CC_NODE_VERSION or the default`;
    out.node.push({ source: 'package.json devEngines.runtime', value: lineExcerpt(asked), reason });
    out.warnings.push(
      NodeWarnings.NODE_DEV_ENGINES_MISMATCH.create({
        message: `package.json devEngines.runtime asks for ${quoteExcerpt(node.length === 0 ? asked : `node ${asked}`)}, but the application is deployed with Node.js ${chosen.node}.`,
        file: 'package.json',
      }),
    );
  }
  const managers = devEngine(devEngines, 'packageManager', undefined);
  if (managers.length > 0 && !managers.some((e) => e.name === chosen.manager && (chosen.managerVersion === undefined || accepts(e.version, chosen.managerVersion)))) {
    const asked = managers.map((e) => `${String(e.name)}${typeof e.version === 'string' ? `@${e.version}` : ''}`).join(' or ');
    const using = `${chosen.manager}${chosen.managerVersion ? `@${chosen.managerVersion}` : ''}`;
    out.tool.push({ source: 'package.json devEngines.packageManager', value: lineExcerpt(asked), reason: `devEngines is not read by the service; the build runs ${using}` });
    out.warnings.push(
      NodeWarnings.NODE_DEV_ENGINES_MISMATCH.create({
        message: `package.json devEngines.packageManager asks for ${quoteExcerpt(asked)}, but the build runs ${using}.`,
        file: 'package.json',
      }),
    );
  }
  return out;
}
