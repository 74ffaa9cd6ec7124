import { assignmentExcerpt, type PlanWarning, quoteExcerpt } from '../../src/kit/index.js';
import { NodeWarnings } from './errors.js';
import type { DetectedFramework } from './frameworks.js';
import type { PackageManager } from './resolve-build-tool.js';

/** How the package manager that runs the build spells "run this package.json script" (custom commands: npm, which is always there). */
export function runScriptCommand(manager: PackageManager, script: string): string {
  switch (manager) {
    case 'yarn1':
    case 'yarn2':
    case 'yarn-berry':
      return `yarn run ${script}`;
    case 'pnpm':
      return `pnpm run ${script}`;
    case 'bun':
      return `bun run ${script}`;
    default:
      return `npm run ${script}`;
  }
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether a shell command runs one of these package.json scripts: `npm run x`
 * (`run-script`, options between), `yarn [run] x`, `pnpm [run] x`, `bun run x`
 * (`bun x` is bun's own command), `node --run x`.
 */
export function runsScript(command: string, names: readonly string[]): boolean {
  if (names.length === 0) return false;
  const runner = String.raw`(?:npm(?:\s+-\S+)*\s+(?:run|run-script)|pnpm(?:\s+-\S+)*(?:\s+run)?|yarn(?:\s+-\S+)*(?:\s+run)?|bun(?:\s+-\S+)*\s+run|node\s+--run)`;
  const pattern = new RegExp(String.raw`(?:^|[\s;&|(])${runner}\s+(?:-\S+\s+)*(?:${names.map(escapeRegExp).join('|')})(?=$|[\s;&|)])`);
  return pattern.test(command);
}

/**
 * Scripts followed, and how much of each is read: far more than any real
 * package.json has, and a hostile one of thousands of chained scripts stays a
 * few thousand regular-expression tests.
 */
const MAX_SCRIPTS = 100;
const MAX_SCRIPT_CHARS = 2000;
const MAX_NAME_CHARS = 100;

/** The scripts that run `target`, directly or through one another, `target` included. */
export function scriptsRunning(scripts: Readonly<Record<string, unknown>>, target: string): string[] {
  const texts = Object.entries(scripts)
    .filter((e): e is [string, string] => typeof e[1] === 'string' && e[0].length <= MAX_NAME_CHARS)
    .slice(0, MAX_SCRIPTS)
    .map(([name, text]) => [name, text.slice(0, MAX_SCRIPT_CHARS)] as const);
  const literal = (typeof scripts[target] === 'string' ? (scripts[target] as string) : '').trim().slice(0, MAX_SCRIPT_CHARS);
  const found = [target];
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, text] of texts) {
      if (found.includes(name)) continue;
      if (runsScript(text, found) || (literal !== '' && text.includes(literal))) {
        found.push(name);
        grew = true;
      }
    }
  }
  return found;
}

/** What, besides the service's build, could run the application's build script. */
export interface BuildContext {
  readonly scripts: Readonly<Record<string, unknown>>;
  readonly manager: PackageManager;
  /** CC_CUSTOM_BUILD_TOOL when it is the build tool. */
  readonly customCommand?: string | undefined;
  readonly preBuildHook?: string | undefined;
  readonly postBuildHook?: string | undefined;
  readonly preRunHook?: string | undefined;
  /** CC_RUN_COMMAND, when set (scripts.start and prestart then do not run). */
  readonly runCommand?: string | undefined;
  readonly framework?: DetectedFramework | undefined;
  /** Whether this build installs devDependencies. */
  readonly devInstalled: boolean;
  readonly devDependencies?: Readonly<Record<string, string>> | undefined;
}

/** Root scripts a package manager's install runs, and the scripts around the start. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'];
const START_SCRIPTS = ['prestart', 'start'];

/** Whether something in the deployment runs the build script after the dependencies are installed. */
export function buildRuns(context: BuildContext): boolean {
  const runners = scriptsRunning(context.scripts, 'build');
  const literal = typeof context.scripts.build === 'string' ? context.scripts.build.trim() : '';
  const runs = (command: string | undefined) => command !== undefined && (runsScript(command, runners) || (literal !== '' && command.includes(literal)));
  const scriptRuns = (names: readonly string[]) => names.some((n) => runners.includes(n) && typeof context.scripts[n] === 'string');
  return (
    scriptRuns(INSTALL_SCRIPTS) ||
    runs(context.postBuildHook) ||
    runs(context.preRunHook) ||
    (context.manager === 'custom' && runs(context.customCommand)) ||
    (context.runCommand === undefined ? scriptRuns(START_SCRIPTS) : runs(context.runCommand))
  );
}

/** The devDependency the build script needs, when this build leaves devDependencies out. */
function missingDevTool(context: BuildContext, build: string): string | undefined {
  if (context.devInstalled) return undefined;
  if (context.framework?.dev) return context.framework.dependency;
  const tool = build.trim().split(/\s+/)[0] ?? '';
  return Object.keys(context.devDependencies ?? {}).find((name) => name === tool || name.endsWith(`/${tool}`));
}

/** The command that builds: the build script through the package manager, or the framework's own build when there is no script. */
export function buildCommand(context: BuildContext): string | undefined {
  if (typeof context.scripts.build === 'string' && context.scripts.build.trim() !== '') return runScriptCommand(context.manager, 'build');
  return context.framework ? `npx ${context.framework.signature.build}` : undefined;
}

/** The exact CC_POST_BUILD_HOOK that runs the build, keeping a hook the application already has; and what else it needs. */
export function buildHookFix(context: BuildContext, command: string): string {
  const existing = context.postBuildHook?.trim();
  const hook = existing ? `${existing} && ${command}` : command;
  const dev = missingDevTool(context, typeof context.scripts.build === 'string' ? context.scripts.build : (context.framework?.signature.build ?? ''));
  const devFix = dev === undefined ? '' : `, and CC_NODE_DEV_DEPENDENCIES=install: the build needs ${dev}, a devDependency this build leaves out`;
  return `Set ${assignmentExcerpt('CC_POST_BUILD_HOOK', hook)} (it runs once the dependencies are installed)${devFix}.`;
}

/**
 * NODE_BUILD_NOT_RUN: package.json has a build script, and nothing of the
 * deployment runs it after the dependencies are installed — the service runs
 * the install and scripts.install (rule 4), never scripts.build — so the
 * application would start without what its build writes. Undefined when an
 * install script, a hook, the custom build tool or the start runs it.
 */
export function buildNotRun(context: BuildContext): PlanWarning | undefined {
  const build = context.scripts.build;
  if (typeof build !== 'string' || build.trim() === '' || buildRuns(context)) return undefined;
  const runners = scriptsRunning(context.scripts, 'build');
  const early = context.preBuildHook !== undefined && (runsScript(context.preBuildHook, runners) || context.preBuildHook.includes(build.trim()));
  const framework = context.framework?.signature;
  const consequence = framework ? `; ${framework.name} then has no ${framework.output}, the folder its build writes` : '';
  return NodeWarnings.NODE_BUILD_NOT_RUN.create({
    message: `package.json scripts.build (${quoteExcerpt(build)}) does not run: the service installs the dependencies and runs scripts.install (rule 4), never scripts.build, and ${
      early ? 'only CC_PRE_BUILD_HOOK runs it, before the dependencies are installed' : 'no hook or install script runs it'
    }${consequence}.`,
    file: 'package.json',
    variable: 'CC_POST_BUILD_HOOK',
    fix: buildHookFix(context, runScriptCommand(context.manager, 'build')),
  });
}
