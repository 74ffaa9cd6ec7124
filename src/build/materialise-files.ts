import { resolve, sep } from 'node:path';
import type { Environment } from '../env/assemble.js';
import { CoreErrors } from '../errors/core-errors.js';
import { writeFileAtomic } from '../files/atomic-write.js';
import type { PlannedFile } from '../plan/schema.js';

/** The text of a planned file, with variable references replaced by their values. */
export function renderFile(file: PlannedFile, env: Environment): string {
  return file.content.map((chunk) => ('text' in chunk ? chunk.text : (env.get(chunk.env) ?? ''))).join('');
}

/** Writes the plan's files of one phase into `appDir`, each atomically and with its mode. */
export async function materialiseFiles(files: readonly PlannedFile[], phase: PlannedFile['phase'], appDir: string, env: Environment): Promise<string[]> {
  const written: string[] = [];
  for (const file of files) {
    if (file.phase !== phase) continue;
    const target = resolve(appDir, file.path);
    if (target !== appDir && !target.startsWith(appDir + sep)) {
      throw CoreErrors.BUILD_FILE_ESCAPES_APP.create({ message: `planned file ${file.path} resolves outside the application.`, file: file.path });
    }
    await writeFileAtomic(target, renderFile(file, env), file.mode);
    written.push(file.path);
  }
  return written;
}
