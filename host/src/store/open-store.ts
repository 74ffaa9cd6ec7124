import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { HostPaths } from '../paths.js';
import { openPostgresStore } from './postgres-store.js';
import { openSqliteStore } from './sqlite-store.js';
import type { HostStore } from './store.js';

/** Whether the store is in PostgreSQL: its URL is in the data folder's store-url (root's alone: it holds a password). */
export function usesPostgres(paths: HostPaths): boolean {
  return existsSync(paths.storeUrl);
}

/** The host's store: PostgreSQL when `init --store` or `migrate-store` chose it, the data folder's SQLite file otherwise. */
export async function openHostStore(paths: HostPaths): Promise<HostStore> {
  if (usesPostgres(paths)) return openPostgresStore((await readFile(paths.storeUrl, 'utf8')).trim());
  return openSqliteStore(paths.store);
}
