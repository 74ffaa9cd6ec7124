import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Writes a file so that readers see either the old content or the new one, never
 * a half-written file, and so that a private file is never readable by others,
 * not even for an instant (it is created with its final mode).
 */
export async function writeFileAtomic(path: string, content: string | Uint8Array, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.runplan-${randomBytes(6).toString('hex')}.tmp`;
  try {
    const handle = await open(tmp, 'wx', mode);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // The umask may have narrowed the creation mode; set it exactly.
    await chmod(tmp, mode);
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}
