import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, cp, lstat, mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { extract as extractTar } from 'tar';
import { copyIntoGateway } from '../addons/bucket-copy.js';
import { gatewayAccess } from '../addons/gateway-objects.js';
import { PostgresqlProvider } from '../addons/postgresql.js';
import { StorageProvider } from '../addons/storage.js';
import { keptOrFreePort } from '../deploy/free-port.js';
import { HostErrors } from '../errors.js';
import { makeDataFolders } from '../host-files.js';
import { type HostPaths, hostPaths, repositoryPath } from '../paths.js';
import { runChecked } from '../programs.js';
import { DEFAULT_SETTINGS, type HostSettings, writeSettings } from '../settings.js';
import { ensureSshUser } from '../ssh/ssh-user.js';
import { openHostStore } from '../store/open-store.js';
import type { AddonRecord, HostStore } from '../store/store.js';
import { decryption, isEncrypted, readKeyFile } from './archive-cipher.js';
import { dumpName, loadPostgresDump, placeRedisData } from './addon-data.js';
import { type BackupManifest, verifiedManifest } from './manifest.js';
import { pgEnvironment } from './pg-environment.js';
import { writeSecretFile } from './secret-file.js';
import { archivedBuckets } from './storage-archive.js';

/** What a restore may change of the archived host: its ports and SSH account (to try it beside the one running), its store's database. */
export interface RestoreOptions {
  readonly sshPort?: number;
  readonly httpsPort?: number;
  readonly httpPort?: number;
  readonly sshUser?: string;
  /** The PostgreSQL database (empty) a PostgreSQL store is restored into. */
  readonly store?: string;
  /** The key file an encrypted archive was made with (backup --encrypt-with). */
  readonly decryptWith?: string;
}

export interface RestoreResult {
  readonly manifest: Omit<BackupManifest, 'entries'>;
  readonly settings: HostSettings;
  readonly apps: number;
  readonly addons: number;
  /** Add-on servers given another port than the archived one (that one was taken on this machine): their links follow at the next deploy. */
  readonly movedAddons: readonly { readonly name: string; readonly from: string; readonly to: string }[];
  /** Storage add-ons whose user the restored host's gateway made again: new keys and port, which their applications get at the next deploy. */
  readonly newKeys: readonly string[];
}

/**
 * `runplan-host restore FILE --data DIR`: a backup made by `runplan-host backup` made a host again in a
 * new data folder. Every entry is checked against the manifest before anything is written; the host is
 * built in a folder beside DIR and renamed to DIR once whole, so a restore that fails leaves nothing.
 * Add-on servers get their data back (PostgreSQL: the cluster made and each database loaded; Redis: its
 * file, which its server reads at serve's start; storage: the Ceph cluster made, each add-on's user made
 * again with new keys, its buckets and objects put and checked, from this host's archive or an s3rver-era
 * one); every server restore started is stopped before it ends. Serve then deploys every application's
 * current release again from its repository, with the release's variables.
 */
