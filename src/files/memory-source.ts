import { normaliseRelative, type FileSource } from './file-source.js';

/** A FileSource over an in-memory tree: `{ 'package.json': '{…}', 'src/index.js': '…' }`. */
export class MemorySource implements FileSource {
  readonly label: string;
  private readonly files = new Map<string, string>();

  constructor(files: Readonly<Record<string, string>>, label = 'memory') {
    this.label = label;
    for (const [path, text] of Object.entries(files)) this.files.set(normaliseRelative(path), text);
  }

  async readText(path: string): Promise<string | undefined> {
    return this.files.get(normaliseRelative(path));
  }

  async exists(path: string): Promise<boolean> {
    const rel = normaliseRelative(path);
    return rel === '' || this.files.has(rel) || this.isDir(rel);
  }

  async isDirectory(path: string): Promise<boolean> {
    const rel = normaliseRelative(path);
    return rel === '' || this.isDir(rel);
  }

  async list(dir: string): Promise<string[]> {
    const rel = normaliseRelative(dir);
    const prefix = rel === '' ? '' : `${rel}/`;
    const names = new Set<string>();
    for (const path of this.files.keys()) {
      if (path.startsWith(prefix)) names.add(path.slice(prefix.length).split('/')[0] ?? '');
    }
    names.delete('');
    return [...names].sort();
  }

  private isDir(rel: string): boolean {
    const prefix = `${rel}/`;
    for (const path of this.files.keys()) if (path.startsWith(prefix)) return true;
    return false;
  }
}
