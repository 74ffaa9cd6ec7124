import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { freePort } from '../deploy/free-port.js';
import { HostErrors } from '../errors.js';
import { type AddonServer, ServerPerAddon, type ServerPerAddonOptions } from './server-per-addon.js';

const LOOPBACK = '127.0.0.1';

export interface StorageProviderOptions extends ServerPerAddonOptions {
  /** How to run the server: `[node, <data>/bin/storage-server.cjs]` (serve installs it). */
  readonly program: readonly string[];
}

/**
 * Object storage add-ons, S3-compatible: one server per add-on (s3rver, with the
 * add-on's own key pair, every request's names and SigV4 signature checked: see
 * storage-main.ts), on its own loopback port, its objects in its own folder (0700),
 * run as the add-on's own account (addon-accounts.ts), so that not even a path bug
 * of the server reaches another add-on's objects. The folders, accounts and servers'
 * lifecycle: server-per-addon.ts.
 * The link injects the key pair and the endpoint's host; the customer names the
 * bucket (STORAGE_ADDON_BUCKET_NAME) and the endpoint (STORAGE_ADDON_ENDPOINT), as
 * the specification's Active Storage recipe does.
 */
export class StorageProvider extends ServerPerAddon {
  constructor(private readonly options: StorageProviderOptions) {
    super('storage', 'objects', options);
  }

  protected async newConfig(): Promise<Record<string, string>> {
    // An access key id as S3's look (20 upper-case letters and digits), a 40-character secret.
    const keyId = `RP${randomBytes(9).toString('hex').toUpperCase()}`;
    return { host: LOOPBACK, port: String(await freePort()), keyId, secret: randomBytes(30).toString('base64url') };
  }

  protected checkConfig(id: string, config: Readonly<Record<string, string>>): void {
    const { port = '', keyId = '', secret = '' } = config;
    if (!/^\d+$/.test(port) || !/^RP[0-9A-F]{18}$/.test(keyId) || !/^[\w-]{40}$/.test(secret)) {
      throw HostErrors.INPUT_USAGE.create({ message: `the storage add-on ${id} has no port or key pair the host made`, details: { addonId: id } });
    }
  }

  variables(config: Readonly<Record<string, string>>): Record<string, string> {
    const { host = LOOPBACK, port = '', keyId = '', secret = '' } = config;
    return { STORAGE_ADDON_HOST: `${host}:${port}`, STORAGE_ADDON_KEY_ID: keyId, STORAGE_ADDON_KEY_SECRET: secret };
  }

  protected addonServer(id: string, config: Readonly<Record<string, string>>, objects: string): AddonServer {
    const { port = '', keyId = '', secret = '' } = config;
    const [command = process.execPath, ...args] = this.options.program;
    return {
      configFile: { name: 'storage.json', text: `${JSON.stringify({ port: Number(port), directory: objects, keyId, secret })}\n` },
      server: {
        what: `storage add-on ${id}`,
        command,
        // Relative to its working folder: the add-on's id (in the folder's name) is on no command line `ps` shows.
        args: [...args, 'storage.json'],
        logFile: join(this.folder(id), 'storage.log'),
        // Any HTTP answer will do: an unsigned request is refused with 403 once it listens.
        ready: () =>
          fetch(`http://${LOOPBACK}:${port}/`, { signal: AbortSignal.timeout(2000) }).then(
            (r) => r.status === 403,
            () => false,
          ),
      },
    };
  }
}
