import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runChecked } from '../programs.js';
import type { AddonRecord } from '../store/store.js';
import { madeDatabase } from '../addons/postgresql.js';

const LOOPBACK = '127.0.0.1';
const machineEnv = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' });

/** Where each kind keeps its add-ons' data in the data folder (addons/<kind>/, as the providers make it). */
function addonFolders(addonsDir: string) {
  const postgresql = join(addonsDir, 'postgresql');
  return {
    postgresql,
    postgresqlSocket: join(postgresql, 'run'),
    redisData: (id: string) => join(addonsDir, 'redis', id, 'data'),
    storageObjects: (id: string) => join(addonsDir, 'storage', id, 'objects'),
  };
}

/** The port of the host's PostgreSQL cluster, as its provider keeps it (addons/postgresql/server.json). */
function clusterPort(addonsDir: string): number | undefined {
  const file = join(addonFolders(addonsDir).postgresql, 'server.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { port?: number }).port : undefined;
}

/**
 * One add-on's data written to `out`, from its running server: a PostgreSQL database with pg_dump (custom
 * format, one consistent snapshot) over the cluster's socket as its superuser; a Redis instance's RDB
 * with redis-cli --rdb (a snapshot the server makes for it); a storage add-on's objects copied from its folder.
 */
export async function dumpAddon(addon: AddonRecord, addonsDir: string, out: string): Promise<void> {
  const folders = addonFolders(addonsDir);
  if (addon.provider === 'postgresql') {
    const port = clusterPort(addonsDir);
    const args = ['-Fc', '-h', folders.postgresqlSocket, '-p', String(port), '-U', 'postgres', '-d', madeDatabase(addon, addon.config), '-f', out];
    await runChecked('pg_dump', args, { env: machineEnv(), timeoutMs: 0 });
  } else if (addon.provider === 'redis') {
    // The password through REDISCLI_AUTH, never argv (which every user of the machine can read).
    const env = { ...machineEnv(), REDISCLI_AUTH: addon.config.password ?? '' };
    await runChecked('redis-cli', ['-h', LOOPBACK, '-p', addon.config.port ?? '', '--rdb', out], { env, timeoutMs: 0 });
  } else {
    await mkdir(out, { recursive: true, mode: 0o700 });
    const objects = folders.storageObjects(addon.id);
    if (existsSync(objects)) await cp(objects, out, { recursive: true, verbatimSymlinks: true });
  }
  if (addon.provider !== 'storage') await chmod(out, 0o600);
}

/** The archive's file (or folder) of an add-on's data. */
export function dumpName(addon: Pick<AddonRecord, 'id' | 'provider'>): string {
  return join('addons', addon.provider, `${addon.id}${addon.provider === 'postgresql' ? '.pgdump' : addon.provider === 'redis' ? '.rdb' : ''}`);
}

/**
 * A Redis add-on's RDB put where its server loads it at its next start: with appendonly on, Redis loads
 * an AOF, never dump.rdb; an RDB is a valid AOF (its preamble), which Redis 7 moves into its appendonlydir.
 */
export async function placeRedisData(rdb: string, addonsDir: string, id: string): Promise<void> {
  const data = addonFolders(addonsDir).redisData(id);
  await kindFolder(addonsDir, 'redis');
  await mkdir(data, { recursive: true, mode: 0o700 });
  await chmod(join(data, '..'), 0o700);
  await cp(rdb, join(data, 'appendonly.aof'));
  await chmod(join(data, 'appendonly.aof'), 0o600);
}

export async function placeStorageObjects(objects: string, addonsDir: string, id: string): Promise<void> {
  const target = addonFolders(addonsDir).storageObjects(id);
  await kindFolder(addonsDir, 'storage');
  await mkdir(target, { recursive: true, mode: 0o700 });
  await chmod(join(target, '..'), 0o700);
  await cp(objects, target, { recursive: true });
}

/** addons/<kind>/ as its provider makes it: searchable, not listable, so each add-on's account reaches its own folder. */
async function kindFolder(addonsDir: string, kind: 'redis' | 'storage'): Promise<void> {
  await mkdir(join(addonsDir, kind), { recursive: true, mode: 0o711 });
  await chmod(join(addonsDir, kind), 0o711);
}

/** pg_restore of one add-on's dump into its database (made again, empty, with its role and password), over the cluster's socket. */
export async function loadPostgresDump(dump: string, addonsDir: string, port: number, database: string): Promise<void> {
  const socket = addonFolders(addonsDir).postgresqlSocket;
  await runChecked('pg_restore', ['--exit-on-error', '-h', socket, '-p', String(port), '-U', 'postgres', '-d', database, dump], { env: machineEnv(), timeoutMs: 0 });
}

export async function writeSecretFile(file: string, text: string | Buffer): Promise<void> {
  await writeFile(file, text, { mode: 0o600 });
  await chmod(file, 0o600);
}
