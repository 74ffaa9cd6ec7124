import { CoreErrors } from '../errors/core-errors.js';
import type { Environment } from '../env/assemble.js';
import { writablePathInside } from '../files/app-path.js';
import { writeFileAtomic } from '../files/atomic-write.js';
import { fillPlaceholders, type Bindings } from '../plan/placeholders.js';
import type { FileChunk, PlannedFile } from '../plan/schema.js';

/** The text of a planned file, with variable references and placeholders replaced by their values. */
export function renderFile(file: PlannedFile, env: Environment, bindings: Bindings): string {
  return file.content.map((chunk) => renderChunk(chunk, env, bindings, file.path)).join('');
}

function renderChunk(chunk: FileChunk, env: Environment, bindings: Bindings, path: string): string {
  if ('text' in chunk) return chunk.text;
  if ('placeholder' in chunk) return fillPlaceholders(`\${${chunk.placeholder}}`, bindings);
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
  if (chunk.part === undefined) return value;
  const colon = value.indexOf(':');
  if (chunk.part === 'before-first-colon') return colon < 0 ? value : value.slice(0, colon);
  return colon < 0 ? '' : value.slice(colon + 1);
}

/** Writes the plan's files of one phase into `appDir`, each atomically and with its mode. */
export async function materialiseFiles(files: readonly PlannedFile[], phase: PlannedFile['phase'], appDir: string, env: Environment, bindings: Bindings): Promise<string[]> {
  const written: string[] = [];
  for (const file of files) {
    if (file.phase !== phase) continue;
    // After following links: a committed `.yarn` → /somewhere must not receive `.yarn/releases/…`.
    const target = await writablePathInside(appDir, file.path, 'planned file');
    await writeFileAtomic(target, renderFile(file, env, bindings), file.mode);
    written.push(file.path);
  }
  return written;
}
