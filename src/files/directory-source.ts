import { readdir, realpath, stat } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { isMissing, readFileInside, realPathInside, unreadable } from './app-path.js';
import { MAX_APP_FILE_BYTES, normaliseRelative, type FileSource, type ReadOptions } from './file-source.js';

/**
 * A FileSource over a directory on disk. Every path is resolved after following
 * symbolic links and must stay inside the directory (src/files/app-path.ts):
 * the application is untrusted, the host's files are not its to read.
 */
export class DirectorySource implements FileSource {
  readonly root: string;
  readonly label: string;
  private realRoot: Promise<string> | undefined;

  constructor(root: string) {
    this.root = resolve(root);
    this.label = this.root;
  }

  /** Absolute path of a relative one; never outside the root (lexically: links are checked when reading). */
  absolute(path: string): string {
    const rel = normaliseRelative(path);
    return rel === '' ? this.root : `${this.root}${sep}${rel}`;
  }

  /** The root with its own links resolved (links above the application are the host's and fine); as given when it does not exist, so that every file is then absent. */
  private resolvedRoot(): Promise<string> {
    this.realRoot ??= realpath(this.root).catch((error: unknown) => {
      if (isMissing(error)) return this.root;
      throw error;
    });
    return this.realRoot;
  }

  /** The real path of `path`, undefined when absent; a coded error when it leads outside. */
  private async real(path: string): Promise<string | undefined> {
    return realPathInside(await this.resolvedRoot(), normaliseRelative(path));
  }

  async readText(path: string, options: ReadOptions = {}): Promise<string | undefined> {
    return readFileInside(await this.resolvedRoot(), normaliseRelative(path), options.maxBytes ?? MAX_APP_FILE_BYTES);
  }

  async exists(path: string): Promise<boolean> {
    return (await this.real(path)) !== undefined;
  }

  async isDirectory(path: string): Promise<boolean> {
    const real = await this.real(path);
    if (real === undefined) return false;
    try {
      return (await stat(real)).isDirectory();
    } catch (error) {
      if (isMissing(error)) return false;
      throw unreadable(normaliseRelative(path), error);
    }
  }

  async list(dir: string): Promise<string[]> {
    const real = await this.real(dir);
    if (real === undefined) return [];
    try {
      return (await readdir(real)).sort();
    } catch (error) {
      if (isMissing(error)) return [];
      throw unreadable(normaliseRelative(dir), error);
    }
  }
}
