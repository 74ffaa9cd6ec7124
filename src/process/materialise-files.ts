import { CoreErrors } from '../errors/core-errors.js';
import type { Environment } from '../env/assemble.js';
import { writablePathInside } from '../files/app-path.js';
import { escapeFileValue } from '../plan/file-values.js';
import type { FileChunk, PlannedFile } from '../plan/schema.js';
import type { UserFiles } from './user-files.js';

/** A planned file once lowered (src/lowering/lower.ts): its placeholders filled. */
type LoweredFileText = Readonly<Pick<PlannedFile, 'path' | 'phase' | 'mode'>> & { readonly content: readonly FileChunk[] };

/** The text of a lowered file, with variable references replaced by their values. */
export function renderFile(file: Pick<LoweredFileText, 'path' | 'content'>, env: Environment): string {
  return file.content.map((chunk) => renderChunk(chunk, env, file.path)).join('');
}

function renderChunk(chunk: FileChunk, env: Environment, path: string): string {
  if ('text' in chunk) return chunk.text;
  // Placeholders are the executor's, filled when the plan is lowered (src/lowering/lower.ts).
  if ('placeholder' in chunk) throw new Error(`${path}: the file was not lowered (\${${chunk.placeholder}} is still in it)`);
  const value = env.get(chunk.env) ?? '';
  // Every generated file takes a variable inside one line (.npmrc's token line, nginx's user
  // file): a line break would add lines of the variable's choosing (`script-shell=…`).
  if (/[\r\n\0]/.test(value)) {
    throw CoreErrors.ENV_VALUE_INVALID.create({
      message: `the value of ${chunk.env} contains a line break or NUL byte, which would add lines to ${path}; the value is not shown.`,
      variable: chunk.env,
      file: path,
    });
  }
  return escapeFileValue(valuePart(value, chunk.part), chunk.escape);
}

function valuePart(value: string, part: Extract<FileChunk, { env: string }>['part']): string {
  if (part === undefined) return value;
  const colon = value.indexOf(':');
  if (part === 'before-first-colon') return colon < 0 ? value : value.slice(0, colon);
  return colon < 0 ? '' : value.slice(colon + 1);
}

/**
 * Writes the plan's files of one phase into `appDir`, each atomically and with
 * its mode, by `writer`: as the application's user, whose tree it is (the
 * files then belong to it, as its processes must read them).
 */
export async function materialiseFiles(files: readonly LoweredFileText[], phase: PlannedFile['phase'], appDir: string, env: Environment, writer: UserFiles): Promise<string[]> {
  const written: string[] = [];
  for (const file of files) {
    if (file.phase !== phase) continue;
    // A committed `.yarn` → /somewhere is an error of the application's, named here; the write
    // itself, as the user, could not reach a folder of the host even if a link appeared meanwhile.
    const target = await writablePathInside(appDir, file.path, 'planned file');
    await writer.write(target, renderFile(file, env), file.mode);
    written.push(file.path);
  }
  return written;
}
