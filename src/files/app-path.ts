import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, type Stats } from 'node:fs';
import { lstat, open, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { quoteExcerpt } from '../errors/excerpt.js';
import { MAX_APP_FILE_BYTES } from './file-source.js';

/** Whether `path` is `root` or below it (both absolute, normalised). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** ENOENT and ENOTDIR: nothing there (a dangling link counts as nothing). */
export function isMissing(error: unknown): boolean {
  const code = errnoCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * The real path of `rel` (relative to the real `root`) after following every
 * symbolic link, or undefined when nothing is there. A path whose links lead
 * out of the application is refused: runplan would otherwise read, print or
 * serve a file of the host. The error names the path in the application, never
 * where the link points (that is the host's business).
 */
async function realPathInside(realRoot: string, rel: string): Promise<string | undefined> {
  const abs = rel === '' ? realRoot : resolve(realRoot, rel);
  let real: string;
  try {
    real = await realpath(abs);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw unreadable(rel, error);
  }
  if (!isInside(realRoot, real)) throw outside(rel);
  return real;
}

/**
 * realPathInside with synchronous calls, for the small files planning reads:
 * each asynchronous file-system call is a hand-off to libuv's thread pool that
 * costs some 50 µs here, against a few µs done in place (docs/perf.md).
 */
export function realPathInsideSync(realRoot: string, rel: string): string | undefined {
  return lookUpInsideSync(realRoot, rel)?.real;
}

/**
 * realPathInsideSync, and what lstat says of the path when it is not a link.
 * The root is real already, so only the parts of `rel` below it are looked at,
 * one lstat each (resolving the whole path from / costs a readlink per part
 * above the application too); the first symbolic link hands the path to
 * realpath, which follows it and says whether it stays inside.
 */
function lookUpInsideSync(realRoot: string, rel: string): { real: string; info: Stats | undefined } | undefined {
  if (rel === '') {
    // The root itself: there or not (its own links were resolved by whoever gave realRoot).
    try {
      lstatSync(realRoot);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw unreadable(rel, error);
    }
    return { real: realRoot, info: undefined };
  }
  let path = realRoot;
  let info: Stats | undefined;
  // normaliseRelative's form: parts joined by "/", none empty, "." or "..".
  for (const part of rel.split('/')) {
    path = `${path}/${part}`;
    try {
      info = lstatSync(path);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw unreadable(rel, error);
    }
    if (info.isSymbolicLink()) {
      const real = followedInside(realRoot, rel);
      return real === undefined ? undefined : { real, info: undefined };
    }
  }
  return { real: path, info };
}

/** The real path of `rel` below a link, undefined when it leads to nothing (a dangling link); a coded error when it leads outside. */
function followedInside(realRoot: string, rel: string): string | undefined {
  let real: string;
  try {
    real = realpathSync.native(resolve(realRoot, rel));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw unreadable(rel, error);
  }
  if (!isInside(realRoot, real)) throw outside(rel);
  return real;
}

function outside(rel: string): Error {
  return CoreErrors.APP_PATH_OUTSIDE.create({
    message: `${rel || '.'} is a symbolic link (or lies under one) that leads outside the application; runplan reads, writes and serves only files inside it.`,
    file: rel,
  });
}

// Larger files (lock files of big applications) are read asynchronously: the event loop of a host embedding runplan stays free.
const SYNC_READ_BYTES = 256 * 1024;

/**
 * readFileInside for planning: the same checks, done synchronously for files
 * up to 256 KB (what planning reads: package.json, .nvmrc, a Gemfile…), and
 * by readFileInside for larger ones.
 */
export async function readFileInsideFast(realRoot: string, rel: string, maxBytes = MAX_APP_FILE_BYTES): Promise<string | undefined> {
  const found = lookUpInsideSync(realRoot, rel);
  if (found === undefined) return undefined;
  const { real } = found;
  let info: Stats;
  try {
    // Looked at already on the way, unless the path went through a link.
    info = found.info ?? lstatSync(real);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw unreadable(rel, error);
  }
  checkRegular(rel, info, maxBytes);
  if (info.size > SYNC_READ_BYTES) return readFileInside(realRoot, rel, maxBytes);
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw unreadable(rel, error);
  }
  try {
    const opened = fstatSync(fd);
    checkRegular(rel, opened, maxBytes);
    // Grown since lstat: read up to the limit, as readFileInside does.
    if (opened.size > SYNC_READ_BYTES) return await readFileInside(realRoot, rel, maxBytes);
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, opened.size + 1));
    let length = 0;
    while (length < buffer.length) {
      const bytesRead = readSync(fd, buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) throw tooLarge(rel, maxBytes);
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The coded error for a path of the application the system refuses to read (a loop of links, EACCES…). */
export function unreadable(rel: string, error: unknown): Error {
  const code = errnoCode(error);
  if (code === 'ELOOP') return CoreErrors.APP_FILE_NOT_REGULAR.create({ message: `${rel} is a loop of symbolic links.`, file: rel });
  return CoreErrors.APP_FILE_UNREADABLE.create({ message: `${rel} cannot be read (${code ?? 'unknown error'}).`, file: rel, cause: error });
}

/** "a directory", "a FIFO"…: what a non-regular file is, for messages. */
function describeType(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/**
 * The text of the regular file `rel` of the application, or undefined when it
 * does not exist. Refused with a coded error: a link leading outside, anything
 * but a regular file (a FIFO would block the read for ever, a device could be
 * endless) and a file larger than `maxBytes`.
 */
async function readFileInside(realRoot: string, rel: string, maxBytes = MAX_APP_FILE_BYTES): Promise<string | undefined> {
  const real = await realPathInside(realRoot, rel);
  if (real === undefined) return undefined;
  // Looked at before opening: opening a FIFO blocks, opening a device may act.
  const info = await lstat(real).catch((error: unknown) => {
    throw unreadable(rel, error);
  });
  checkRegular(rel, info, maxBytes);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NOFOLLOW and O_NONBLOCK: should the file be swapped for a link or a FIFO meanwhile, the open fails or returns at once.
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw unreadable(rel, error);
  }
  try {
    checkRegular(rel, await handle.stat(), maxBytes);
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, Math.max(info.size + 1, 1)));
    let length = 0;
    for (;;) {
      if (length === buffer.length) break;
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) throw tooLarge(rel, maxBytes);
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    await handle.close();
  }
}

function checkRegular(rel: string, info: Stats, maxBytes: number): void {
  if (!info.isFile()) {
    throw CoreErrors.APP_FILE_NOT_REGULAR.create({ message: `${rel} is ${describeType(info)}, where a file is expected.`, file: rel });
  }
  if (info.size > maxBytes) throw tooLarge(rel, maxBytes);
}

function tooLarge(rel: string, maxBytes: number): Error {
  return CoreErrors.APP_FILE_TOO_LARGE.create({
    message: `${rel} is larger than ${maxBytes} bytes, more than runplan reads from such a file.`,
    file: rel,
    details: { maxBytes },
  });
}

/**
 * Where runplan may write `rel` inside `root` (a build directory): the path
 * itself when every part of it that exists stays inside after following links,
 * so that creating the missing parts creates them inside too. A committed link
 * (`.yarn` → a folder of the host) or a dangling one (which a write would
 * follow to create its target) is refused.
 */
export async function writablePathInside(root: string, rel: string, what: string): Promise<string> {
  const realRoot = await realpath(root);
  const escapes = (why = 'through "..", an absolute path or a symbolic link') =>
    CoreErrors.BUILD_FILE_ESCAPES_APP.create({ message: `${what} ${quoteExcerpt(rel)} resolves outside the application (${why}).`, file: rel });
  // Any other failure (a loop of links, a name too long) leaves the place unknown: refused too.
  const unknown = (error: unknown) => escapes(`it cannot be resolved: ${errnoCode(error) ?? 'unknown error'}`);
  const target = resolve(realRoot, rel);
  if (!isInside(realRoot, target)) throw escapes();
  // The deepest part of the path that exists, without following its last component.
  let existing = target;
  for (;;) {
    const info = await lstat(existing).catch((error: unknown) => {
      if (isMissing(error)) return undefined;
      throw unknown(error);
    });
    if (info !== undefined) break;
    if (existing === realRoot) break;
    existing = dirname(existing);
  }
  const real = await realpath(existing).catch((error: unknown) => {
    // A dangling link: writing through it would create its target, wherever that is.
    if (isMissing(error)) return undefined;
    throw unknown(error);
  });
  if (real === undefined || !isInside(realRoot, real)) throw escapes();
  return target;
}
