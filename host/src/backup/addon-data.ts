import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { gatewayAccess } from '../addons/gateway-objects.js';
import { madeDatabase } from '../addons/postgresql.js';
import { runChecked } from '../programs.js';
import type { AddonRecord } from '../store/store.js';
import { dumpStorage } from './storage-archive.js';

const LOOPBACK = '127.0.0.1';
const machineEnv = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' });

/** Where each kind keeps its add-ons' data in the data folder (addons/<kind>/, as the providers make it). */
function addonFolders(addonsDir: string) {
  const postgresql = join(addonsDir, 'postgresql');
  return {
    postgresql,
    postgresqlSocket: join(postgresql, 'run'),
    redisData: (id: string) => join(addonsDir, 'redis', id, 'data'),
    /** A storage add-on of before Ceph, not moved yet (runplan-host storage move): s3rver's folder. */
    s3rverObjects: (id: string) => join(addonsDir, 'storage', id, 'objects'),
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
 * with redis-cli --rdb (a snapshot the server makes for it); a storage add-on's buckets and objects read from the
 * S3 gateway with its own keys (storage-archive.ts), or, not moved into the gateway yet, s3rver's folder as it is
 * (restore moves it in).
 */
export async function dumpAddon(addon: AddonRecord, addonsDir: string, out: string): Promise<string | undefined> {
  const folders = addonFolders(addonsDir);
  if (addon.provider === 'postgresql') {
    const port = clusterPort(addonsDir);
    const args = ['-Fc', '-h', folders.postgresqlSocket, '-p', String(port), '-U', 'postgres', '-d', madeDatabase(addon, addon.config), '-f', out];
    await runChecked('pg_dump', args, { env: machineEnv(), timeoutMs: 0 });
  } else if (addon.provider === 'redis') {
    // The password through REDISCLI_AUTH, never argv (which every user of the machine can read).
    const env = { ...machineEnv(), REDISCLI_AUTH: addon.config.password ?? '' };
    await runChecked('redis-cli', ['-h', LOOPBACK, '-p', addon.config.port ?? '', '--rdb', out], { env, timeoutMs: 0 });
  } else if (addon.config.tenant !== undefined) {
    const dumped = await dumpStorage(gatewayAccess(addon.config), out);
    return `${dumped.buckets} bucket(s), ${dumped.objects} object(s), ${dumped.bytes} bytes`;
  } else {
    await mkdir(out, { recursive: true, mode: 0o700 });
    const objects = folders.s3rverObjects(addon.id);
    if (existsSync(objects)) await cp(objects, out, { recursive: true, verbatimSymlinks: true });
    return "s3rver's folder as it is: not moved into the S3 gateway yet";
  }
  await chmod(out, 0o600);
  return undefined;
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
  // addons/redis/ as its provider makes it: searchable, not listable, so each add-on's account reaches its own folder.
  await mkdir(join(addonsDir, 'redis'), { recursive: true, mode: 0o711 });
  await chmod(join(addonsDir, 'redis'), 0o711);
  await mkdir(data, { recursive: true, mode: 0o700 });
  await chmod(join(data, '..'), 0o700);
  await cp(rdb, join(data, 'appendonly.aof'));
  await chmod(join(data, 'appendonly.aof'), 0o600);
}

/** pg_restore of one add-on's dump into its database (made again, empty, with its role and password), over the cluster's socket. */
export async function loadPostgresDump(dump: string, addonsDir: string, port: number, database: string): Promise<void> {
  const socket = addonFolders(addonsDir).postgresqlSocket;
  await runChecked('pg_restore', ['--exit-on-error', '-h', socket, '-p', String(port), '-U', 'postgres', '-d', database, dump], { env: machineEnv(), timeoutMs: 0 });
}
