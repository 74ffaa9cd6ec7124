import type { DefaultHealthCheck } from '../buildpack/contract.js';
import { CoreErrors } from '../errors/core-errors.js';
import { hasUnsafeCharacters, quoteExcerpt } from '../errors/excerpt.js';
import type { HealthCheckPlan } from '../plan/schema.js';

const HEALTH_DEFAULTS = {
  readyTimeoutMs: 60_000,
  requestTimeoutMs: 5_000,
  retryDelayMs: 1_000,
} as const;

export interface HealthPath {
  readonly path: string;
  readonly source: string;
}

const NUMBERED = /^CC_HEALTH_CHECK_PATH_(\d+)$/;

/**
 * Health-check paths from the environment: CC_HEALTH_CHECK_PATH, then every
 * CC_HEALTH_CHECK_PATH_<n> ordered by n (numerically, so _10 follows _9).
 * An empty value counts as unset.
 */
export function healthPathsFromEnv(lookup: Iterable<[string, string]>): HealthPath[] {
  let single: HealthPath | undefined;
  const numbered: Array<HealthPath & { n: number }> = [];
  for (const [name, value] of lookup) {
    if (value.trim() === '') continue;
    if (name === 'CC_HEALTH_CHECK_PATH') {
      single = { path: validatePath(value, name), source: name };
      continue;
    }
    const m = NUMBERED.exec(name);
    // A path the specification does not define would go unchecked: refused, not ignored.
    if (!m && name.startsWith('CC_HEALTH_CHECK_PATH_')) {
      throw CoreErrors.HEALTH_CHECK_PATH_NAME_INVALID.create({
        message: `${name} is not a health-check variable: after CC_HEALTH_CHECK_PATH_ the specification allows only a number, so its path would never be checked.`,
        variable: name,
      });
    }
    if (m) numbered.push({ path: validatePath(value, name), source: name, n: Number(m[1]) });
  }
  numbered.sort((a, b) => a.n - b.n);
  return [...(single ? [single] : []), ...numbered.map(({ path, source }) => ({ path, source }))];
}

function validatePath(raw: string, variable: string): string {
  const path = raw.trim();
  if (!isHealthPath(path)) {
    throw CoreErrors.HEALTH_CHECK_PATH_INVALID.create({
      message: `${variable}=${quoteExcerpt(raw)} is not a URL path: it must start with a single "/" and contain no spaces or control characters.`,
      variable,
    });
  }
  return path;
}

/** A URL path runplan requests and prints on a line of its own: one "/" first, no space, no control or invisible character. */
export function isHealthPath(path: string): boolean {
  return path.startsWith('/') && !path.startsWith('//') && !/\s/.test(path) && !hasUnsafeCharacters(path);
}

/** The plan's health check: configured paths, else the buildpack's default behaviour. */
export function planHealthCheck(
  configured: readonly HealthPath[],
  fallback: DefaultHealthCheck,
  port: number,
  timing: Partial<Pick<HealthCheckPlan, 'readyTimeoutMs' | 'requestTimeoutMs' | 'retryDelayMs'>> = {},
): HealthCheckPlan {
  const base = { ...HEALTH_DEFAULTS, ...timing, port };
  if (configured.length > 0) {
    return {
      ...base,
      kind: 'http',
      paths: [...configured],
      reason: `every configured path must answer exactly 200 (${configured.map((p) => p.source).join(', ')})`,
    };
  }
  if (fallback.kind === 'http') {
    return { ...base, kind: 'http', paths: fallback.paths.map((path) => ({ path, source: 'default' })), reason: fallback.reason };
  }
  return { ...base, kind: 'port', paths: [], reason: fallback.reason };
}