export async function restoreHost(archive: string, paths: HostPaths, options: RestoreOptions, log: (line: string) => void): Promise<RestoreResult> {
  refuseHeldFolder(paths);
  const parent = dirname(paths.root);
  await mkdir(parent, { recursive: true });
  const unpack = join(parent, `.${basename(paths.root)}.${randomBytes(6).toString('hex')}.unpack`);
  const build = hostPaths(join(parent, `.${basename(paths.root)}.${randomBytes(6).toString('hex')}.restoring`));
  let store: HostStore | undefined;
  let cluster: PostgresqlProvider | undefined;
  let storage: StorageProvider | undefined;
  const failed = (part: string, cause: unknown) =>
    HostErrors.RESTORE_FAILED.create({
      message: `${part} could not be restored: ${String((cause as { stderr?: string }).stderr || (cause as Error).message || cause)
        .trim()
        .split('\n')
        .slice(-3)
        .join(' | ')}`,
      file: archive,
      details: { part },
      cause,
    });
  const step = async <T>(part: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw failed(part, error);
    }
  };
  try {
    if (!existsSync(archive)) throw HostErrors.INPUT_USAGE.create({ message: `there is no archive ${archive}.`, file: archive });
    const encrypted = await isEncrypted(archive);
    if (encrypted && options.decryptWith === undefined) {
      throw HostErrors.INPUT_USAGE.create({ message: `${archive} is encrypted: give the key file it was made with (--decrypt-with FILE).`, file: archive });
    }
    const passphrase = options.decryptWith === undefined ? undefined : await readKeyFile(options.decryptWith);
    await mkdir(unpack, { mode: 0o700 });
    try {
      let packed = archive;
      if (encrypted && passphrase !== undefined) {
        packed = `${unpack}.tar.gz`;
        const { source, decipher } = await decryption(archive, passphrase);
        await pipeline(source, decipher, createWriteStream(packed, { mode: 0o600, flags: 'wx' }));
      }
      await extractTar({ file: packed, cwd: unpack, strict: true, preservePaths: false });
    } catch (error) {
      const how = encrypted ? `cannot be decrypted with ${options.decryptWith} and unpacked (another key, or a damaged archive)` : 'cannot be unpacked';
      throw HostErrors.RESTORE_CORRUPT.create({ message: `${archive} ${how}: ${(error as Error).message}`, file: archive, details: { entry: basename(archive) }, cause: error });
    }
    const manifest = await verifiedManifest(unpack, archive);
    log(`==> ${archive}: ${manifest.entries.length} entries, each matching its sha256 (made by runplan-host ${manifest.runplanHost} at ${manifest.createdAt})`);
    const archived = { ...DEFAULT_SETTINGS, ...(JSON.parse(readFileSync(join(unpack, 'settings.json'), 'utf8')) as Partial<HostSettings>) };
    const settings: HostSettings = {
      ...archived,
      ...(options.sshPort === undefined ? {} : { sshPort: options.sshPort }),
      ...(options.httpsPort === undefined ? {} : { httpsPort: options.httpsPort }),
      ...(options.httpPort === undefined ? {} : { httpPort: options.httpPort }),
      ...(options.sshUser === undefined ? {} : { sshUser: options.sshUser }),
    };
    await mkdir(build.root, { mode: 0o711 });
    await writeSettings(build, settings);
    await writeSecretFile(build.apiToken, readFileSync(join(unpack, 'api-token')));
    if (manifest.store === 'postgresql') {
      if (options.store === undefined || !/^postgres(ql)?:\/\//.test(options.store)) {
        throw failed('the store', new Error('the archive holds a PostgreSQL store: give --store postgres://… naming an empty database to load it into.'));
      }
      const url = options.store;
      await step('the PostgreSQL store', () =>
        runChecked('pg_restore', ['--no-owner', '--exit-on-error', '-d', pgEnvironment(url).PGDATABASE ?? '', join(unpack, 'store.pgdump')], { env: pgEnvironment(url), timeoutMs: 0 }),
      );
      await writeSecretFile(build.storeUrl, `${url}\n`);
    } else {
      if (options.store !== undefined) {
        throw HostErrors.INPUT_USAGE.create({
          message: `${archive} holds an SQLite store: --store is for the archive of a PostgreSQL store.`,
          fix: 'Restore without --store, then move the store with runplan-host migrate-store --to postgres://… if you want it in PostgreSQL.',
        });
      }
      await cp(join(unpack, 'store.sqlite'), build.store);
      await chmod(build.store, 0o600);
    }
    log(`==> the store (${manifest.store}), the settings and the API token`);
    await makeDataFolders(build);
    // Its home is the final folder's ssh/, as init makes it.
    const owner = await ensureSshUser(settings.sshUser, paths.sshDir);
    for (const name of existsSync(join(unpack, 'ssh')) ? readdirSync(join(unpack, 'ssh')) : []) {
      await cp(join(unpack, 'ssh', name), join(build.sshDir, name));
      await chmod(join(build.sshDir, name), name.endsWith('_key') ? 0o600 : 0o644);
    }
    log('==> the SSH host key and authorized keys');
    store = await step('the store', () => openHostStore(build));
    const apps = await store.listApps();
    for (const app of apps) {
      const bundle = join(unpack, 'git', `${app.id}.bundle`);
      if (!existsSync(bundle)) continue;
      await step(`the repository of ${app.name}`, () => unbundle(bundle, repositoryPath(build, app.id), owner));
    }
    log(`==> ${apps.length} repositor${apps.length === 1 ? 'y' : 'ies'}`);
    if (existsSync(join(unpack, 'edge', 'data'))) {
      await cp(join(unpack, 'edge', 'data'), join(build.edgeDir, 'data'), { recursive: true });
      await chmod(join(build.edgeDir, 'data'), 0o700);
    }
    log("==> the edge's data (its CA and certificates)");
    const movedAddons: { name: string; from: string; to: string }[] = [];
    const addons = await store.listAddons();
    const movePort = async (addon: AddonRecord, port: number) => {
      if (String(port) === addon.config.port) return;
      movedAddons.push({ name: addon.name, from: addon.config.port ?? '', to: String(port) });
      await (store as HostStore).changeAddonConfig(addon.id, { ...addon.config, port: String(port) });
    };
    for (const addon of addons.filter((a) => a.provider === 'redis')) {
      const data = join(unpack, dumpName(addon));
      await step(`the redis add-on ${addon.name}`, async () => {
        if (existsSync(data)) await placeRedisData(data, build.addonsDir, addon.id);
        await movePort(addon, await keptOrFreePort(Number(addon.config.port)));
      });
      log(`==> the redis add-on ${addon.name}`);
    }
    const storageAddons = addons.filter((a) => a.provider === 'storage');
    const newKeys: string[] = [];
    if (storageAddons.length > 0) {
      const provider = new StorageProvider({ dir: join(build.addonsDir, 'storage'), ...(settings.storage ?? {}) });
      storage = provider;
      await step('the storage add-ons’ Ceph cluster', () => provider.start());
      for (const addon of storageAddons) {
        // Its user made again, with new keys (a gateway's keys cannot be given): the releases get them when serve deploys them.
        const copied = await step(`the storage add-on ${addon.name}`, async () => {
          const made = await provider.create(addon);
          const totals = await copyIntoGateway(gatewayAccess(made.config), await archivedBuckets(join(unpack, dumpName(addon))));
          await (store as HostStore).changeAddonConfig(addon.id, made.config);
          return totals;
        });
        newKeys.push(addon.name);
        log(`==> the storage add-on ${addon.name}: ${copied.buckets} bucket(s), ${copied.objects} object(s), ${copied.bytes} bytes, each object's ETag checked`);
      }
      await provider.stop();
      storage = undefined;
      // Made in the folder being built: its config names the folder it will be in once renamed.
      provider.cluster.relocate(join(paths.addonsDir, 'storage', 'ceph'));
    }
    const databases = addons.filter((a) => a.provider === 'postgresql');
    if (databases.length > 0) {
      const archivedPort = Number(databases[0]?.config.port);
      const dir = join(build.addonsDir, 'postgresql');
      const server = new PostgresqlProvider({ dir, port: await keptOrFreePort(Number.isInteger(archivedPort) ? archivedPort : undefined) });
      cluster = server;
      await step('the PostgreSQL add-ons’ cluster', () => server.start());
      for (const addon of databases) {
        await step(`the postgresql add-on ${addon.name}`, async () => {
          const database = await server.recreate(addon, addon.config);
          await loadPostgresDump(join(unpack, dumpName(addon)), build.addonsDir, server.port, database);
          await movePort(addon, server.port);
        });
        log(`==> the postgresql add-on ${addon.name}`);
      }
      await server.stop();
      cluster = undefined;
    }
    await store.close();
    store = undefined;
    if (existsSync(paths.root)) await rmdir(paths.root);
    await rename(build.root, paths.root);
    const { entries: _, ...about } = manifest;
    return { manifest: about, settings, apps: apps.length, addons: addons.length, movedAddons, newKeys };
  } finally {
    await cluster?.stop().catch(() => undefined);
    await storage?.stop().catch(() => undefined);
    await store?.close().catch(() => undefined);
    await rm(unpack, { recursive: true, force: true });
    await rm(`${unpack}.tar.gz`, { force: true });
    await rm(build.root, { recursive: true, force: true });
  }
}

