import { describe, expect, it } from 'vitest';
import { healthPathsFromEnv, planHealthCheck } from '../../src/health/health-paths.js';
import { CoreErrors } from '../../src/errors/core-errors.js';

describe('health-check paths', () => {
  it('takes CC_HEALTH_CHECK_PATH and every CC_HEALTH_CHECK_PATH_<n>, ordered by n numerically', () => {
    const paths = healthPathsFromEnv(
      Object.entries({ CC_HEALTH_CHECK_PATH_10: '/ten', CC_HEALTH_CHECK_PATH_2: '/two', CC_HEALTH_CHECK_PATH: '/single', CC_HEALTH_CHECK_PATH_0: '/zero', OTHER: '/x' }),
    );
    expect(paths).toEqual([
      { path: '/single', source: 'CC_HEALTH_CHECK_PATH' },
      { path: '/zero', source: 'CC_HEALTH_CHECK_PATH_0' },
      { path: '/two', source: 'CC_HEALTH_CHECK_PATH_2' },
      { path: '/ten', source: 'CC_HEALTH_CHECK_PATH_10' },
    ]);
  });

  it('ignores empty values and keeps query strings', () => {
    expect(
      healthPathsFromEnv([
        ['CC_HEALTH_CHECK_PATH', ''],
        ['CC_HEALTH_CHECK_PATH_1', '/h?deep=1'],
      ]),
    ).toEqual([{ path: '/h?deep=1', source: 'CC_HEALTH_CHECK_PATH_1' }]);
  });

  it('refuses values that are not a URL path, naming the variable', () => {
    for (const bad of ['health', 'http://x/', '/a b', '//evil.example/']) {
      expect(() => healthPathsFromEnv([['CC_HEALTH_CHECK_PATH_3', bad]])).toThrowError(
        expect.objectContaining({ code: CoreErrors.HEALTH_CHECK_PATH_INVALID.code, variable: 'CC_HEALTH_CHECK_PATH_3' }),
      );
    }
  });

  it('refuses a suffix the specification does not define rather than leave the path unchecked', () => {
    for (const name of ['CC_HEALTH_CHECK_PATH_abc', 'CC_HEALTH_CHECK_PATH_', 'CC_HEALTH_CHECK_PATH_1a']) {
      expect(() => healthPathsFromEnv([[name, '/ready']])).toThrowError(expect.objectContaining({ code: CoreErrors.HEALTH_CHECK_PATH_NAME_INVALID.code, variable: name }));
    }
    expect(healthPathsFromEnv([['CC_HEALTH_CHECK_PATH_abc', '']])).toEqual([]);
  });

  it('uses the buildpack default only when no path is configured', () => {
    const port = planHealthCheck([], { kind: 'port', reason: 'r' }, 8080);
    expect(port).toMatchObject({ kind: 'port', paths: [], port: 8080 });
    const root = planHealthCheck([], { kind: 'http', paths: ['/'], reason: 'Play checks /' }, 9000);
    expect(root).toMatchObject({ kind: 'http', paths: [{ path: '/', source: 'default' }] });
    const configured = planHealthCheck([{ path: '/h', source: 'CC_HEALTH_CHECK_PATH' }], { kind: 'http', paths: ['/'], reason: '' }, 8080, { readyTimeoutMs: 5 });
    expect(configured).toMatchObject({ kind: 'http', paths: [{ path: '/h' }], readyTimeoutMs: 5 });
  });
});
