import { statSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** The last lines a server wrote to its log file since `offset` (where this run of it began): the reason it gives when it fails. */
export async function logTail(file: string, offset: number, lines = 8): Promise<string> {
  try {
    const handle = await open(file, 'r');
    try {
      const { size } = await handle.stat();
      const start = Math.max(offset, size - 64 * 1024);
      const buffer = Buffer.alloc(size - start);
      await handle.read(buffer, 0, buffer.length, start);
      return buffer.toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } finally {
      await handle.close();
    }
  } catch {
    return '';
  }
}

/** Where the next run's lines will begin in the log file: its size now (the file keeps the earlier runs'). */
export function logEnd(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