/** A restore never writes over a host, nor into a folder holding anything else. */
function refuseHeldFolder(paths: HostPaths): void {
  if (!existsSync(paths.root)) return;
  const held = [paths.settings, paths.apiToken, paths.store, paths.storeUrl].find((f) => existsSync(f));
  const entries = readdirSync(paths.root);
  if (held === undefined && entries.length === 0) return;
  throw HostErrors.RESTORE_TARGET_NOT_EMPTY.create({
    message: held ? `${paths.root} already holds a runplan host (${held}).` : `${paths.root} is not empty (${entries.slice(0, 3).join(', ')}).`,
    file: held ?? paths.root,
  });
}

/** A repository made again from its bundle, the SSH user's as serve keeps it (serve writes its config and hook). */
async function unbundle(bundle: string, repository: string, owner: { uid: number; gid: number }): Promise<void> {
  await runChecked('git', ['init', '-q', '--bare', '--template=', '--initial-branch=master', repository], { timeoutMs: 0 });
  await runChecked('git', ['-c', 'safe.directory=*', `--git-dir=${repository}`, 'fetch', '-q', bundle, '+refs/*:refs/*'], { timeoutMs: 0 });
  await chownTree(repository, owner);
  await chmod(repository, 0o700);
}

async function chownTree(path: string, owner: { uid: number; gid: number }): Promise<void> {
  const stat = await lstat(path);
  if (stat.isSymbolicLink()) return;
  await chown(path, owner.uid, owner.gid);
  if (stat.isDirectory()) for (const entry of await readdir(path)) await chownTree(join(path, entry), owner);
}
