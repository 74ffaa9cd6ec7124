import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Bytes of the regular files under `dir` (symbolic links not followed), e.g. to report what a download unpacked. */
export async function treeSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await treeSize(path);
    else if (entry.isFile()) total += (await lstat(path)).size;
  }
  return total;
}

/** "148 MB", "2.4 MB", "310 kB": decimal units, as npm and curl print them. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(bytes >= 1e8 ? 0 : 1)} MB`;
  return `${Math.max(1, Math.round(bytes / 1e3))} kB`;
}
