import semver from 'semver';
import { assignmentExcerpt, lineExcerpt, type PlanWarning, quoteExcerpt } from '../../src/kit/index.js';
import { NodeWarnings } from './errors.js';
import type { PublishedVersion } from './published-version.js';
import { ltsCodename, NODE_LTS_LINES, type LtsLine } from './lts.js';
import type { PackageJson } from './package-json.js';
import { parsePackageManager, PINNED_TOOLS, type PackageManager } from './resolve-build-tool.js';
import { TOOL_PACKAGES } from './tools.js';
import { miseNode, toolVersionsNode } from './version-evidence.js';

/**
 * Requests an application writes down that the service does not read, or that
 * chose nothing: version managers' files naming another Node.js than the one
 * deployed, and package.json's engines.pnpm / engines.yarn / engines.bun /
 * packageManager when the build runs another tool or version. Each is a
 * warning naming the setting the service reads. Pure: texts and choices in.
 */

/** The version managers' files, as read from the application (undefined when absent). */
export interface VersionFiles {
  readonly nvmrc?: string | undefined;
  readonly nodeVersion?: string | undefined;
  readonly toolVersions?: string | undefined;
  /** mise.toml parsed, or "invalid". */
  readonly mise?: unknown;
}

/** The Node.js version deployed and the source of its decision ("default", "package.json engines.node", "env CC_NODE_VERSION"). */
export interface DeployedNode {
  readonly version: string;
  readonly source: string;
  /** What that source asked for. */
  readonly requested?: string | null | undefined;
}

/** What a version manager's request means: a semver range, LTS, or nothing runplan can compare. */
interface NodeRequest {
  readonly range?: string;
  readonly lts?: boolean;
  /** The engines.node value that deploys the same. */
  readonly suggestion?: string;
}

