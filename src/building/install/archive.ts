import { createWriteStream } from 'node:fs';
import { chmod, mkdir, open, readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type yauzl from 'yauzl';
import { CoreErrors } from '../../errors/core-errors.js';

export type ArchiveFormat = 'zip' | 'tar.gz' | 'tar';

/** The format by content, not by name: a mirror may name files as it likes. */
async function archiveFormat(file: string): Promise<ArchiveFormat | undefined> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(262);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'zip';
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
    if (bytesRead >= 262 && head.toString('latin1', 257, 262) === 'ustar') return 'tar';
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Unpacks a zip or tar(.gz) archive into `dest` (an empty directory). Entries
 * that would land outside `dest` (absolute names, `..`) or that are links in a
 * zip are refused: a corrupted or malicious archive never writes elsewhere.
 */
export async function unpackArchive(file: string, dest: string, label = file): Promise<ArchiveFormat> {
  const format = await archiveFormat(file);
  try {
    // The archive libraries load on first use: only a build that installs a framework needs them.
    if (format === 'zip') await unzip(file, dest);
    else if (format !== undefined) await (await import('tar')).x({ file, cwd: dest, strict: true, preservePaths: false });
  } catch (error) {
    if (CoreErrors.BUILD_ARCHIVE_INVALID.is(error)) throw error;
    throw invalid(label, `it cannot be unpacked as ${format}: ${(error as Error).message}`);
  }
  if (format === undefined) throw invalid(label, 'it is neither a zip nor a tar archive');
  return format;
}

async function unzip(file: string, dest: string): Promise<void> {
  const { default: yauzlLib } = await import('yauzl');
  return new Promise((done, fail) => {
    yauzlLib.open(file, { lazyEntries: true, autoClose: true, validateEntrySizes: true }, (openError, zip) => {
      if (openError || !zip) return fail(openError ?? new Error('cannot open'));
      zip.on('error', fail);
      zip.on('end', () => done());
      zip.on('entry', (entry: yauzl.Entry) => {
        extractEntry(zip, entry, dest).then(
          () => zip.readEntry(),
          (error: unknown) => {
            zip.close();
            fail(error);
          },
        );
      });
      zip.readEntry();
    });
  });
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

async function extractEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, dest: string): Promise<void> {
  // yauzl already refuses absolute names and `..`; checked again where the file is written.
  const target = resolve(dest, entry.fileName);
  if (target !== dest && !target.startsWith(dest + sep)) throw invalid(entry.fileName, 'an entry points outside the archive root');
  // Unix permissions live in the high 16 bits of the external attributes (when made on Unix).
  const unixMode = entry.versionMadeBy >> 8 === 3 ? entry.externalFileAttributes >>> 16 : 0;
  if ((unixMode & S_IFMT) === S_IFLNK) throw invalid(entry.fileName, 'the archive holds a symbolic link, which could point outside the tree it installs');
  if (entry.fileName.endsWith('/') || (unixMode & S_IFMT) === S_IFDIR) {
    await mkdir(target, { recursive: true });
    return;
  }
  await mkdir(dirname(target), { recursive: true });
  const mode = unixMode & 0o777 || 0o644;
  const stream = await new Promise<NodeJS.ReadableStream>((ok, ko) => zip.openReadStream(entry, (e, s) => (e || !s ? ko(e ?? new Error('no stream')) : ok(s))));
  await pipeline(stream, createWriteStream(target, { mode }));
  await chmod(target, mode);
}

/**
 * The root of what an archive installs: its single top-level directory when it
 * has exactly one entry and that entry is a directory (play-1.11.0/, package/),
 * else the unpacked directory itself.
 */
export async function unwrapSingleDirectory(unpacked: string): Promise<string> {
  const entries = await readdir(unpacked);
  if (entries.length !== 1) return unpacked;
  const only = join(unpacked, entries[0] as string);
  return (await stat(only)).isDirectory() ? only : unpacked;
}

function invalid(what: string, why: string) {
  return CoreErrors.BUILD_ARCHIVE_INVALID.create({ message: `${what}: ${why}.` });
}
