import semver from 'semver';
import type { StepRun } from '../../src/kit/index.js';
import { yarnReleasePath } from './tools.js';
import type { BuildToolResolution } from './resolve-build-tool.js';

export interface InstallCommand {
  readonly run: StepRun;
  /** Variables for the install step only (never secrets). */
  readonly env: Readonly<Record<string, string>>;
  /** What the flags mean, for the plan. */
  readonly description: string;
}

/**
 * The command that installs the dependencies, saying explicitly whether
 * devDependencies are wanted: the tools disagree on what NODE_ENV alone means
 * (pnpm 10, bun and Yarn berry install them anyway), and rule 8 fixes the result.
 */
export function installCommand(tool: BuildToolResolution, installDev: boolean, npmVersion: string): InstallCommand {
  const modernNpm = semver.gte(npmVersion, '7.0.0');
  const npmDev = modernNpm ? [installDev ? '--include=dev' : '--omit=dev'] : [installDev ? '--production=false' : '--production'];
  const dev = installDev ? 'with devDependencies' : 'without devDependencies';
  switch (tool.manager) {
    case 'npm': {
      const verb = tool.tool === 'npm-ci' ? 'ci' : 'install';
      return { run: exec('npm', verb, ...npmDev), env: {}, description: `npm ${verb} ${dev}; npm runs the package's preinstall, install and postinstall scripts` };
    }
    case 'yarn1':
      return { run: exec('yarn', 'install', '--non-interactive', `--production=${!installDev}`), env: {}, description: `Yarn 1 ${dev}; Yarn runs the package's install scripts` };
    case 'yarn2':
      return { run: exec('node', yarnReleasePath('yarn2'), 'install'), env: yarnEnv, description: `Yarn 2 through yarnPath ${dev}; Yarn runs the package's install scripts` };
    case 'yarn-berry': {
      const release = yarnReleasePath('yarn-berry');
      return {
        run: installDev ? exec('node', release, 'install') : exec('node', release, 'workspaces', 'focus', '--all', '--production'),
        env: yarnEnv,
        description: `Yarn ${tool.managerVersion} through yarnPath ${dev}${installDev ? '' : " (`workspaces focus --production` is Yarn's production install)"}; Yarn runs the package's install scripts`,
      };
    }
    case 'pnpm':
      return {
        run: exec('pnpm', 'install', installDev ? '--prod=false' : '--prod'),
        // pnpm would otherwise fetch the version packageManager names and run that instead of the one planned.
        env: { npm_config_manage_package_manager_versions: 'false' },
        description: `pnpm ${dev}; pnpm runs the package's install scripts`,
      };
    case 'bun':
      return { run: exec('bun', 'install', ...(installDev ? [] : ['--production'])), env: {}, description: `bun ${dev}; bun runs the package's install scripts` };
    case 'custom':
      return {
        run: { kind: 'shell', script: tool.customCommand as string },
        env: {},
        description: 'the command in CC_CUSTOM_BUILD_TOOL, as written (it decides about devDependencies and scripts itself)',
      };
  }
}

const yarnEnv = { YARN_ENABLE_TELEMETRY: '0', YARN_ENABLE_PROGRESS_BARS: 'false' };

function exec(...argv: string[]): StepRun {
  return { kind: 'exec', argv };
}
