import { createHash } from 'node:crypto';
import type { PackageJson } from './package-json.js';

/** Fields of package.json that change what an install puts into node_modules. */
const INSTALL_FIELDS = [
  'dependencies',
  'devDependencies',
  'optionalDependencies',
  'peerDependencies',
  'bundleDependencies',
  'overrides',
  'resolutions',
  'workspaces',
  'packageManager',
  'pnpm',
] as const;
/** Root scripts an install runs; they may write into node_modules. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'] as const;

export interface DependencyKeyInput {
  readonly pkg: PackageJson;
  /** Name and text of the lockfile the install uses, if any. */
  readonly lockfile?: { readonly name: string; readonly text: string } | undefined;
  readonly nodeVersion: string;
  readonly npmVersion: string;
  readonly tool: string;
  readonly toolVersion: string | undefined;
  readonly installDev: boolean;
  /** Configuration files the tool reads (.npmrc, .yarnrc.yml) as planned, secrets as references only. */
  readonly config: readonly string[];
}

/** What the node_modules cache key covers, in words, for the plan. */
export function dependencyKeyInputs(input: DependencyKeyInput): string[] {
  return [
    input.lockfile ? `lockfile ${input.lockfile.name}` : 'package.json dependencies (no lockfile)',
    'package.json dependency fields and install scripts',
    `Node.js ${input.nodeVersion}`,
    `npm ${input.npmVersion}`,
    `build tool ${input.tool}${input.toolVersion ? ` ${input.toolVersion}` : ''}`,
    `devDependencies ${input.installDev ? 'installed' : 'not installed'}`,
    'registry configuration (.npmrc, .yarnrc.yml)',
  ];
}

/**
 * The key of the node_modules layer: a hash of everything that changes the
 * result of the install. A change to any of them rebuilds; nothing else does.
 */
export function dependencyCacheKey(input: DependencyKeyInput): string {
  const hash = createHash('sha256');
  const pkg = input.pkg as Record<string, unknown>;
  const scripts = (input.pkg.scripts ?? {}) as Record<string, string>;
  hash.update(
    JSON.stringify({
      v: 1,
      fields: INSTALL_FIELDS.map((f) => [f, pkg[f] ?? null]),
      scripts: INSTALL_SCRIPTS.map((s) => [s, scripts[s] ?? null]),
      lockfile: input.lockfile ? [input.lockfile.name, createHash('sha256').update(input.lockfile.text).digest('hex')] : null,
      node: input.nodeVersion,
      npm: input.npmVersion,
      tool: [input.tool, input.toolVersion ?? null],
      dev: input.installDev,
      config: input.config,
    }),
  );
  return hash.digest('hex');
}
