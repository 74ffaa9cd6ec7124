import { normaliseRelative, type FileSource, type ReadOptions } from './file-source.js';

/**
 * The view of one folder of another FileSource (APP_FOLDER over an in-memory
 * tree): paths are relative to the folder, and cannot climb out of it.
 */
export class SubdirectorySource implements FileSource {
  readonly label: string;

  constructor(
    private readonly parent: FileSource,
    private readonly folder: string,
  ) {
    this.label = `${parent.label}/${folder}`;
  }

  private inParent(path: string): string {
    const rel = normaliseRelative(path);
    return rel === '' ? this.folder : `${this.folder}/${rel}`;
  }

  readText(path: string, options?: ReadOptions): Promise<string | undefined> {
    return this.parent.readText(this.inParent(path), options);
  }

  exists(path: string): Promise<boolean> {
    return this.parent.exists(this.inParent(path));
  }

  isDirectory(path: string): Promise<boolean> {
    return this.parent.isDirectory(this.inParent(path));
  }

  list(dir: string): Promise<string[]> {
    return this.parent.list(this.inParent(dir));
  }
}
