import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../deploy/free-port.js';
import { HostErrors } from '../errors.js';
import { ADDON_ID } from '../store/store.js';
import type { AddonProvider, AddonRef, CreatedAddon, ExistingAddon } from './provider.js';
import { ensureAddonAccount, ownTree, removeAddonAccount } from './addon-accounts.js';
import { type ServerAccount, ServerProcess } from './server-process.js';
import type { Supervisor } from '../supervision/supervisor.js';

const LOOPBACK = '127.0.0.1';

export interface StorageProviderOptions {
  /** `<data>/addons/storage`: one folder per add-on (`<id>/`: its config, log and objects). */
  readonly dir: string;
  /** How to run the server: `[node, <data>/bin/storage-server.cjs]` (serve installs it). */
  readonly program: readonly string[];
  /** Who the servers run as: by default each add-on's own account when the host runs as root (null: the host's own user). */
  readonly account?: ServerAccount | null;
  /** The host's supervisor: a death and restart of a server is in the host's log and its state in status. */
  readonly supervisor?: Supervisor;
}

/**
 * Object storage add-ons, S3-compatible: one server per add-on (s3rver, with the
 * add-on's own key pair, every request's names and SigV4 signature checked: see
 * storage-main.ts), on its own loopback port, its objects in its own folder (0700),
 * run as the add-on's own account (addon-accounts.ts), so that not even a path bug
 * of the server reaches another add-on's objects.
 * The link injects the key pair and the endpoint's host; the customer names the
 * bucket (STORAGE_ADDON_BUCKET_NAME) and the endpoint (STORAGE_ADDON_ENDPOINT), as
 * the specification's Active Storage recipe does.
 */
export class StorageProvider implements AddonProvider {
  readonly kind = 'storage' as const;
  private readonly running = new Map<string, ServerProcess>();
  private prepared = false;

  constructor(private readonly options: StorageProviderOptions) {}

  folder(addonId: string): string {
    if (!ADDON_ID.test(addonId)) throw HostErrors.INPUT_USAGE.create({ message: `${addonId} is not an add-on id (addon_<uuid>)`, details: { addonId } });
    return join(this.options.dir, addonId);
  }

  pid(addonId: string): number | undefined {
    return this.running.get(addonId)?.pid;
  }

  async start(existing: readonly ExistingAddon[] = []): Promise<void> {
    await this.prepare();
    await Promise.all(existing.map((a) => this.startInstance(a.id, a.config)));
  }

  async create(addon: AddonRef): Promise<CreatedAddon> {
    await this.prepare();
    // An access key id as S3's look (20 upper-case letters and digits), a 40-character secret.
    const keyId = `RP${randomBytes(9).toString('hex').toUpperCase()}`;
    const config = { host: LOOPBACK, port: String(await freePort()), keyId, secret: randomBytes(30).toString('base64url') };
    try {
      await this.startInstance(addon.id, config);
    } catch (error) {
      rmSync(this.folder(addon.id), { recursive: true, force: true });
      if (this.options.account === undefined) await removeAddonAccount('storage', addon.id).catch(() => {});
      throw error;
    }
    return { config, variables: this.variables(config) };
  }

  variables(config: Readonly<Record<string, string>>): Record<string, string> {
    const { host = LOOPBACK, port = '', keyId = '', secret = '' } = config;
    return { STORAGE_ADDON_HOST: `${host}:${port}`, STORAGE_ADDON_KEY_ID: keyId, STORAGE_ADDON_KEY_SECRET: secret };
  }

  async remove(addon: AddonRef): Promise<void> {
    const folder = this.folder(addon.id);
    const server = this.running.get(addon.id);
    this.running.delete(addon.id);
    await server?.stop();
    rmSync(folder, { recursive: true, force: true });
    if (this.options.account === undefined) await removeAddonAccount('storage', addon.id);
  }

  async stop(): Promise<void> {
    const servers = [...this.running.values()];
    this.running.clear();
    await Promise.all(servers.map((s) => s.stop()));
  }

  private async prepare(): Promise<void> {
    if (this.prepared) return;
    mkdirSync(this.options.dir, { recursive: true, mode: 0o711 });
    this.prepared = true;
  }

  private async startInstance(id: string, config: Readonly<Record<string, string>>): Promise<void> {
    if (this.running.has(id)) return;
    const { port = '', keyId = '', secret = '' } = config;
    if (!/^\d+$/.test(port) || !/^RP[0-9A-F]{18}$/.test(keyId) || !/^[\w-]{40}$/.test(secret)) {
      throw HostErrors.INPUT_USAGE.create({ message: `the storage add-on ${id} has no port or key pair the host made`, details: { addonId: id } });
    }
    const folder = this.folder(id);
    const objects = join(folder, 'objects');
    mkdirSync(objects, { recursive: true, mode: 0o700 });
    chmodSync(folder, 0o700);
    const account = this.options.account === undefined ? await ensureAddonAccount('storage', id) : (this.options.account ?? undefined);
    // A folder an earlier host gave the shared runplan-storage account becomes this add-on's own.
    if (account) ownTree(folder, account);
    // Written at every start from the store's config: the store is the truth, the file follows it.
    const file = join(folder, 'storage.json');
    writeFileSync(file, `${JSON.stringify({ port: Number(port), directory: objects, keyId, secret })}\n`, { mode: 0o600 });
    if (account) chownSync(file, account.uid, account.gid);
    const [command = process.execPath, ...args] = this.options.program;
    const server = await ServerProcess.start({
      supervisor: this.options.supervisor,
      what: `storage add-on ${id}`,
      command,
      // Relative to its working folder: the add-on's id (in the folder's name) is on no command line `ps` shows.
      args: [...args, 'storage.json'],
      cwd: folder,
      account,
      logFile: join(folder, 'storage.log'),
      // Any HTTP answer will do: an unsigned request is refused with 403 once it listens.
      ready: () =>
        fetch(`http://${LOOPBACK}:${port}/`, { signal: AbortSignal.timeout(2000) }).then(
          (r) => r.status === 403,
          () => false,
        ),
    });
    this.running.set(id, server);
  }
}
