import { readdirSync, realpathSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { isMissing, readFileInsideFast, realPathInsideSync, unreadable } from './app-path.js';
import { MAX_APP_FILE_BYTES, normaliseRelative, type FileSource, type ReadOptions } from './file-source.js';

/**
 * A FileSource over a directory on disk. Every path is resolved after following
 * symbolic links and must stay inside the directory (src/files/app-path.ts):
 * the application is untrusted, the host's files are not its to read.
 *
 * Planning asks for a few small files, most of which do not exist (lock files of
 * other tools, version files): the calls are made synchronously (an asynchronous
 * one costs a thread-pool hand-off each, the bulk of a plan's time), and a name
 * absent from the root's listing, read once, is answered without a call.
 */
export class DirectorySource implements FileSource {
  readonly root: string;
  readonly label: string;
  private realRoot: string | undefined;
  private readonly looked: Set<string> | undefined;

  /** `lookedAt`: where to note the absolute path of everything this source reads, lists or looks for (what a plan made from it depends on). */
  constructor(root: string, options: { lookedAt?: Set<string> } = {}) {
    this.root = resolve(root);
    this.label = this.root;
    this.looked = options.lookedAt;
  }

  /** Absolute path of a relative one; never outside the root (lexically: links are checked when reading). */
  absolute(path: string): string {
    const rel = normaliseRelative(path);
    return rel === '' ? this.root : `${this.root}${sep}${rel}`;
  }

  /** The root with its own links resolved (links above the application are the host's and fine); as given when it does not exist, so that every file is then absent. */
  resolvedRoot(): string {
    if (this.realRoot === undefined) {
      try {
        this.realRoot = realpathSync.native(this.root);
      } catch (error) {
        if (!isMissing(error)) throw error;
        this.realRoot = this.root;
      }
    }
    return this.realRoot;
  }

  private note(root: string, rel: string): void {
    this.looked?.add(rel === '' ? root : `${root}/${rel}`);
  }

  /** Names at the top of the application, listed once (planning looks there for most of what it reads). */
  private topNames(realRoot: string): Set<string> | undefined {
    if (this.top === undefined) {
      try {
        this.top = new Set(readdirSync(realRoot));
      } catch {
        // Unreadable or absent: every question goes to the file system, which gives the coded answer.
        this.top = null;
      }
    }
    return this.top ?? undefined;
  }
  private top: Set<string> | null | undefined;

  /** Whether the path's first part is certainly absent from the root. */
  private surelyAbsent(realRoot: string, rel: string): boolean {
    if (rel === '') return false;
    const first = rel.split(sep, 1)[0] as string;
    return this.topNames(realRoot)?.has(first) === false;
  }

  /** The real path of `path`, undefined when absent; a coded error when it leads outside. */
  private async real(path: string): Promise<string | undefined> {
    const root = this.resolvedRoot();
    const rel = normaliseRelative(path);
    this.note(root, rel);
    if (this.surelyAbsent(root, rel)) return undefined;
    return realPathInsideSync(root, rel);
  }

  async readText(path: string, options: ReadOptions = {}): Promise<string | undefined> {
    const root = this.resolvedRoot();
    const rel = normaliseRelative(path);
    this.note(root, rel);
    if (this.surelyAbsent(root, rel)) return undefined;
    return readFileInsideFast(root, rel, options.maxBytes ?? MAX_APP_FILE_BYTES);
  }

  async exists(path: string): Promise<boolean> {
    return (await this.real(path)) !== undefined;
  }

  async isDirectory(path: string): Promise<boolean> {
    const real = await this.real(path);
    if (real === undefined) return false;
    try {
      return statSync(real).isDirectory();
    } catch (error) {
      if (isMissing(error)) return false;
      throw unreadable(normaliseRelative(path), error);
    }
  }

  async list(dir: string): Promise<string[]> {
    const real = await this.real(dir);
    if (real === undefined) return [];
    try {
      return readdirSync(real).sort();
    } catch (error) {
      if (isMissing(error)) return [];
      throw unreadable(normaliseRelative(dir), error);
    }
  }
}
