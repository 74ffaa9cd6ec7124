import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HostErrors } from '../errors.js';
import { ADDON_ID } from '../store/store.js';
import type { Supervisor } from '../supervision/supervisor.js';
import { ensureAddonAccount, ownTree, removeAddonAccount, type WalledKind } from './addon-accounts.js';
import type { AddonProvider, AddonRef, CreatedAddon, ExistingAddon } from './provider.js';
import { type ServerAccount, ServerProcess, type StartServerOptions } from './server-process.js';

/** What every provider of one server per add-on is given. */
export interface ServerPerAddonOptions {
  /** `<data>/addons/<kind>`: one folder per add-on (`<id>/`: its config file, log and data). */
  readonly dir: string;
  /** Who the servers run as: by default each add-on's own account when the host runs as root (null: the host's own user). */
  readonly account?: ServerAccount | null;
  /** The host's supervisor: a death and restart of a server is in the host's log and its state in status. */
  readonly supervisor?: Supervisor;
}

/** One add-on's server as its kind runs it, in the add-on's folder. */
export interface AddonServer {
  /** Its config file, in the add-on's folder, written (0600, the account's) at every start from the store's config: the store is the truth, the file follows it. */
  readonly configFile: { readonly name: string; readonly text: string };
  /** What ServerProcess.start() needs besides the folder, the account and the supervisor. */
  readonly server: Omit<StartServerOptions, 'cwd' | 'account' | 'supervisor'>;
}

/**
 * The lifecycle the add-on kinds with one server per add-on share (Redis, object storage):
 * each add-on's folder (0700) under `dir` (0711: searchable, not listable), its own
 * account when the host runs as root (addon-accounts.ts), its config file written at
 * every start, its server supervised and stopped by PID; create() undoes what it made
 * when the server does not start, remove() deletes the data and the account. A kind
 * says what its config is (made, checked), its config file, and how its server runs.
 */
export abstract class ServerPerAddon implements AddonProvider {
  private readonly running = new Map<string, ServerProcess>();
  private prepared = false;

  /** `dataFolder`: the folder under each add-on's folder where its server keeps its data. */
  constructor(
    readonly kind: WalledKind,
    private readonly dataFolder: string,
    private readonly base: ServerPerAddonOptions,
  ) {}

  /** A new add-on's config (its port, its secrets): what the store keeps. */
  protected abstract newConfig(): Promise<Record<string, string>>;
  /** Throws INPUT_USAGE for a config the host did not make. */
  protected abstract checkConfig(id: string, config: Readonly<Record<string, string>>): void;
  /** How the add-on's server runs, from its config and its data folder. */
  protected abstract addonServer(id: string, config: Readonly<Record<string, string>>, data: string): AddonServer;
  abstract variables(config: Readonly<Record<string, string>>): Record<string, string>;

  /** The folder of one add-on's instance. */
  folder(addonId: string): string {
    if (!ADDON_ID.test(addonId)) throw HostErrors.INPUT_USAGE.create({ message: `${addonId} is not an add-on id (addon_<uuid>)`, details: { addonId } });
    return join(this.base.dir, addonId);
  }

  /** The PID of an add-on's running instance. */
  pid(addonId: string): number | undefined {
    return this.running.get(addonId)?.pid;
  }

  /** Starts the instances of the add-ons the host already has (serve start), all at once. */
  async start(existing: readonly ExistingAddon[] = []): Promise<void> {
    this.prepare();
    await Promise.all(existing.map((a) => this.startInstance(a.id, a.config)));
  }

  async create(addon: AddonRef): Promise<CreatedAddon> {
    this.prepare();
    const config = await this.newConfig();
    try {
      await this.startInstance(addon.id, config);
    } catch (error) {
      rmSync(this.folder(addon.id), { recursive: true, force: true });
      if (this.base.account === undefined) await removeAddonAccount(this.kind, addon.id).catch(() => {});
      throw error;
    }
    return { config, variables: this.variables(config) };
  }

  async remove(addon: AddonRef, _config?: Readonly<Record<string, string>>): Promise<void> {
    const folder = this.folder(addon.id);
    const server = this.running.get(addon.id);
    this.running.delete(addon.id);
    await server?.stop();
    rmSync(folder, { recursive: true, force: true });
    if (this.base.account === undefined) await removeAddonAccount(this.kind, addon.id);
  }

  async stop(): Promise<void> {
    const servers = [...this.running.values()];
    this.running.clear();
    await Promise.all(servers.map((s) => s.stop()));
  }

  async detach(): Promise<void> {
    for (const server of this.running.values()) server.detach();
    this.running.clear();
  }

  private prepare(): void {
    if (this.prepared) return;
    // Searchable, not listable: each instance's folder is its account's alone.
    mkdirSync(this.base.dir, { recursive: true, mode: 0o711 });
    this.prepared = true;
  }

  private async startInstance(id: string, config: Readonly<Record<string, string>>): Promise<void> {
    if (this.running.has(id)) return;
    this.checkConfig(id, config);
    const folder = this.folder(id);
    const data = join(folder, this.dataFolder);
    mkdirSync(data, { recursive: true, mode: 0o700 });
    chmodSync(folder, 0o700);
    const account = this.base.account === undefined ? await ensureAddonAccount(this.kind, id) : (this.base.account ?? undefined);
    // A folder an earlier host gave a shared account (Debian's redis, runplan-storage) becomes this add-on's own.
    if (account) ownTree(folder, account);
    const { configFile, server } = this.addonServer(id, config, data);
    const file = join(folder, configFile.name);
    writeFileSync(file, configFile.text, { mode: 0o600 });
    if (account) chownSync(file, account.uid, account.gid);
    this.running.set(id, await ServerProcess.start({ ...server, supervisor: this.base.supervisor, cwd: folder, account }));
  }
}
