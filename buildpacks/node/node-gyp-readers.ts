import semver from 'semver';

/**
 * node-gyp 11 and later read their options from npm_package_config_node_gyp_*
 * as well as npm_config_* (npm 11 deprecated arbitrary npm_config_ names and
 * warns about each on every call); older releases read only npm_config_*.
 */
const FIRST_READING_PACKAGE_CONFIG = '11.0.0';

/**
 * Whether an npm lock file installs a node-gyp that reads only npm_config_nodedir:
 * a dependency that brings its own, older node-gyp (sqlite3 5 has node-gyp 8
 * among its optional dependencies) calls it from its install script. Without a
 * lock file that can be read (none, or npm-shrinkwrap/package-lock not JSON) the
 * answer is yes: npm may resolve such a dependency.
 */
export function lockInstallsOldNodeGyp(lockText: string | undefined): boolean {
  if (lockText === undefined) return true;
  let lock: unknown;
  try {
    lock = JSON.parse(lockText);
  } catch {
    return true;
  }
  const versions = nodeGypVersions(lock);
  if (versions === undefined) return true;
  return versions.some((v) => semver.valid(v) === null || semver.lt(v, FIRST_READING_PACKAGE_CONFIG));
}

/** Every node-gyp version a lock file of version 1, 2 or 3 names; undefined when it has neither shape. */
function nodeGypVersions(lock: unknown): string[] | undefined {
  if (typeof lock !== 'object' || lock === null) return undefined;
  const { packages, dependencies } = lock as { packages?: unknown; dependencies?: unknown };
  if (isRecord(packages)) {
    return Object.entries(packages)
      .filter(([path]) => path === 'node_modules/node-gyp' || path.endsWith('/node_modules/node-gyp'))
      .map(([, entry]) => String(isRecord(entry) ? entry.version : ''));
  }
  if (isRecord(dependencies)) return versionsInTree(dependencies);
  return undefined;
}

/** Lock file version 1: node-gyp anywhere in the nested dependencies. */
function versionsInTree(dependencies: Record<string, unknown>): string[] {
  return Object.entries(dependencies).flatMap(([name, entry]) => {
    if (!isRecord(entry)) return [];
    const own = name === 'node-gyp' ? [String(entry.version ?? '')] : [];
    return isRecord(entry.dependencies) ? [...own, ...versionsInTree(entry.dependencies)] : own;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
