import { join, resolve } from 'node:path';
import type { Environment } from '../env/assemble.js';
import { mergeEnvironment } from '../lowering/lower.js';

/**
 * Variables of the machine runplan runs on that builds and processes need
 * (PATH to find programs, HOME for tool configuration, locale, certificate
 * authorities and proxies). Everything else
 * of runplan's own environment — npm_config_* when started through npm, its
 * own NODE_OPTIONS — stays out of the application.
 */
export const SYSTEM_VARIABLES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  // How this machine reaches the network: its certificate authorities and proxies. Without them a
  // runtime the build installs (which has its own npm configuration) cannot reach the registry.
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
];

/**
 * The system variables of `from`. With `tempDir`, TMPDIR points there instead: what
 * builds and applications leave in their temporary directory (npm's and Node's
 * compile caches, Yarn's shims…) is then removed with it rather than piling up in
 * the host's.
 */
export function systemEnvironment(from: NodeJS.ProcessEnv = process.env, tempDir?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of SYSTEM_VARIABLES) {
    const value = from[name];
    if (value !== undefined) out[name] = value;
  }
  if (tempDir !== undefined) out.TMPDIR = tempDir;
  return out;
}

/**
 * The environment of a step or process on this machine: system variables, then
 * the deployment environment, then the plan's overrides, with `pathPrepend`
 * directories (relative ones in `appDir`) first on PATH — mergeEnvironment's
 * rule (src/lowering/lower.ts), for a step that was not lowered.
 */
export function childEnvironment(
  appDir: string,
  env: Environment,
  overrides: Readonly<Record<string, string>>,
  pathPrepend: readonly string[],
  system: Record<string, string> = systemEnvironment(),
): Record<string, string> {
  return mergeEnvironment(system, env.toRecord(), { env: overrides, pathPrepend: pathPrepend.map((p) => resolve(appDir, p)) });
}

const PACKAGE_MANAGER_CACHES: readonly (readonly [string, string])[] = [
  ['XDG_CACHE_HOME', '_xdg-cache'],
  ['XDG_DATA_HOME', '_xdg-data'],
  ['YARN_GLOBAL_FOLDER', '_yarn-berry'],
  ['BUN_INSTALL_CACHE_DIR', '_bun'],
];

/** Where npm may write during one build: never the user's shared ~/.npm. */
export interface NpmDirectories {
  /** The build's private temporary directory: npm's debug logs go under it and are removed with it. */
  readonly tempDir?: string | undefined;
  /** A cache of this application only, under runplan's cache directory, kept between its builds. */
  readonly cacheDir?: string | undefined;
}

/**
 * `env` with npm's logs and cache moved out of the shared ~/.npm: npm's debug logs
 * hold registry error bodies (which may echo a token) and its cache is shared by
 * every application of the user, so one app's install could feed another's. The
 * names win over any spelling the application set (npm reads them case-insensitively).
 */
export function isolateNpm(env: Record<string, string>, dirs: NpmDirectories): Record<string, string> {
  const out = { ...env };
  const set = (name: string, value: string | undefined) => {
    if (value === undefined) return;
    for (const key of Object.keys(out)) if (key.toLowerCase() === name.toLowerCase()) delete out[key];
    out[name] = value;
  };
  set('npm_config_logs_dir', dirs.tempDir === undefined ? undefined : join(dirs.tempDir, 'npm-logs'));
  set('npm_config_cache', dirs.cacheDir);
  if (dirs.cacheDir !== undefined) {
    // The other package managers' caches and stores, beside npm's, for the same reason. Yarn
    // classic and pnpm's metadata follow XDG_CACHE_HOME, pnpm's store XDG_DATA_HOME; Yarn
    // Berry's global cache has its own name (YARN_CACHE_FOLDER is left alone: for Berry it
    // would move a project's committed .yarn/cache), and so has bun's.
    for (const [name, sub] of PACKAGE_MANAGER_CACHES) set(name, join(dirs.cacheDir, sub));
  }
  return out;
}
