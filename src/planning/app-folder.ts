import { decide } from '../plan/decide.js';
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { hasUnsafeCharacters, quoteExcerpt } from '../errors/excerpt.js';
import { isInside, isMissing, unreadable } from '../files/app-path.js';
import type { FileSource } from '../files/file-source.js';
import type { Decision } from '../plan/schema.js';

export const APP_FOLDER_VARIABLE = 'APP_FOLDER';

/**
 * APP_FOLDER's value as the folder of the application inside the repository
 * (specification, "What the service does", 7): a relative path with "/" and no
 * "." or empty parts; '' for the repository root. Lexical only: whether it is
 * there, and where its links lead, is checked against the files.
 */
export function normaliseAppFolder(value: string): string {
  const outside = (why: string) => CoreErrors.APP_FOLDER_OUTSIDE.create({ message: `APP_FOLDER=${quoteExcerpt(value)} ${why}.`, variable: APP_FOLDER_VARIABLE });
  if (value.includes('\0')) throw outside('holds a NUL byte, which no path can');
  // runplan prints the folder (in build directories, plans, messages): a line break would forge a line of its output.
  if (hasUnsafeCharacters(value.trim())) {
    throw CoreErrors.APP_FOLDER_NOT_FOUND.create({
      message: `APP_FOLDER=${quoteExcerpt(value)} holds a line break, control or invisible character: runplan deploys no folder of such a name (the repository root is not deployed instead).`,
      variable: APP_FOLDER_VARIABLE,
    });
  }
  if (isAbsolute(value) || /^[A-Za-z]:[\\/]/.test(value)) throw outside('is an absolute path; the folder is named relative to the repository root');
  const parts: string[] = [];
  for (const part of value.trim().split(/[\\/]+/)) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) throw outside('climbs out of the repository with ".."');
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}

/**
 * Checks the folder on disk: a directory, reached from the repository's real
 * root without leaving it (a committed link to a host directory would deploy the
 * host's files). Returns its absolute path.
 */
export function checkAppFolderOnDisk(repositoryRoot: string, folder: string): string {
  const abs = join(repositoryRoot, folder);
  if (folder === '') return abs;
  let realRoot: string;
  let real: string;
  try {
    realRoot = realpathSync.native(repositoryRoot);
    real = realpathSync.native(abs);
  } catch (error) {
    if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'ENAMETOOLONG') throw notFound(folder, 'does not exist in the repository');
    throw unreadable(quoteExcerpt(folder), error);
  }
  if (!isInside(realRoot, real)) {
    throw CoreErrors.APP_FOLDER_OUTSIDE.create({
      message: `APP_FOLDER=${quoteExcerpt(folder)} is a symbolic link (or lies below one) that leads outside the repository; where it points is not shown.`,
      variable: APP_FOLDER_VARIABLE,
      file: folder,
    });
  }
  if (!statSync(real).isDirectory()) throw notFound(folder, 'is a file, not a folder');
  return abs;
}

/**
 * The application as planning finds it on disk: the repository a directory
 * (RUNPLAN_E_APP_DIR_NOT_FOUND), and APP_FOLDER's folder a directory reached
 * inside it (checkAppFolderOnDisk). Returns the application's directory.
 */
export function checkApplicationOnDisk(repositoryRoot: string, folder: string): string {
  let info: ReturnType<typeof statSync> | undefined;
  try {
    info = statSync(repositoryRoot);
  } catch {
    info = undefined;
  }
  if (!info?.isDirectory()) throw CoreErrors.APP_DIR_NOT_FOUND.create({ message: `${repositoryRoot} is not a directory.`, file: repositoryRoot });
  return checkAppFolderOnDisk(repositoryRoot, folder);
}

/** The same checks on any FileSource (an in-memory tree): its own reads refuse paths that leave it. */
export async function checkAppFolderInSource(files: FileSource, folder: string): Promise<void> {
  if (folder === '') return;
  if (!(await files.exists(folder))) throw notFound(folder, 'does not exist in the repository');
  if (!(await files.isDirectory(folder))) throw notFound(folder, 'is a file, not a folder');
}

function notFound(folder: string, why: string) {
  return CoreErrors.APP_FOLDER_NOT_FOUND.create({
    message: `APP_FOLDER=${quoteExcerpt(folder)} ${why}, so there is no application to deploy there (the repository root is not deployed instead).`,
    variable: APP_FOLDER_VARIABLE,
    file: folder,
  });
}

/** The plan's account of where the application is. */
export function appFolderDecision(requested: string | undefined, origin: string | undefined, folder: string): Decision {
  return decide({
    id: 'app.folder',
    subject: 'folder of the application inside the repository',
    requests: [{ source: `env ${APP_FOLDER_VARIABLE} (${origin ?? 'application'})`, value: requested }],
    resolved: folder === '' ? '.' : folder,
    reason:
      folder === ''
        ? requested === undefined
          ? 'APP_FOLDER is unset: the application is the repository root'
          : 'APP_FOLDER names the repository root'
        : 'detection, build, processes and health check happen in this folder; the whole repository is copied into the build, so files above the folder (a workspace root) stay available',
  });
}
