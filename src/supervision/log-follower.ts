import { type FSWatcher, watch } from 'node:fs';
import { type FileHandle, open, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where a follower had read to: the file (by inode, which survives s6-log's renames) and the byte offset in it. */
export interface LogCheckpoint {
  readonly inode: number;
  readonly offset: number;
}

/** One line s6-log kept: when it was written, and its text. */
export interface KeptLine {
  readonly at: Date | undefined;
  readonly text: string;
}

/** s6-log's `T` stamp: an ISO 8601 date and time, then two spaces. */
const STAMP = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d+) {2}/;
const CURRENT = 'current';
/** How often the directory is looked at again, in case a file-system event was missed. */
const POLL_MS = 1_000;

/** A line as s6-log wrote it, its stamp taken off. */
function parseKeptLine(raw: string): KeptLine {
  const m = STAMP.exec(raw);
  if (m === null) return { at: undefined, text: raw };
  return { at: new Date(`${m[1]}T${(m[2] as string).slice(0, 12)}Z`), text: raw.slice(m[0].length) };
}

/**
 * Follows the log directory s6-log writes for one process (`current`, renamed
 * to `@….s` when full), from a checkpoint: every line once, in order, across
 * the renames, and from where the last reader stopped when runplan (a host's
 * serve) was away meanwhile. The checkpoint is kept in a file, so the next
 * reader resumes there.
 */
export class LogFollower {
  private handle: FileHandle | undefined;
  private inode = -1;
  private offset = 0;
  private partial = '';
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> = Promise.resolve();
  private stopped = false;
  private savedAt = 0;
  /** The checkpoint last written: an unchanged one is not written again. */
  private saved: LogCheckpoint | undefined;
  /** One buffer for all its reads: a follower of each process of fifty applications, polled each second, must not churn memory. */
  private buffer: Buffer | undefined;

  constructor(
    private readonly dir: string,
    private readonly checkpointFile: string,
    private readonly onLine: (line: KeptLine) => void,
  ) {}

  /** Reads what was written since the checkpoint (or everything, without one), then follows. */
  async start(): Promise<void> {
    const checkpoint = await readCheckpoint(this.checkpointFile);
    const earlier = checkpoint === undefined ? [] : await this.archivesFrom(checkpoint);
    for (const file of earlier) {
      await this.readWhole(file.path, file.inode === checkpoint?.inode ? checkpoint.offset : 0);
    }
    const current = await stat(join(this.dir, CURRENT)).catch(() => undefined);
    const from = current !== undefined && checkpoint !== undefined && current.ino === checkpoint.inode ? checkpoint.offset : 0;
    await this.openCurrent(from);
    await this.drain();
    try {
      this.watcher = watch(this.dir, { persistent: false }, () => this.poke());
      this.watcher.on('error', () => undefined);
    } catch {
      // The poll below still follows it.
    }
    this.timer = setInterval(() => this.poke(), POLL_MS);
    this.timer.unref();
  }

  /** Reads what was written until now (a caller that needs every line so far waits for it). */
  flush(): Promise<void> {
    this.poke();
    return this.reading;
  }

  /** Stops following, after reading what is there; the checkpoint is saved. */
  async stop(): Promise<void> {
    await this.flush();
    this.stopped = true;
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    await this.saveCheckpoint(true);
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
  }

  private poke(): void {
    if (this.stopped) return;
    this.reading = this.reading.then(() => this.drain()).catch(() => undefined);
  }

  /** The archives s6-log made after (and including) the checkpoint's file, oldest first. */
  private async archivesFrom(checkpoint: LogCheckpoint): Promise<{ path: string; inode: number }[]> {
    const names = (await readdir(this.dir).catch(() => [] as string[])).filter((n) => n.startsWith('@')).sort();
    const files = await Promise.all(names.map(async (name) => ({ path: join(this.dir, name), inode: (await stat(join(this.dir, name)).catch(() => undefined))?.ino ?? -1 })));
    const at = files.findIndex((f) => f.inode === checkpoint.inode);
    return at < 0 ? [] : files.slice(at);
  }

  private async readWhole(path: string, from: number): Promise<void> {
    const text = await readFile(path).catch(() => Buffer.alloc(0));
    this.take(text.subarray(Math.min(from, text.length)));
    this.endOfFile();
  }

  private async openCurrent(from: number): Promise<void> {
    const path = join(this.dir, CURRENT);
    const handle = await open(path, 'r').catch(() => undefined);
    if (handle === undefined) return;
    this.handle = handle;
    this.inode = (await handle.stat()).ino;
    this.offset = from;
  }

  /** Reads the open file to its end; when s6-log has renamed it meanwhile, goes on with the new `current`. */
  private async drain(): Promise<void> {
    for (;;) {
      if (this.handle === undefined) {
        await this.openCurrent(0);
        if (this.handle === undefined) return;
      }
      await this.readToEnd(this.handle);
      const current = await stat(join(this.dir, CURRENT)).catch(() => undefined);
      if (current === undefined || current.ino === this.inode) break;
      // Renamed to an archive: what was left in it is read above; the new file starts at 0.
      this.endOfFile();
      await this.handle.close().catch(() => undefined);
      this.handle = undefined;
    }
    await this.saveCheckpoint(false);
  }

  private async readToEnd(handle: FileHandle): Promise<void> {
    // Nothing new (most polls): no read at all.
    if ((await handle.stat()).size <= this.offset) return;
    this.buffer ??= Buffer.allocUnsafe(16 * 1024);
    const { buffer } = this;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
      if (bytesRead === 0) return;
      this.offset += bytesRead;
      this.take(buffer.subarray(0, bytesRead));
    }
  }

  private take(bytes: Buffer): void {
    const text = this.partial + bytes.toString('utf8');
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const raw of lines) this.onLine(parseKeptLine(raw));
  }

  /** s6-log ends every line it writes; a file that ends without one ends there all the same. */
  private endOfFile(): void {
    if (this.partial !== '') this.onLine(parseKeptLine(this.partial));
    this.partial = '';
  }

  private async saveCheckpoint(now: boolean): Promise<void> {
    const checkpoint: LogCheckpoint = { inode: this.inode, offset: this.offset - Buffer.byteLength(this.partial) };
    if (this.inode < 0 || (checkpoint.inode === this.saved?.inode && checkpoint.offset === this.saved.offset)) return;
    if (!now && Date.now() - this.savedAt < POLL_MS) return;
    this.savedAt = Date.now();
    this.saved = checkpoint;
    // Renamed into place, not synced: a checkpoint lost in a crash only reads some lines again.
    const temp = `${this.checkpointFile}.new`;
    await writeFile(temp, `${JSON.stringify(checkpoint)}\n`, { mode: 0o600 })
      .then(() => rename(temp, this.checkpointFile))
      .catch(() => undefined);
  }
}

async function readCheckpoint(file: string): Promise<LogCheckpoint | undefined> {
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as Partial<LogCheckpoint>;
    return typeof value.inode === 'number' && typeof value.offset === 'number' ? { inode: value.inode, offset: value.offset } : undefined;
  } catch {
    return undefined;
  }
}
