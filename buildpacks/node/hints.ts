import { type Environment, type FileSource, type PlanWarning, procfileIgnored, type ProcfileReader } from '../../src/kit/index.js';
import { type BuildContext, buildCommand, buildHookFix, buildNotRun, buildRuns } from './build-script.js';
import { NodeErrors } from './errors.js';
import { type DetectedFramework, detectFramework, missingStartAdvice, signatureFiles } from './frameworks.js';
import { toolRequestWarnings, type VersionFiles, versionFileWarnings } from './ignored-requests.js';
import type { PublishedVersion } from './published-version.js';
import type { PackageJson } from './package-json.js';
import { resolveDevDependencies } from './resolve-dev-dependencies.js';
import { LOCKFILES, resolveBuildTool, type BuildToolResolution } from './resolve-build-tool.js';
import { resolveStart, type StartResolution } from './resolve-start.js';

/**
 * Where the service's rules would leave an application stuck without a word:
 * the warnings (and the missing-start fix) that name what to set. The I/O edge
 * of framework detection, the build script, the Procfile and the ignored
 * version requests; the decisions themselves are pure functions of their modules.
 */

const nonEmpty = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value);

/** The framework package.json reveals, with the files its signatures look for. */
export async function findFramework(files: FileSource, pkg: PackageJson): Promise<DetectedFramework | undefined> {
  const present = new Set<string>();
  for (const file of signatureFiles(pkg)) if (await files.exists(file)) present.add(file);
  return detectFramework(pkg, present);
}

function buildContext(pkg: PackageJson, env: Environment, tool: Pick<BuildToolResolution, 'manager' | 'customCommand'>, framework: DetectedFramework | undefined, devInstalled: boolean): BuildContext {
  return {
    scripts: pkg.scripts ?? {},
    manager: tool.manager,
    customCommand: tool.customCommand,
    preBuildHook: nonEmpty(env.get('CC_PRE_BUILD_HOOK')),
    postBuildHook: nonEmpty(env.get('CC_POST_BUILD_HOOK')),
    preRunHook: nonEmpty(env.get('CC_PRE_RUN_HOOK')),
    runCommand: nonEmpty(env.get('CC_RUN_COMMAND')),
    framework,
    devInstalled,
    devDependencies: pkg.devDependencies,
  };
}

/**
 * The start command (resolveStart); for a framework the table knows, a missing
 * one is refused with the command its production server needs and the build
 * hook. The package manager is only looked for then, to spell that hook.
 */
export async function resolveStartWithAdvice(files: FileSource, pkg: PackageJson, env: Environment, framework: DetectedFramework | undefined): Promise<StartResolution> {
  try {
    return resolveStart(pkg, env.get('CC_RUN_COMMAND'));
  } catch (error) {
    if (framework === undefined || !NodeErrors.NODE_NO_START_COMMAND.is(error)) throw error;
    const lockfiles: string[] = [];
    for (const l of LOCKFILES) if (await files.exists(l.file)) lockfiles.push(l.file);
    // Their own errors come once the start is fixed; meanwhile npm spells the hook and devDependencies count as installed.
    let tool: Pick<BuildToolResolution, 'manager' | 'customCommand'> = { manager: 'npm' };
    let devInstalled = true;
    try {
      tool = resolveBuildTool({ ccNodeBuildTool: env.get('CC_NODE_BUILD_TOOL'), ccCustomBuildTool: env.get('CC_CUSTOM_BUILD_TOOL'), lockfiles, packageManager: pkg.packageManager });
      devInstalled = resolveDevDependencies({ ccNodeDevDependencies: env.get('CC_NODE_DEV_DEPENDENCIES'), nodeEnv: env.get('NODE_ENV') }).install;
    } catch {}
    const context = buildContext(pkg, env, tool, framework, devInstalled);
    const command = buildCommand(context);
    const advice = missingStartAdvice(framework, pkg, buildRuns(context) || command === undefined ? undefined : buildHookFix(context, command));
    throw NodeErrors.NODE_NO_START_COMMAND.create({ ...advice, file: 'package.json' });
  }
}

/** The Procfile as the Node.js buildpack would have to read it: web is the start command, CC_RUN_COMMAND replaces it. */
function procfileReader(start: StartResolution, pkg: PackageJson, env: Environment): ProcfileReader {
  const runs = start.command.kind === 'exec' ? start.command.argv.join(' ') : start.command.script;
  const words = (text: string) => text.trim().replace(/\s+/g, ' ');
  const byScript = start.decision.source === 'package.json scripts.start';
  const main = start.mainFile === undefined ? undefined : words(start.mainFile).replace(/^\.\//, '').replace(/\.js$/, '');
  return {
    buildpack: 'node',
    webCommand: runs,
    webVariable: 'CC_RUN_COMMAND',
    webMatches: (command) => {
      const line = words(command);
      if (start.decision.source === 'env CC_RUN_COMMAND' || line === words(runs)) return true;
      if (byScript && (/^(npm|yarn|pnpm|bun)( run)? start$/.test(line) || line === words(pkg.scripts?.start ?? ''))) return true;
      return main !== undefined && /^node /.test(line) && line.slice(5).replace(/^\.\//, '').replace(/\.js$/, '') === main;
    },
    variable: (name) => env.get(name),
    variableNames: env.list().map((e) => e.name),
  };
}

export interface HintInputs {
  readonly pkg: PackageJson;
  readonly env: Environment;
  readonly framework: DetectedFramework | undefined;
  readonly tool: BuildToolResolution;
  readonly devInstalled: boolean;
  readonly start: StartResolution;
  /** The Node.js deployed, and its decision. */
  readonly node: { readonly version: string; readonly source: string; readonly requested: string | null };
  readonly versionFiles: VersionFiles;
  /** The published package-manager versions (the inventory's tools). */
  readonly tools: Readonly<Record<string, readonly PublishedVersion[]>>;
  /** The Procfile's text, when there is one. */
  readonly procfile: string | undefined;
}

/** The warnings of this module, in the order a reader acts on them: the build, the start, then the versions. */
export function applicationHints(input: HintInputs): PlanWarning[] {
  const { pkg, env, tool } = input;
  const warnings: PlanWarning[] = [];
  const build = buildNotRun(buildContext(pkg, env, tool, input.framework, input.devInstalled));
  if (build) warnings.push(build);
  const procfile = procfileIgnored(input.procfile, procfileReader(input.start, pkg, env));
  if (procfile) warnings.push(procfile);
  warnings.push(...versionFileWarnings(input.versionFiles, input.node));
  warnings.push(...toolRequestWarnings(pkg, { manager: tool.manager, managerVersion: tool.managerVersion, requested: nonEmpty(env.get('CC_NODE_BUILD_TOOL'))?.trim() }, input.tools));
  return warnings;
}
