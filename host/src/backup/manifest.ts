import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HostErrors } from '../errors.js';
import { latestVersion } from '../store/migrations.js';

/** The archive's table of contents (manifest.json at its top): what made it, and each file with its checksum. */
export interface BackupManifest {
  /** This layout's version: a restore refuses one it does not know. */
  readonly format: 1;
  readonly runplanHost: string;
  /** The store's schema version (store/migrations.ts): a restore refuses a newer one. */
  readonly storeSchema: number;
  readonly store: 'sqlite' | 'postgresql';
  readonly createdAt: string;
  readonly entries: readonly ManifestEntry[];
}

interface ManifestEntry {
  /** Relative to the archive's top, with "/". */
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
}

export const MANIFEST = 'manifest.json';

function sha256OfFile(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });
}

/** Every regular file under `dir`, relative to it with "/"; links and other kinds are left out (no archive entry points outside it). */
async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (folder: string) => {
    for (const name of (await readdir(folder)).sort()) {
      const path = join(folder, name);
      const stat = await lstat(path);
      if (stat.isDirectory()) await walk(path);
      else if (stat.isFile()) found.push(relative(dir, path).split(sep).join('/'));
    }
  };
  await walk(dir);
  return found;
}

/** The folders under `dir` that hold nothing (an empty bucket in s3rver's folder, an add-on without objects): archived as folders of their own. */
export async function emptyFoldersUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (folder: string) => {
    const names = (await readdir(folder)).sort();
    if (names.length === 0 && folder !== dir) found.push(relative(dir, folder).split(sep).join('/'));
    for (const name of names) {
      const path = join(folder, name);
      if ((await lstat(path)).isDirectory()) await walk(path);
    }
  };
  await walk(dir);
  return found;
}

export async function makeManifest(dir: string, store: BackupManifest['store'], now: Date): Promise<BackupManifest> {
  const entries: ManifestEntry[] = [];
  for (const path of await filesUnder(dir)) {
    const file = join(dir, path);
    entries.push({ path, size: (await lstat(file)).size, sha256: await sha256OfFile(file) });
  }
  return { format: 1, runplanHost: hostVersion(), storeSchema: latestVersion, store, createdAt: now.toISOString(), entries };
}

/**
 * The manifest of an unpacked archive, every file checked against it: a file missing, changed or not listed
 * is RESTORE_CORRUPT naming it, and so is a store made by a newer runplan-host.
 */
export async function verifiedManifest(dir: string, archive: string): Promise<BackupManifest> {
  const corrupt = (message: string, entry?: string) => HostErrors.RESTORE_CORRUPT.create({ message: `${archive}: ${message}`, file: archive, details: entry === undefined ? {} : { entry } });
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as BackupManifest;
  } catch {
    throw corrupt(`it holds no readable ${MANIFEST}.`, MANIFEST);
  }
  if (manifest.format !== 1 || !Array.isArray(manifest.entries)) throw corrupt(`its ${MANIFEST} is not one runplan-host backup writes.`, MANIFEST);
  if (manifest.storeSchema > latestVersion) {
    throw HostErrors.STORE_NEWER.create({
      message: `${archive} holds a store of schema version ${manifest.storeSchema}, made by runplan-host ${manifest.runplanHost}; this one knows up to ${latestVersion}.`,
      file: archive,
    });
  }
  const listed = new Set(manifest.entries.map((e) => e.path));
  for (const entry of manifest.entries) {
    const file = join(dir, entry.path);
    if (!existsSync(file)) throw corrupt(`the entry ${entry.path} is missing.`, entry.path);
    if ((await sha256OfFile(file)) !== entry.sha256) throw corrupt(`the entry ${entry.path} does not match its sha256 in ${MANIFEST}.`, entry.path);
  }
  const extra = (await filesUnder(dir)).filter((p) => p !== MANIFEST && !listed.has(p));
  if (extra[0] !== undefined) throw corrupt(`the entry ${extra[0]} is not in ${MANIFEST}.`, extra[0]);
  return manifest;
}

/** runplan-host's version, from its package.json (above dist/cli.js once bundled, above src/backup/ in the sources). */
function hostVersion(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++, folder = dirname(folder)) {
    const file = join(folder, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'runplan-host') return pkg.version ?? 'unknown';
  }
  return 'unknown';
}
