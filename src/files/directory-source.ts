import { readdir, readFile, stat } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { normaliseRelative, type FileSource } from './file-source.js';

/** A FileSource over a directory on disk. */
export class DirectorySource implements FileSource {
  readonly root: string;
  readonly label: string;

  constructor(root: string) {
    this.root = resolve(root);
    this.label = this.root;
  }

  /** Absolute path of a relative one; never outside the root. */
  absolute(path: string): string {
    const rel = normaliseRelative(path);
    return rel === '' ? this.root : `${this.root}${sep}${rel}`;
  }

  async readText(path: string): Promise<string | undefined> {
    try {
      return await readFile(this.absolute(path), 'utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async exists(path: string): Promise<boolean> {
    try {
      await stat(this.absolute(path));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async isDirectory(path: string): Promise<boolean> {
    try {
      return (await stat(this.absolute(path))).isDirectory();
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async list(dir: string): Promise<string[]> {
    try {
      return (await readdir(this.absolute(dir))).sort();
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
