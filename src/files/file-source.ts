import { CoreErrors } from '../errors/core-errors.js';
import { quoteExcerpt } from '../errors/excerpt.js';

/**
 * Read-only access to an application's files, so detection and planning run the
 * same on a real directory and on an in-memory tree (as Vercel's and Netlify's
 * detectors do). Paths are relative to the application root and use "/".
 */
export interface FileSource {
  /** A label for messages, e.g. the absolute root path or "memory". */
  readonly label: string;
  /**
   * The file's text, or undefined when there is no such file. A coded error when
   * it is not a regular file, is larger than the bound, or (on disk) is a link
   * leading outside the application.
   */
  readText(path: string, options?: ReadOptions): Promise<string | undefined>;
  /** Whether a file or directory exists at `path`. */
  exists(path: string): Promise<boolean>;
  /** Whether `path` is a directory. */
  isDirectory(path: string): Promise<boolean>;
  /** Names of the entries of a directory ("" or "." for the root); empty when it does not exist. */
  list(dir: string): Promise<string[]>;
}

/**
 * Largest application file runplan reads while planning (package.json, version
 * files, conf/application.conf…): such files are a few kilobytes, and a bound
 * keeps a hostile one from filling memory or the output.
 */
export const MAX_APP_FILE_BYTES = 4 * 1024 * 1024;
/** Lock files of large applications reach tens of megabytes; only hashed, never printed. */
export const MAX_LOCKFILE_BYTES = 128 * 1024 * 1024;

/** Options of FileSource reads. */
export interface ReadOptions {
  /** Largest size accepted, in bytes (default MAX_APP_FILE_BYTES). */
  readonly maxBytes?: number;
}

/** Normalises a relative path and refuses any that climbs out of the root. */
export function normaliseRelative(path: string): string {
  const parts: string[] = [];
  for (const part of path.split(/[\\/]+/)) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) throw CoreErrors.APP_PATH_OUTSIDE.create({ message: `${quoteExcerpt(path)} climbs out of the application with "..".`, file: quoteExcerpt(path) });
      parts.pop();
    } else {
      parts.push(part);
    }
  }
  return parts.join('/');
}
