import { decide, type Decision, type OverriddenSource, type PlanWarning } from '../../src/kit/index.js';
import { NodeErrors, NodeWarnings } from './errors.js';

/** The values of CC_NODE_BUILD_TOOL: the specification's six and the newer service's three. */
export const BUILD_TOOLS = ['npm-install', 'npm-ci', 'npm', 'yarn', 'yarn2', 'custom', 'yarn-berry', 'pnpm', 'bun'] as const;
/** A value of CC_NODE_BUILD_TOOL. */
export type BuildTool = (typeof BUILD_TOOLS)[number];

/** The package manager that actually runs. */
export type PackageManager = 'npm' | 'yarn1' | 'yarn2' | 'yarn-berry' | 'pnpm' | 'bun' | 'custom';

/** Pinned versions: the registry copy keeps only the latest dist-tag, so nothing is left to "latest". */
export const PINNED_TOOLS = {
  yarn1: '1.22.22',
  yarn2: '2.4.2',
  'yarn-berry': '4.9.2',
  pnpm: '10.34.8',
  bun: '1.4.5',
} as const;

/** Lockfiles and the tool each one belongs to, in the order detection tries them. */
export const LOCKFILES: readonly { readonly file: string; readonly tool: 'yarn' | 'pnpm' | 'bun' | 'npm' }[] = [
  { file: 'yarn.lock', tool: 'yarn' },
  { file: 'pnpm-lock.yaml', tool: 'pnpm' },
  { file: 'bun.lock', tool: 'bun' },
  { file: 'bun.lockb', tool: 'bun' },
  { file: 'package-lock.json', tool: 'npm' },
  { file: 'npm-shrinkwrap.json', tool: 'npm' },
];

export interface BuildToolInput {
  readonly ccNodeBuildTool?: string | undefined;
  readonly ccCustomBuildTool?: string | undefined;
  /** Lockfiles present at the application root. */
  readonly lockfiles: readonly string[];
  /** package.json packageManager, e.g. "yarn@4.9.2+sha512…". */
  readonly packageManager?: string | undefined;
}

/** The package manager a Node.js plan installs and runs, and why. */
export interface BuildToolResolution {
  readonly tool: BuildTool;
  readonly manager: PackageManager;
  /** Exact version of the package manager runplan installs (undefined: npm, which comes with Node, or custom). */
  readonly managerVersion: string | undefined;
  /** The lockfile the install uses, if any. */
  readonly lockfile: string | undefined;
  /** With custom: the command line. */
  readonly customCommand?: string;
  readonly decision: Decision;
  readonly warnings: readonly PlanWarning[];
}

/** "yarn@4.9.2+sha512.…" → { name: "yarn", version: "4.9.2" }. */
export function parsePackageManager(field: string | undefined): { name: string; version: string } | undefined {
  const m = /^(@?[^@\s]+)@(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)(?:\+.*)?$/.exec(field?.trim() ?? '');
  return m ? { name: m[1] as string, version: m[2] as string } : undefined;
}

/**
 * Chooses the build tool (specification, Node rules 6 and 7; NOTES): CC_NODE_BUILD_TOOL
 * when set; otherwise yarn.lock selects Yarn (Yarn berry when packageManager says
 * yarn@2+), pnpm-lock.yaml pnpm, bun.lock bun, and npm by default.
 */
