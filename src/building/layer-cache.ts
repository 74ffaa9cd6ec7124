import { chmod, lstat, mkdir, readdir, readFile, realpath, rm, stat, symlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { isInside } from '../files/app-path.js';
import { pipeline } from 'node:stream/promises';
import { writeFileAtomic } from '../files/atomic-write.js';
import { ensureCached, isCacheWorkDirectory } from '../files/cache-entry.js';
import { packOwnTree, type UserFiles } from '../process/user-files.js';
import type { OutputWarning } from '../process/output-warnings.js';

const KEYS_KEPT = 3;
/**
 * Beside a layer's copy, its record: the cache's format and the warnings of the
 * steps that filled and checked it, replayed when a build restores it instead.
 * A copy without a record of this format (saved by an older runplan, which kept
 * fewer warnings) is not restored: the next build makes and saves it again.
 */
const RECORD_SUFFIX = '.record.json';
const RECORD_FORMAT = 2;
/** What runplan 0.x kept beside a copy before the record; removed with the copy. */
const OLD_WARNINGS_SUFFIX = '.warnings.json';

/** A warning kept with a layer, and the step that raised it. */
export interface LayerWarning extends OutputWarning {
  readonly step: string;
}

/** What a saved layer may hold at most; a build that made more is not cached (the next build runs its step again). */
const LAYER_LIMITS = { maxBytes: 8 * 1024 ** 3, maxEntries: 2_000_000 } as const;

/**
 * Cached layers, one directory per (application, layer, key):
 *
 *   <cacheDir>/layers/<app>/<layer>/<key>/
 *
 * The cache is sealed: `<app>` is root's and 0700, so no application reads or
 * writes it, not even its own. A layer crosses between the cache and a build
 * only as a tar stream (docs/security.md, "Privilege model"):
 *
 * - saving, the application's user archives its own folder (tar, with its uid:
 *   it can only archive what it can read, and links stay links), and runplan
 *   unpacks the stream into a private work directory of the cache with node-tar,
 *   which refuses paths and hard links that climb out and never writes through
 *   a link the archive made; special files are skipped, set-id bits dropped, and
 *   a layer bigger than LAYER_LIMITS is not kept. ensureCached then renames the
 *   finished copy into place, so no build ever sees half a layer;
 * - restoring, runplan archives the sealed entry (its own tree) and the user
 *   unpacks it into the build: a real copy the build owns and may rewrite (a
 *   framework build that copies a file out of node_modules and edits it), that
 *   shares nothing with the cache or with any other build.
 *
 * Code of the application that runs after a save (later steps, hooks, the
 * application itself) changes its own copy only. The few most recent keys of a
 * layer are kept, so builds that alternate between settings each find theirs.
 * Beside each copy, its record (RECORD_SUFFIX): a build that restores the
 * layer skips the steps that made and checked it, and still says what they found.
 */
export class LayerCache {
  private ready: Promise<void> | undefined;

  constructor(private readonly root: string) {}

  /**
   * The application's directory of layers, root's and 0700. One left by a
   * runplan before the cache was sealed (0755, holding layers of hard links that
   * builds shared) is dropped once: its layers are rebuilt by the next builds.
   * It is entirely root's, so removing it follows nothing of an application's.
   */
  private seal(): Promise<void> {
    this.ready ??= (async () => {
      const info = await lstat(this.root).catch(() => undefined);
      if (info?.isDirectory() && (info.mode & 0o077) !== 0 && info.uid === process.getuid?.()) await rm(this.root, { recursive: true, force: true });
      await mkdir(this.root, { recursive: true, mode: 0o700 });
    })();
    return this.ready;
  }

  static forApp(cacheDir: string, appKey: string): LayerCache {
    return new LayerCache(join(cacheDir, 'layers', appKey));
  }

  private entry(layer: string, key: string): string {
    return join(this.root, safe(layer), safe(key));
  }

  /** The sealed copy for `key` (there or not): runplan's alone, for ReadyLayers to copy from, never to hand out. */
  entryPath(layer: string, key: string): string {
    return this.entry(layer, key);
  }

  /** Whether the copy for `key` is there, with a record of the current format. */
  async has(layer: string, key: string): Promise<boolean> {
    await this.seal();
    try {
      return (await stat(this.entry(layer, key))).isDirectory() && (await this.record(layer, key)) !== undefined;
    } catch {
      return false;
    }
  }

  private async record(layer: string, key: string): Promise<{ warnings: LayerWarning[] } | undefined> {
    try {
      const saved = JSON.parse(await readFile(`${this.entry(layer, key)}${RECORD_SUFFIX}`, 'utf8')) as { format?: unknown; warnings?: unknown } | null;
      if (saved?.format !== RECORD_FORMAT || !Array.isArray(saved.warnings)) return undefined;
      return { warnings: saved.warnings.filter(isWarning) };
    } catch {
      return undefined;
    }
  }

  /**
   * Puts the cached layer at `target`, as the user: replacing what is there, or
   * with `keepExisting` (a warm start over committed files), adding only what is missing.
   */
  async restore(layer: string, key: string, target: string, files: UserFiles, { keepExisting = false, signal }: { keepExisting?: boolean; signal?: AbortSignal } = {}): Promise<void> {
    const entry = this.entry(layer, key);
    if (!keepExisting) await files.remove(target, signal ? { signal } : {});
    const packed = packOwnTree(entry);
    await Promise.all([files.unpack(target, packed.stream, { keepExisting, ...(signal ? { signal } : {}) }), packed.done]);
  }

  /** The warnings saved with the layer's copy for `key` (none when it has none, or they cannot be read). */
  async warnings(layer: string, key: string): Promise<LayerWarning[]> {
    await this.seal();
    return (await this.record(layer, key))?.warnings ?? [];
  }

  /**
   * Saves the user's folder `source` as the layer's copy for `key`, with the
   * warnings of the steps that filled and checked it; copies for older keys beyond the few kept are removed.
   */
  async save(layer: string, key: string, source: string, files: UserFiles, { signal, warnings = [] }: { signal?: AbortSignal; warnings?: readonly LayerWarning[] } = {}): Promise<void> {
    await this.seal();
    const layerDir = join(this.root, safe(layer));
    const recordFile = `${this.entry(layer, key)}${RECORD_SUFFIX}`;
    // Dropped first: a copy never stands beside the record of another.
    await rm(recordFile, { force: true });
    await rm(`${this.entry(layer, key)}${OLD_WARNINGS_SUFFIX}`, { force: true });
    await ensureCached(
      this.entry(layer, key),
      async (work) => {
        const copyDir = join(work, 'layer');
        await mkdir(copyDir);
        await receive(() => files.pack(source, signal ? { signal } : {}), copyDir);
        await sealModes(copyDir);
        return copyDir;
      },
      { replace: true },
    );
    await writeFileAtomic(recordFile, JSON.stringify({ format: RECORD_FORMAT, warnings }), 0o600);
    const names = (await readdir(layerDir)).filter((n) => !isCacheWorkDirectory(n) && !n.endsWith(RECORD_SUFFIX) && !n.endsWith(OLD_WARNINGS_SUFFIX));
    const entries = await Promise.all(names.map(async (name) => ({ name, mtime: (await stat(join(layerDir, name))).mtimeMs })));
    entries.sort((a, b) => b.mtime - a.mtime);
    for (const { name } of entries.slice(KEYS_KEPT)) {
      await rm(join(layerDir, name), { recursive: true, force: true });
      await rm(join(layerDir, `${name}${RECORD_SUFFIX}`), { force: true });
      await rm(join(layerDir, `${name}${OLD_WARNINGS_SUFFIX}`), { force: true });
    }
  }
}

const KEPT_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'Link']);

