import { decide, type Decision } from '../../src/kit/index.js';
import { RubyErrors } from './errors.js';
import { appRelativePath, isSafeUrlPath } from './nginx-values.js';

export interface StaticFiles {
  /** URL prefix with leading and trailing "/", e.g. "/static/". */
  readonly prefix: string;
  /** Directory relative to the application root, e.g. "public". */
  readonly directory: string;
}

export interface StaticFilesResolution {
  readonly settings: StaticFiles | undefined;
  readonly decision: Decision;
}

/**
 * STATIC_FILES_PATH and STATIC_URL_PREFIX (specification, Ruby rule 7 and
 * Errors): together they make nginx serve a directory of the application under a
 * URL prefix, without reaching Rails. The prefix "/" fails the deployment; the
 * path is from the application root ("/public/" is <app>/public) and must name a
 * directory inside it, other than the root itself (that would publish the
 * source, its secrets and runplan's own files).
 */
export async function resolveStaticFiles(pathValue: string | undefined, prefixValue: string | undefined, isDirectory: (path: string) => Promise<boolean>): Promise<StaticFilesResolution> {
  const path = pathValue?.trim() || undefined;
  const prefix = prefixValue?.trim() || undefined;
  const none = (reason: string): StaticFilesResolution => ({
    settings: undefined,
    decision: decide({ id: 'ruby.static-files', subject: 'Static files served by nginx', resolved: '(none)', reason }),
  });
  if (prefix === '/' || (prefix !== undefined && /^\/+$/.test(prefix))) {
    throw RubyErrors.RUBY_STATIC_PREFIX_ROOT.create({
      message: `STATIC_URL_PREFIX=${JSON.stringify(prefixValue)}: static files cannot take the whole site, which the application serves.`,
      variable: 'STATIC_URL_PREFIX',
    });
  }
  if (path === undefined && prefix === undefined) return none('neither STATIC_FILES_PATH nor STATIC_URL_PREFIX is set: every request goes to the application');
  if (path === undefined || prefix === undefined) {
    const missing = path === undefined ? 'STATIC_FILES_PATH' : 'STATIC_URL_PREFIX';
    throw RubyErrors.RUBY_STATIC_SETTING_INVALID.create({
      message: `${path === undefined ? 'STATIC_URL_PREFIX' : 'STATIC_FILES_PATH'} is set but ${missing} is not; the two work together.`,
      variable: missing,
    });
  }
  const normalisedPrefix = `/${prefix.replace(/^\/+|\/+$/g, '')}/`;
  if (!isSafeUrlPath(normalisedPrefix)) {
    throw RubyErrors.RUBY_STATIC_SETTING_INVALID.create({
      message: `STATIC_URL_PREFIX=${JSON.stringify(prefix)} is not a URL path such as /static/ (letters, digits, "-", "_", ".", "~", "/").`,
      variable: 'STATIC_URL_PREFIX',
    });
  }
  const directory = appRelativePath(path);
  if (directory === undefined) {
    throw RubyErrors.RUBY_STATIC_SETTING_INVALID.create({
      message: `STATIC_FILES_PATH=${JSON.stringify(path)} leaves the application or holds characters other than letters, digits, "-", "_", "." and "/".`,
      variable: 'STATIC_FILES_PATH',
    });
  }
  if (directory === '' || directory.split('/').some((p) => p.startsWith('.'))) {
    throw RubyErrors.RUBY_STATIC_SETTING_INVALID.create({
      message: `STATIC_FILES_PATH=${JSON.stringify(path)} would publish ${directory === '' ? 'the whole application (its source and secrets)' : 'a hidden directory'}; name a directory of static files such as /public/.`,
      variable: 'STATIC_FILES_PATH',
    });
  }
  if (!(await isDirectory(directory))) {
    throw RubyErrors.RUBY_STATIC_SETTING_INVALID.create({
      message: `STATIC_FILES_PATH=${JSON.stringify(path)}: ${directory} is not a directory of the application.`,
      variable: 'STATIC_FILES_PATH',
      file: directory,
    });
  }
  return {
    settings: { prefix: normalisedPrefix, directory },
    decision: decide({
      id: 'ruby.static-files',
      subject: 'Static files served by nginx',
      requests: [{ source: 'env STATIC_FILES_PATH + STATIC_URL_PREFIX', value: `${path} under ${prefix}` }],
      resolved: `${normalisedPrefix} → ${directory}/`,
      reason: 'nginx serves the directory under the prefix itself; those requests never reach the application (Ruby rule 7)',
    }),
  };
}
