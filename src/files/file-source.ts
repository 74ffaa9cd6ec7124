/**
 * Read-only access to an application's files, so detection and planning run the
 * same on a real directory and on an in-memory tree (as Vercel's and Netlify's
 * detectors do). Paths are relative to the application root and use "/".
 */
export interface FileSource {
  /** A label for messages, e.g. the absolute root path or "memory". */
  readonly label: string;
  /** The file's text, or undefined when there is no such file. */
  readText(path: string): Promise<string | undefined>;
  /** Whether a file or directory exists at `path`. */
  exists(path: string): Promise<boolean>;
  /** Whether `path` is a directory. */
  isDirectory(path: string): Promise<boolean>;
  /** Names of the entries of a directory ("" or "." for the root); empty when it does not exist. */
  list(dir: string): Promise<string[]>;
}

/** Normalises a relative path and refuses any that climbs out of the root. */
export function normaliseRelative(path: string): string {
  const parts: string[] = [];
  for (const part of path.split(/[\\/]+/)) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) throw new Error(`path ${JSON.stringify(path)} leaves the application root`);
      parts.pop();
    } else {
      parts.push(part);
    }
  }
  return parts.join('/');
}