export function resolveBuildTool(input: BuildToolInput): BuildToolResolution {
  const requested = input.ccNodeBuildTool?.trim() ?? '';
  const declared = parsePackageManager(input.packageManager);
  const present = LOCKFILES.filter((l) => input.lockfiles.includes(l.file));
  const detected = detect(
    present.map((l) => l.tool),
    declared,
  );
  const warnings: PlanWarning[] = [];
  const overridden: OverriddenSource[] = [];

  let tool: BuildTool;
  let source: string;
  let reason: string;
  if (requested !== '') {
    if (!(BUILD_TOOLS as readonly string[]).includes(requested)) {
      throw NodeErrors.NODE_BUILD_TOOL_INVALID.create({
        message: `CC_NODE_BUILD_TOOL is ${JSON.stringify(requested)}; known values are ${BUILD_TOOLS.join(', ')}.`,
        variable: 'CC_NODE_BUILD_TOOL',
      });
    }
    tool = requested as BuildTool;
    source = 'env CC_NODE_BUILD_TOOL';
    reason = meaning(tool);
    if (detected.lockfile !== undefined && managerOf(detected.tool, declared) !== managerOf(tool, declared)) {
      overridden.push({ source: detected.lockfile, value: detected.tool, reason: `CC_NODE_BUILD_TOOL is set, which overrides the ${detected.lockfile} selection (rule 6)` });
    }
  } else {
    tool = detected.tool;
    source = detected.lockfile ?? 'default';
    reason =
      detected.lockfile === undefined
        ? `no lockfile of another tool: the default, ${meaning(tool)}`
        : `${detected.lockfile} in the application root selects it${detected.lockfile === 'yarn.lock' ? ' (rule 6)' : ''}: ${meaning(tool)}`;
  }

  const manager = managerOf(tool, declared);
  const tools = new Set(present.map((l) => l.tool));
  if (tools.size > 1) {
    const used = present.find((l) => l.tool === toolFamily(manager))?.file;
    for (const l of present) {
      if (l.file !== used) overridden.push({ source: l.file, value: null, reason: `ignored: the build uses ${manager === 'custom' ? 'the custom command' : manager}` });
    }
    warnings.push(
      NodeWarnings.NODE_LOCKFILES_CONFLICT.create({
        message: `lockfiles of different package managers are committed (${present.map((l) => l.file).join(', ')}); the build uses ${manager === 'custom' ? 'the custom command' : `${manager}${used ? ` with ${used}` : ''}`}.`,
        file: present.map((l) => l.file).join(', '),
      }),
    );
  }
  if (declared !== undefined && toolFamily(manager) !== declared.name) {
    overridden.push({ source: 'package.json packageManager', value: input.packageManager ?? null, reason: `not used: the build tool is ${tool}` });
  }

  let managerVersion: string | undefined;
  if (manager === 'yarn-berry' || manager === 'pnpm' || manager === 'bun') {
    const pinnedByApp = declared !== undefined && declared.name === toolFamily(manager) && (manager !== 'yarn-berry' || Number(declared.version.split('.')[0]) >= 3);
    managerVersion = pinnedByApp ? declared.version : PINNED_TOOLS[manager];
    reason += pinnedByApp ? `; version ${managerVersion} from package.json packageManager` : `; version ${managerVersion} (pinned by runplan)`;
  } else if (manager === 'yarn1' || manager === 'yarn2') {
    managerVersion = PINNED_TOOLS[manager];
    reason += `; version ${managerVersion} (pinned by runplan)`;
    warnings.push(
      NodeWarnings.NODE_YARN_UNMAINTAINED.create({
        message: `Yarn ${manager === 'yarn1' ? '1' : '2'} (${managerVersion}) no longer receives fixes${manager === 'yarn2' ? ', and cannot parse some current registry metadata' : ''}.`,
        ...(requested !== '' ? { variable: 'CC_NODE_BUILD_TOOL' } : { file: 'yarn.lock' }),
      }),
    );
  }

  let customCommand: string | undefined;
  if (tool === 'custom') {
    customCommand = input.ccCustomBuildTool?.trim() ?? '';
    if (customCommand === '') {
      throw NodeErrors.NODE_CUSTOM_BUILD_TOOL_EMPTY.create({
        message: 'CC_NODE_BUILD_TOOL is custom, so the build runs the command in CC_CUSTOM_BUILD_TOOL, which is empty or unset.',
        variable: 'CC_CUSTOM_BUILD_TOOL',
      });
    }
  }
  if (tool === 'npm-ci' && !input.lockfiles.includes('package-lock.json') && !input.lockfiles.includes('npm-shrinkwrap.json')) {
    throw NodeErrors.NODE_LOCKFILE_MISSING.create({
      message: 'CC_NODE_BUILD_TOOL is npm-ci, and `npm ci` installs exactly what package-lock.json or npm-shrinkwrap.json says, but neither is committed.',
      file: 'package-lock.json',
      variable: 'CC_NODE_BUILD_TOOL',
    });
  }

  const lockfile = present.find((l) => l.tool === toolFamily(manager))?.file;
  return {
    tool,
    manager,
    managerVersion,
    lockfile,
    ...(customCommand === undefined ? {} : { customCommand }),
    warnings,
    decision: decide({
      id: 'node.build-tool',
      subject: 'Build tool',
      requests: [{ source, value: requested === '' ? null : requested }],
      resolved: tool === 'custom' ? `custom: ${customCommand}` : managerVersion ? `${tool} (${manager}@${managerVersion})` : tool,
      reason,
      lost: overridden,
    }),
  };
}

function detect(tools: readonly string[], declared: { name: string; version: string } | undefined): { tool: BuildTool; lockfile: string | undefined } {
  const first = LOCKFILES.find((l) => tools.includes(l.tool) && l.tool !== 'npm');
  if (first?.tool === 'yarn') {
    const major = declared?.name === 'yarn' ? Number(declared.version.split('.')[0]) : 1;
    return { tool: major >= 3 ? 'yarn-berry' : major === 2 ? 'yarn2' : 'yarn', lockfile: 'yarn.lock' };
  }
  if (first?.tool === 'pnpm') return { tool: 'pnpm', lockfile: first.file };
  if (first?.tool === 'bun') return { tool: 'bun', lockfile: first.file };
  return { tool: 'npm', lockfile: undefined };
}

function managerOf(tool: BuildTool, declared: { name: string; version: string } | undefined): PackageManager {
  switch (tool) {
    case 'npm':
    case 'npm-install':
    case 'npm-ci':
      return 'npm';
    case 'yarn':
      return 'yarn1';
    case 'yarn2':
      return 'yarn2';
    case 'yarn-berry':
      return declared?.name === 'yarn' && declared.version.startsWith('2.') ? 'yarn2' : 'yarn-berry';
    default:
      return tool;
  }
}

function toolFamily(manager: PackageManager): string {
  return manager.startsWith('yarn') ? 'yarn' : manager;
}

function meaning(tool: BuildTool): string {
  switch (tool) {
    case 'npm':
      return '`npm` currently equals npm-install, which runs `npm install` (rule 7)';
    case 'npm-install':
      return 'npm-install runs `npm install` (rule 7)';
    case 'npm-ci':
      return 'npm-ci runs `npm ci` (rule 7)';
    case 'yarn':
      return 'yarn runs Yarn 1 (rule 7)';
    case 'yarn2':
      return 'yarn2 runs Yarn 2 through yarnPath (rule 7)';
    case 'custom':
      return 'custom runs the command in CC_CUSTOM_BUILD_TOOL (rule 7)';
    case 'yarn-berry':
      return 'yarn-berry runs Yarn 3 or 4 through yarnPath with the node-modules linker';
    case 'pnpm':
      return 'pnpm runs `pnpm install`';
    case 'bun':
      return 'bun runs `bun install`';
  }
}