/**
 * Unpacks the user's archive into root's private `dir`, within LAYER_LIMITS.
 * Symbolic links are made last, by runplan, exactly as archived (node-tar would
 * make an absolute target relative), and only where no link lies on the way.
 */
async function receive(pack: () => { readonly stream: NodeJS.ReadableStream; readonly done: Promise<void> }, dir: string): Promise<void> {
  const { x } = await import('tar');
  let bytes = 0;
  let entries = 0;
  let over: string | undefined;
  const links: { path: string; target: string }[] = [];
  const unpack = x({
    cwd: dir,
    preservePaths: false,
    preserveOwner: false,
    filter: (path, entry) => {
      const type = 'type' in entry ? entry.type : undefined;
      bytes += 'size' in entry && typeof entry.size === 'number' ? entry.size : 0;
      entries += 1;
      if (over === undefined && (bytes > LAYER_LIMITS.maxBytes || entries > LAYER_LIMITS.maxEntries)) {
        over = `more than ${LAYER_LIMITS.maxEntries} entries or ${LAYER_LIMITS.maxBytes / 1024 ** 3} GiB`;
        unpack.abort(new Error(`the layer holds ${over}`));
      }
      if (type === 'SymbolicLink' && 'linkpath' in entry && typeof entry.linkpath === 'string') links.push({ path, target: entry.linkpath });
      return over === undefined && type !== undefined && KEPT_TYPES.has(type);
    },
  });
  // Started only once its reader is in place: a stream left unread while tar loads arrives empty.
  const archive = pack();
  // The archiver's own failure (it could not read the folder) says more than a parse error of the stream it cut short.
  const [packed, unpacked] = await Promise.allSettled([archive.done, pipeline(archive.stream, unpack)]);
  if (over !== undefined) throw new Error(`the layer holds ${over}; it is not cached`);
  if (packed.status === 'rejected') throw packed.reason;
  if (unpacked.status === 'rejected') throw unpacked.reason;
  const realDir = await realpath(dir);
  for (const link of links) {
    const path = resolve(realDir, link.path);
    if (path === realDir || !isInside(realDir, path)) continue;
    // Nothing in this directory is the application's: what is checked here stays so.
    if ((await realpath(dirname(path)).catch(() => undefined)) !== dirname(path)) continue;
    await symlink(link.target, path).catch(() => undefined);
  }
}

/** No set-id or sticky bit survives into the cache; only runplan reads it (the directory above is 0700). */
async function sealModes(dir: string): Promise<void> {
  const info = await lstat(dir);
  if (info.isSymbolicLink()) return;
  if (info.isDirectory()) for (const name of await readdir(dir)) await sealModes(join(dir, name));
  const mode = info.mode & 0o777 & ~0o022;
  if ((info.mode & 0o7777) !== mode) await chmod(dir, mode | (info.isDirectory() ? 0o700 : 0));
}

function isWarning(value: unknown): value is LayerWarning {
  const w = value as Partial<LayerWarning> | null;
  return typeof w?.code === 'string' && typeof w.message === 'string' && typeof w.fix === 'string' && typeof w.step === 'string';
}

function safe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}
