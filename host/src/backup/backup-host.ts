import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { chmod, cp, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import { create as createTar } from 'tar';
import { HostErrors } from '../errors.js';
import { readApiToken } from '../host-files.js';
import { type HostPaths, repositoryPath } from '../paths.js';
import { runChecked } from '../programs.js';
import { readSettings } from '../settings.js';
import { openHostStore, usesPostgres } from '../store/open-store.js';
import { openSqliteStore } from '../store/sqlite-store.js';
import type { AddonRecord, AppRecord, HostStore } from '../store/store.js';
import { encryption, readKeyFile } from './archive-cipher.js';
import { dumpAddon, dumpName } from './addon-data.js';
import { writeSecretFile } from './secret-file.js';
import { emptyFoldersUnder, MANIFEST, makeManifest } from './manifest.js';
import { pgEnvironment } from './pg-environment.js';

export interface BackupResult {
  readonly file: string;
  /** Encrypted with the operator's key file (archive-cipher.ts). */
  readonly encrypted: boolean;
  readonly entries: number;
  readonly bytes: number;
  readonly apps: number;
  readonly addons: number;
}

/**
 * `runplan-host backup --to FILE`: one archive of the whole host, made while it serves (nothing is
 * stopped). Every part is read through what keeps it consistent: the SQLite store with its online
 * backup API, a PostgreSQL store and add-ons with pg_dump, Redis with its own RDB snapshot, each
 * repository as a git bundle. Staged in a folder of the target's (0700), packed under a temporary
 * name (0600) and renamed: FILE is the whole archive or nothing.
 */
export async function backupHost(paths: HostPaths, to: string, log: (line: string) => void, options: { readonly encryptWith?: string; readonly now?: Date } = {}): Promise<BackupResult> {
  // Refused early, as any command, when the folder holds no host, and before any work for a key file that does not do.
  await readSettings(paths);
  const passphrase = options.encryptWith === undefined ? undefined : await readKeyFile(options.encryptWith);
  await readApiToken(paths);
  const folder = dirname(to);
  const staging = join(folder, `.${basename(to)}.${randomBytes(6).toString('hex')}.staging`);
  const temporary = join(folder, `.${basename(to)}.${randomBytes(6).toString('hex')}.tmp`);
  const failed = (part: string, cause: unknown, file?: string) =>
    HostErrors.BACKUP_FAILED.create({
      message: `${part} could not be backed up: ${String((cause as { stderr?: string }).stderr || (cause as Error).message || cause)
        .trim()
        .split('\n')
        .slice(-3)
        .join(' | ')}`,
      ...(file === undefined ? {} : { file }),
      details: { part },
      cause,
    });
  const step = async <T>(part: string, work: () => Promise<T>, file?: string): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw failed(part, error, file);
    }
  };
  try {
    await step('the archive', () => mkdir(staging, { mode: 0o700 }), to);
    const postgresStore = usesPostgres(paths);
    let store: HostStore;
    if (postgresStore) {
      const url = (await readFile(paths.storeUrl, 'utf8')).trim();
      await step('the PostgreSQL store', () => runChecked('pg_dump', ['-Fc', '-f', join(staging, 'store.pgdump')], { env: pgEnvironment(url), timeoutMs: 0 }));
      store = await openHostStore(paths);
    } else {
      const copy = join(staging, 'store.sqlite');
      await step(
        'the store',
        async () => {
          // The online backup API: a consistent copy while serve writes, never the live file and its WAL.
          const db = new Database(paths.store, { readonly: true, fileMustExist: true });
          try {
            await db.backup(copy);
          } finally {
            db.close();
          }
          await chmod(copy, 0o600);
        },
        paths.store,
      );
      // What the copy holds is what the rest of the archive follows: its applications, keys and add-ons.
      store = await openSqliteStore(copy);
    }
    log(`==> the store (${postgresStore ? 'PostgreSQL, pg_dump' : 'SQLite, online backup'})`);
    let apps: AppRecord[];
    let addons: AddonRecord[];
    try {
      [apps, addons] = [await store.listApps(), await store.listAddons()];
    } finally {
      await store.close();
    }
    // Closed, the copy holds everything in its one file: its WAL, if any is left, is not archived.
    for (const suffix of ['-wal', '-shm', '-journal']) await rm(join(staging, `store.sqlite${suffix}`), { force: true });
    await writeSecretFile(join(staging, 'settings.json'), await readFile(paths.settings));
    await writeSecretFile(join(staging, 'api-token'), await readFile(paths.apiToken));
    await mkdir(join(staging, 'ssh'), { mode: 0o700 });
    for (const name of ['ssh_host_ed25519_key', 'ssh_host_ed25519_key.pub', 'authorized_keys']) {
      const file = join(paths.sshDir, name);
      if (existsSync(file)) await writeSecretFile(join(staging, 'ssh', name), await readFile(file));
    }
    log('==> the settings, the API token and the SSH host key');
    await mkdir(join(staging, 'git'), { mode: 0o700 });
    for (const app of apps) {
      const repository = repositoryPath(paths, app.id);
      if (!existsSync(repository)) continue;
      await step(`the repository of ${app.name}`, () => bundle(repository, join(staging, 'git', `${app.id}.bundle`)), repository);
    }
    log(`==> ${apps.length} repositor${apps.length === 1 ? 'y' : 'ies'} (git bundles)`);
    // Caddy's data: its local CA (browsers that trust its root keep trusting the restored host) and certificates.
    const edgeData = join(paths.edgeDir, 'data');
    if (existsSync(edgeData)) await step('the edge', () => cp(edgeData, join(staging, 'edge', 'data'), { recursive: true, verbatimSymlinks: true }), edgeData);
    log("==> the edge's data (its CA and certificates)");
    for (const addon of addons) {
      if ((addon.config.engine ?? 'local') !== 'local') {
        throw failed(`the add-on ${addon.name}`, new Error('it runs as a service of a Docker swarm, which backup does not reach; back it up with the swarm’s own tools.'));
      }
      const out = join(staging, dumpName(addon));
      await mkdir(dirname(out), { recursive: true, mode: 0o700 });
      const detail = await step(`the ${addon.provider} add-on ${addon.name}`, () => dumpAddon(addon, paths.addonsDir, out));
      log(`==> the ${addon.provider} add-on ${addon.name}${detail === undefined ? '' : ` (${detail})`}`);
    }
    const manifest = await makeManifest(staging, postgresStore ? 'postgresql' : 'sqlite', options.now ?? new Date());
    await writeSecretFile(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    await step(
      'the archive',
      async () => {
        const output = createWriteStream(temporary, { mode: 0o600, flags: 'wx' });
        // Each entry by name (noDirRecurse: no file twice), and the empty folders too (an empty bucket in s3rver's folder is one).
        const names = [MANIFEST, ...manifest.entries.map((e) => e.path), ...(await emptyFoldersUnder(staging))];
        const packed = createTar({ gzip: true, cwd: staging, portable: true, noDirRecurse: true }, names);
        if (passphrase === undefined) await pipeline(packed, output);
        else {
          const { header, cipher } = encryption(passphrase);
          output.write(header);
          await pipeline(packed, cipher, output);
        }
        const handle = await open(temporary, 'r');
        await handle.sync();
        await handle.close();
        await chmod(temporary, 0o600);
        await rename(temporary, to);
      },
      to,
    );
    const bytes = manifest.entries.reduce((sum, e) => sum + e.size, 0);
    return { file: to, encrypted: passphrase !== undefined, entries: manifest.entries.length, bytes, apps: apps.length, addons: addons.length };
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(temporary, { force: true });
  }
}

/** A repository as one git bundle of every ref: a consistent snapshot while pushes land (nothing, for a repository never pushed to). */
async function bundle(repository: string, out: string): Promise<void> {
  // The repository is the SSH user's: root reads it without git's safe.directory refusal.
  const git = (...args: string[]) => runChecked('git', ['-c', 'safe.directory=*', `--git-dir=${repository}`, ...args], { timeoutMs: 0 });
  const refs = (await git('for-each-ref', '--format=%(refname)')).stdout.trim();
  if (refs === '') return;
  await git('bundle', 'create', out, '--all');
  await chmod(out, 0o600);
}
