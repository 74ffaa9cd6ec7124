import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { HostErrors } from './errors.js';
import { makeApiToken, makeDataFolders } from './host-files.js';
import type { HostPaths } from './paths.js';
import { DEFAULT_SETTINGS, type HostSettings, writeSettings } from './settings.js';
import { ensureSshUser } from './ssh/ssh-user.js';
import { openSqliteStore } from './store/sqlite-store.js';

/** `runplan-host init`: the data folder, its settings, the store, the API token and the SSH user. Run again, it keeps the store and the token. */
export async function initHost(paths: HostPaths, chosen: Partial<HostSettings>): Promise<{ settings: HostSettings; created: boolean }> {
  const settings: HostSettings = { ...DEFAULT_SETTINGS, ...chosen };
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
  const created = !existsSync(paths.apiToken);
  // Its home is ssh/: sshd's StrictModes checks the folders above authorized_keys up to the home.
  await ensureSshUser(settings.sshUser, paths.sshDir);
  await makeDataFolders(paths);
  await writeSettings(paths, settings);
  if (created) await makeApiToken(paths);
  const store = await openSqliteStore(paths.store);
  await store.close();
  return { settings, created };
}
