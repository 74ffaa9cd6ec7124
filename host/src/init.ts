import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from 'runplan/process';
import { isAbsolute } from 'node:path';
import { HostErrors } from './errors.js';
import { makeApiToken, makeDataFolders } from './host-files.js';
import type { HostPaths } from './paths.js';
import { MIN_DISK_MB } from 'runplan';
import { DEFAULT_SETTINGS, HOST_ENGINES, type HostSettings, LOCAL_WALLS, readSettings, RELEASE_NETWORK_MODES, writeSettings } from './settings.js';
import { ensureSshUser } from './ssh/ssh-user.js';
import { openHostStore, usesPostgres } from './store/open-store.js';
import { openPostgresStore } from './store/postgres-store.js';
import { openSqliteStore } from './store/sqlite-store.js';

/** `runplan-host init`: the data folder, its settings, the store, the API token and the SSH user. Run again, it keeps the store and the token. */
export async function initHost(paths: HostPaths, chosen: Partial<HostSettings>, { store }: { store?: string } = {}): Promise<{ settings: HostSettings; created: boolean }> {
  const settings: HostSettings = withoutZeroDisk({ ...DEFAULT_SETTINGS, ...(await wallsOf(paths, chosen)), ...chosen });
  for (const [name, port] of [
    ['--ssh-port', settings.sshPort],
    ['--https-port', settings.httpsPort],
    ['--http-port', settings.httpPort],
  ] as const) {
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw HostErrors.INPUT_USAGE.create({ message: `${name} must be a port number (1-65535).` });
  }
  if (!/^[a-z0-9]([a-z0-9.-]{0,200}[a-z0-9])?$/.test(settings.domain)) throw HostErrors.INPUT_USAGE.create({ message: `--domain ${JSON.stringify(settings.domain.slice(0, 60))} is not a host name.` });
  if (settings.cacheDir !== undefined && !isAbsolute(settings.cacheDir))
    throw HostErrors.INPUT_USAGE.create({ message: `--cache-dir ${JSON.stringify(settings.cacheDir.slice(0, 80))} is not an absolute path.` });
  if (!HOST_ENGINES.includes(settings.engine))
    throw HostErrors.INPUT_USAGE.create({ message: `--engine takes ${HOST_ENGINES.join(' or ')}, not ${JSON.stringify(String(settings.engine).slice(0, 40))}.` });
  if (settings.dockerHost !== undefined && settings.engine !== 'swarm')
    throw HostErrors.INPUT_USAGE.create({ message: '--docker-host names the engine of --engine swarm; this host runs its releases locally.' });
  if (settings.engine === 'swarm' && (chosen.releaseNetwork !== undefined || chosen.diskMb !== undefined))
    throw HostErrors.INPUT_USAGE.create({ message: '--release-network and --disk-mb wall in the releases of the local engine; a swarm gives each task its own container.' });
  if (settings.releaseNetwork !== undefined && !RELEASE_NETWORK_MODES.includes(settings.releaseNetwork))
    throw HostErrors.INPUT_USAGE.create({ message: `--release-network takes ${RELEASE_NETWORK_MODES.join(' or ')}, not ${JSON.stringify(String(settings.releaseNetwork).slice(0, 40))}.` });
  if (chosen.diskMb !== undefined && (!Number.isInteger(chosen.diskMb) || (chosen.diskMb !== 0 && chosen.diskMb < MIN_DISK_MB)))
    throw HostErrors.INPUT_USAGE.create({
      message: `--disk-mb takes a number of MiB, ${MIN_DISK_MB} at least, or 0 for no disk of its own; not ${JSON.stringify(String(chosen.diskMb).slice(0, 40))}.`,
    });
  if (settings.acme !== undefined && (settings.domain === 'localhost' || settings.domain.endsWith('.localhost')))
    throw HostErrors.INPUT_USAGE.create({
      message: `no ACME certificate authority issues certificates for ${settings.domain}: give --domain a name of yours with --acme-email, or leave --acme-email out.`,
    });
  const created = !existsSync(paths.apiToken);
  // Its home is ssh/: sshd's StrictModes checks the folders above authorized_keys up to the home.
  await ensureSshUser(settings.sshUser, paths.sshDir);
  await makeDataFolders(paths);
  await writeSettings(paths, settings);
  if (created) await makeApiToken(paths);
  if (store !== undefined) await chooseStore(paths, store);
  await (await openHostStore(paths)).close();
  return { settings, created };
}

/**
 * The walls of the local engine a setting does not choose: a new host's are
 * LOCAL_WALLS; a host initialised again keeps its own (one made before init
 * wrote them has none: its running releases stay as they are).
 */
async function wallsOf(paths: HostPaths, chosen: Partial<HostSettings>): Promise<Partial<HostSettings>> {
  if ((chosen.engine ?? DEFAULT_SETTINGS.engine) !== 'local') return {};
  if (!existsSync(paths.settings)) return LOCAL_WALLS;
  const current = await readSettings(paths);
  return {
    ...(current.releaseNetwork === undefined ? {} : { releaseNetwork: current.releaseNetwork }),
    ...(current.diskMb === undefined ? {} : { diskMb: current.diskMb }),
  };
}

/** `--disk-mb 0`: no disk of its own, as a setting left out. */
function withoutZeroDisk(settings: HostSettings): HostSettings {
  if (settings.diskMb !== 0) return settings;
  const { diskMb: _none, ...rest } = settings;
  return rest;
}

/**
 * `--store sqlite` (the default) or `--store postgres://…`: the URL is kept in
 * store-url, root's alone. A host never moves to another store with init: its
 * data would stay behind (migrate-store copies it).
 */
async function chooseStore(paths: HostPaths, store: string): Promise<void> {
  const current = usesPostgres(paths) ? (await readFile(paths.storeUrl, 'utf8')).trim() : 'sqlite';
  if (store === current) return;
  const moving = () =>
    HostErrors.INPUT_USAGE.create({
      message: `this host's store is ${current === 'sqlite' ? 'its SQLite file' : 'in PostgreSQL'} already; init does not move it.`,
      fix: 'Copy an SQLite store into PostgreSQL with runplan-host migrate-store --to postgres://…; or init another data folder.',
    });
  if (store === 'sqlite' || current !== 'sqlite') throw moving();
  if (!/^postgres(ql)?:\/\//.test(store)) throw HostErrors.INPUT_USAGE.create({ message: '--store takes sqlite or a PostgreSQL URL (postgres://user:password@host:port/database).' });
  if (existsSync(paths.store)) {
    const sqlite = await openSqliteStore(paths.store);
    const held = (await sqlite.listApps()).length + (await sqlite.listKeys()).length + (await sqlite.listAddons()).length;
    await sqlite.close();
    if (held > 0) throw moving();
  }
  // Opened first: a URL that does not work is refused before the host depends on it.
  await (await openPostgresStore(store)).close();
  await writeFileAtomic(paths.storeUrl, `${store}\n`, 0o600);
}