/** The first line of a version file that is not blank or a comment. */
function firstValue(text: string): string {
  for (const line of text.split(/\r?\n/)) {
    const value = line.replace(/#.*/, '').trim();
    if (value !== '') return value;
  }
  return '';
}

const MAX_REQUEST_CHARS = 100;

/** How nvm and its kin read a version request ("20", "v20.11.1", "lts/iron", "lts/*", ">=18"). */
export function readNodeRequest(value: string, lines: readonly LtsLine[] = NODE_LTS_LINES): NodeRequest {
  const v = value.trim().replace(/^v(?=\d)/, '');
  // Longer than any version request (semver's own limit is 256): nothing runplan compares, nor repeats in a fix.
  if (v.length > MAX_REQUEST_CHARS) return {};
  if (/^lts\/(\*|latest)$/i.test(v)) return { lts: true };
  const codename = /^lts\/([a-z]+)$/i.exec(v)?.[1]?.toLowerCase();
  if (codename !== undefined) {
    const line = lines.find((l) => l.codename.toLowerCase() === codename);
    return line ? { range: `${line.major}.x`, suggestion: `${line.major}.x` } : {};
  }
  if (/^\d+$/.test(v)) return { range: `${v}.x`, suggestion: `${v}.x` };
  if (/^\d+\.\d+$/.test(v)) return { range: `${v}.x`, suggestion: `${v}.x` };
  if (semver.valid(v)) return { range: v, suggestion: v };
  const range = semver.validRange(v);
  return range === null ? {} : { range: v, suggestion: v };
}

function agrees(request: NodeRequest, version: string, lines: readonly LtsLine[]): boolean {
  if (request.lts) return ltsCodename(version, lines) !== undefined;
  return request.range !== undefined && semver.satisfies(version, request.range);
}

/**
 * NODE_VERSION_FILE_IGNORED for each version manager's file (.nvmrc,
 * .node-version, .tool-versions, mise.toml) whose version the deployed Node.js
 * does not satisfy: developers run one version, the service another.
 */
export function versionFileWarnings(files: VersionFiles, deployed: DeployedNode, lines: readonly LtsLine[] = NODE_LTS_LINES): PlanWarning[] {
  const named: { file: string; value: string }[] = [];
  if (files.nvmrc !== undefined) named.push({ file: '.nvmrc', value: firstValue(files.nvmrc) });
  if (files.nodeVersion !== undefined) named.push({ file: '.node-version', value: firstValue(files.nodeVersion) });
  const tool = files.toolVersions === undefined ? undefined : toolVersionsNode(files.toolVersions);
  if (typeof tool === 'string') named.push({ file: '.tool-versions', value: tool.split(/\s+/)[0] ?? '' });
  const mise = files.mise === undefined || files.mise === 'invalid' ? undefined : miseNode(files.mise);
  if (typeof mise === 'string') named.push({ file: 'mise.toml', value: mise });

  const byEngines = deployed.source.includes('engines.node');
  const byVariable = deployed.source.includes('CC_NODE_VERSION');
  const decidedBy = byEngines
    ? `engines.node (${quoteExcerpt(deployed.requested ?? '')})`
    : byVariable
      ? `CC_NODE_VERSION (${quoteExcerpt(deployed.requested ?? '')})`
      : 'the default, the latest LTS (no engines.node, no CC_NODE_VERSION)';
  const warnings: PlanWarning[] = [];
  for (const { file, value } of named) {
    if (value === '') continue;
    const request = readNodeRequest(value, lines);
    if (agrees(request, deployed.version, lines)) continue;
    const wanted = request.suggestion;
    const setting = wanted === undefined ? 'the version you want' : `"engines": { "node": ${JSON.stringify(wanted)} }`;
    let fix: string;
    if (byEngines) fix = `engines.node decides: make it and ${file} name the same Node.js (${setting} in package.json deploys what ${file} names), or remove ${file}.`;
    else if (wanted === undefined)
      fix = `Write the version to deploy as engines.node in package.json (or CC_NODE_VERSION), e.g. "engines": { "node": "${semver.major(deployed.version)}.x" }, and make ${file} name the same, or remove it.`;
    else fix = `Set ${setting} in package.json (or ${assignmentExcerpt('CC_NODE_VERSION', wanted)}) to deploy what ${file} names, or make ${file} name the deployed version.`;
    warnings.push(
      NodeWarnings.NODE_VERSION_FILE_IGNORED.create({
        message: `${file} asks for Node.js ${quoteExcerpt(value)}, but the deployment runs ${deployed.version}: the service does not read ${file}; the version comes from ${decidedBy}.`,
        file,
        ...(byEngines ? {} : { variable: 'CC_NODE_VERSION' }),
        fix,
      }),
    );
  }
  return warnings;
}

/** The tools package.json's engines can name, with what makes the service choose each. */
const REQUESTABLE_TOOLS = [
  { name: 'pnpm', family: ['pnpm'], lockfile: 'pnpm-lock.yaml', install: 'pnpm install' },
  { name: 'yarn', family: ['yarn1', 'yarn2', 'yarn-berry'], lockfile: 'yarn.lock', install: 'yarn install' },
  { name: 'bun', family: ['bun'], lockfile: 'bun.lock', install: 'bun install' },
] as const satisfies readonly { name: string; family: readonly PackageManager[]; lockfile: string; install: string }[];

/** The tool that runs the build, and how it was chosen. */
export interface ToolChoice {
  readonly manager: PackageManager;
  /** The version runplan installs (undefined for npm and custom). */
  readonly managerVersion?: string | undefined;
  /** CC_NODE_BUILD_TOOL, when set. */
  readonly requested?: string | undefined;
}

/** The CC_NODE_BUILD_TOOL value that runs a package manager at this version. */
function buildToolValue(name: string, version: string | undefined): string {
  if (name !== 'yarn') return name;
  const major = version === undefined ? 4 : (semver.coerce(version)?.major ?? 4);
  return major >= 3 ? 'yarn-berry' : major === 2 ? 'yarn2' : 'yarn';
}

/** The greatest published version of a tool satisfying a range: Yarn 3+ from @yarnpkg/cli-dist, Yarn 1 from yarn. */
function greatestPublished(name: string, range: string, tools: Readonly<Record<string, readonly PublishedVersion[]>>): string | undefined {
  const packages = name === 'yarn' ? [TOOL_PACKAGES['yarn-berry'].package, TOOL_PACKAGES.yarn1.package] : name === 'pnpm' ? [TOOL_PACKAGES.pnpm.package] : [TOOL_PACKAGES.bun.package];
  for (const pkg of packages) {
    const versions = (tools[pkg] ?? []).map((v) => v.version).filter((v) => pkg !== TOOL_PACKAGES['yarn-berry'].package || (semver.valid(v) !== null && semver.major(v) >= 3));
    const best = semver.maxSatisfying(versions, range);
    if (best !== null) return best;
  }
  return undefined;
}

/** How the build chose another tool than the one asked for. */
function chosenBecause(choice: ToolChoice, lockfile: string): string {
  if (choice.requested !== undefined) return `CC_NODE_BUILD_TOOL=${choice.requested} chooses it`;
  return `the service chooses the tool from the lockfile, and no ${lockfile} is committed`;
}

function useTool(tool: (typeof REQUESTABLE_TOOLS)[number], choice: ToolChoice, version: string | undefined): string {
  const value = buildToolValue(tool.name, version);
  return choice.requested !== undefined ? `unset CC_NODE_BUILD_TOOL or set CC_NODE_BUILD_TOOL=${value}` : `commit ${tool.lockfile} (run \`${tool.install}\` once) or set CC_NODE_BUILD_TOOL=${value}`;
}

/**
 * NODE_TOOL_REQUEST_IGNORED: engines.pnpm / engines.yarn / engines.bun that the
 * tool running the build does not satisfy (another tool runs, or another
 * version), and a packageManager field that chose nothing (not `name@x.y.z`, or
 * naming a tool that does not run). npm's own requests (engines.npm,
 * packageManager "npm@…") are the npm resolution's concern.
 */
export function toolRequestWarnings(pkg: PackageJson, choice: ToolChoice, tools: Readonly<Record<string, readonly PublishedVersion[]>>): PlanWarning[] {
  if (choice.manager === 'custom') return [];
  const warnings: PlanWarning[] = [];
  const warn = (message: string, fix: string) => warnings.push(NodeWarnings.NODE_TOOL_REQUEST_IGNORED.create({ message, file: 'package.json', fix }));
  const running = choice.manager === 'npm' ? 'npm' : `${choice.manager.startsWith('yarn') ? 'yarn' : choice.manager}@${choice.managerVersion}`;

  const field = typeof pkg.packageManager === 'string' ? pkg.packageManager.trim() : '';
  const declared = parsePackageManager(field);
  for (const tool of REQUESTABLE_TOOLS) {
    const range = pkg.engines?.[tool.name];
    // A value that is no range is a guard some projects write ("use npm, not yarn"), not a request.
    if (typeof range !== 'string' || semver.validRange(range) === null) continue;
    const best = greatestPublished(tool.name, range, tools);
    const pin = best === undefined ? `no published ${tool.name} satisfies it: correct engines.${tool.name}` : `set "packageManager": "${tool.name}@${best}" in package.json`;
    if (!(tool.family as readonly string[]).includes(choice.manager)) {
      // packageManager naming the same tool says it once, below.
      if (declared?.name === tool.name) continue;
      warn(
        `package.json engines.${tool.name} (${quoteExcerpt(range)}) asks for ${tool.name}, but the build runs ${running}: ${chosenBecause(choice, tool.lockfile)}.`,
        `To build with ${tool.name}, ${useTool(tool, choice, best)}${best === undefined ? '' : `, with "packageManager": "${tool.name}@${best}"`}; or remove engines.${tool.name}.`,
      );
    } else if (choice.managerVersion !== undefined && !semver.satisfies(choice.managerVersion, range)) {
      const pinned = choice.managerVersion === PINNED_TOOLS[choice.manager as keyof typeof PINNED_TOOLS] ? 'the version runplan pins' : 'the version packageManager names';
      warn(
        `package.json engines.${tool.name} (${quoteExcerpt(range)}) excludes ${tool.name} ${choice.managerVersion}, ${pinned}, which runs the build.`,
        `${pin.charAt(0).toUpperCase()}${pin.slice(1)}${best !== undefined && tool.name === 'yarn' && semver.major(best) >= 3 && choice.manager !== 'yarn-berry' ? ' and CC_NODE_BUILD_TOOL=yarn-berry' : ''}, so that the build runs a version engines.${tool.name} accepts.`,
      );
    }
  }

  if (field !== '' && declared === undefined) {
    const name = /^(@?[^@\s]+)/.exec(field)?.[1] ?? 'pnpm';
    const known = REQUESTABLE_TOOLS.find((t) => t.name === name);
    const example = known ? `${name}@${greatestPublished(name, '*', tools) ?? PINNED_TOOLS.pnpm}` : `pnpm@${PINNED_TOOLS.pnpm}`;
    warn(
      `package.json packageManager (${quoteExcerpt(field)}) is not <name>@<x.y.z>, so it chose nothing: the build runs ${running}.`,
      `Write an exact version, e.g. "packageManager": "${lineExcerpt(example)}".`,
    );
  } else if (declared !== undefined) {
    const tool = REQUESTABLE_TOOLS.find((t) => t.name === declared.name);
    if (tool !== undefined && !(tool.family as readonly string[]).includes(choice.manager)) {
      warn(
        `package.json packageManager names ${lineExcerpt(`${declared.name}@${declared.version}`)}, but the build runs ${running}: ${chosenBecause(choice, tool.lockfile)}.`,
        `To build with ${declared.name}, ${useTool(tool, choice, declared.version)}; or remove packageManager.`,
      );
    }
  }
  return warnings;
}
