import { createHash } from 'node:crypto';
import { chmod, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { formatBytes, treeSize } from '../../files/tree-size.js';
import { formatSeconds } from '../../health/probes.js';
import type { PackageSource } from '../../plan/schema.js';
import { unpackArchive, unwrapSingleDirectory } from './archive.js';
import { downloadVerified, type DownloadOptions } from './download.js';
import { fetchNpmTarball, type NpmRunner } from './npm-tarball.js';
import { freezeTree, isFrozen } from '../../files/freeze.js';
import { ensureCached } from '../../files/cache-entry.js';

/**
 * Installed trees (runtimes, package managers, frameworks) shared by every build
 * on the host, one directory per source and digest:
 *
 *   <cacheDir>/trees/npm/<name>@<version>-<digest prefix>/
 *   <cacheDir>/trees/archive/<sha256 prefix>/
 *
 * An entry appears only by renaming a complete, verified unpack into place, so
 * a reader never sees a half-written entry and a bad download never becomes
 * one (src/files/cache-entry.ts). Entries are read-only (freeze.ts): builds share them through
 * a symlink. runplan never evicts an entry, so a runtime a live build runs from
 * never disappears under it; a host that prunes the cache must spare the entries
 * that builds under its work directory link to.
 */
export function treeCacheEntry(cacheDir: string, source: PackageSource): string {
  if (source.type === 'npm') {
    const digest = createHash('sha256').update(source.integrity).digest('hex').slice(0, 12);
    return join(cacheDir, 'trees', 'npm', `${source.name.replace('/', '+')}@${source.version}-${digest}`);
  }
  return join(cacheDir, 'trees', 'archive', source.sha256.slice(0, 24));
}

export interface TreeOptions extends DownloadOptions {
  /** Runs npm for npm sources (default: the host's npm). */
  readonly npm?: NpmRunner;
}

export interface EnsuredTree {
  readonly dir: string;
  /** False when this call downloaded and unpacked it. */
  readonly cached: boolean;
}

/** What a source is called in logs and errors. */
export function describeSource(source: PackageSource): string {
  return source.type === 'npm' ? `${source.name}@${source.version}` : source.url;
}

export async function ensureTree(cacheDir: string, source: PackageSource, options: TreeOptions = {}): Promise<EnsuredTree> {
  const entry = treeCacheEntry(cacheDir, source);
  // Entries made before runplan froze them are frozen on their first use.
  if (await isDirectory(entry)) {
    if (!(await isFrozen(entry))) await freezeTree(entry);
    return { dir: entry, cached: true };
  }
  const started = Date.now();
  let size: number | undefined;
  options.log?.(`downloading ${describeSource(source)} into the shared cache`);
  const ensured = await ensureCached(entry, async (work) => {
    const archive = join(work, 'archive');
    await mkdir(join(work, 'unpacked'));
    if (source.type === 'npm') await fetchNpmTarball(source, archive, work, options.npm);
    else await downloadVerified(source.url, source.sha256, archive, options);
    await unpackArchive(archive, join(work, 'unpacked'), describeSource(source));
    const root = await unwrapSingleDirectory(join(work, 'unpacked'));
    // Size and time, so that a slow network reads as progress rather than a hang.
    size = await treeSize(root).catch(() => undefined);
    // Read-only before anyone can see it (docs/security.md, "Shared cache"), but for its own directory's write bit until it
    // is in place: moving a directory into another folder rewrites its "..", which only root may do in a read-only directory.
    await freezeTree(root);
    await chmod(root, 0o755);
    return root;
  });
  if (!(await isFrozen(entry))) await chmod(entry, 0o555);
  if (!ensured.cached) options.log?.(`cached ${describeSource(source)}${size === undefined ? '' : ` (${formatBytes(size)} unpacked)`} in ${formatSeconds(Date.now() - started)}`);
  return { dir: entry, cached: ensured.cached };
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}
