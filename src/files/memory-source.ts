import { CoreErrors } from '../errors/core-errors.js';
import { MAX_APP_FILE_BYTES, normaliseRelative, type FileSource, type ReadOptions } from './file-source.js';

/** A FileSource over an in-memory tree: `{ 'package.json': '{…}', 'src/index.js': '…' }`. */
export class MemorySource implements FileSource {
  readonly label: string;
  private readonly files = new Map<string, string>();

  constructor(files: Readonly<Record<string, string>>, label = 'memory') {
    this.label = label;
    for (const [path, text] of Object.entries(files)) this.files.set(normaliseRelative(path), text);
  }

  async readText(path: string, options: ReadOptions = {}): Promise<string | undefined> {
    const rel = normaliseRelative(path);
    const text = this.files.get(rel);
    const maxBytes = options.maxBytes ?? MAX_APP_FILE_BYTES;
    // The same bound as on disk, so that planning behaves alike on both.
    if (text !== undefined && Buffer.byteLength(text) > maxBytes) {
      throw CoreErrors.APP_FILE_TOO_LARGE.create({ message: `${rel} is larger than ${maxBytes} bytes, more than runplan reads from such a file.`, file: rel, details: { maxBytes } });
    }
    return text;
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
