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
import { runChecked } from '../programs.js';

const LOOPBACK = '127.0.0.1';

export interface RedisProviderOptions {
  /** `<data>/addons/redis`: one folder per add-on (`<id>/`: its redis.conf, log and data). */
  readonly dir: string;
  readonly redisServer?: string;
  readonly redisCli?: string;
  /** Who the servers run as: by default each add-on's own account when the host runs as root (null: the host's own user). */
  readonly account?: ServerAccount | null;
  /** The host's supervisor: a death and restart of a server is in the host's log and its state in status. */
  readonly supervisor?: Supervisor;
}

/**
 * Redis add-ons: one redis-server per add-on (Redis has no per-user databases that keep
 * one customer's keys from another's), each on its own loopback port with its own
 * password (requirepass) and its data kept (appendonly) in its own folder (0700), run
 * as the add-on's own account (addon-accounts.ts): a customer who took over its
 * server (a Lua sandbox escape, as Redis has had) holds only its own data.
 */
export class RedisProvider implements AddonProvider {
  readonly kind = 'redis' as const;
  private readonly running = new Map<string, ServerProcess>();
  private started = false;

  constructor(private readonly options: RedisProviderOptions) {}

  /** The folder of one add-on's instance. */
  folder(addonId: string): string {
    if (!ADDON_ID.test(addonId)) throw HostErrors.INPUT_USAGE.create({ message: `${addonId} is not an add-on id (addon_<uuid>)`, details: { addonId } });
    return join(this.options.dir, addonId);
  }

  /** The PID of an add-on's running instance. */
  pid(addonId: string): number | undefined {
    return this.running.get(addonId)?.pid;
  }

  /** Starts the instances of the add-ons the host already has (serve start), all at once. */
  async start(existing: readonly ExistingAddon[] = []): Promise<void> {
    await this.prepare();
    await Promise.all(existing.map((i) => this.startInstance(i.id, i.config)));
  }

  private async prepare(): Promise<void> {
    if (this.started) return;
    // Searchable, not listable: each instance's folder is its account's alone.
    mkdirSync(this.options.dir, { recursive: true, mode: 0o711 });
    this.started = true;
  }

  async create(addon: AddonRef): Promise<CreatedAddon> {
    await this.prepare();
    const folder = this.folder(addon.id);
    const config = { host: LOOPBACK, port: String(await freePort()), password: randomBytes(24).toString('hex') };
    try {
      await this.startInstance(addon.id, config);
    } catch (error) {
      rmSync(folder, { recursive: true, force: true });
      if (this.options.account === undefined) await removeAddonAccount('redis', addon.id).catch(() => {});
      throw error;
    }
    return { config, variables: this.variables(config) };
  }

  variables(config: Readonly<Record<string, string>>): Record<string, string> {
    return redisVariables(config);
  }

  async remove(addon: AddonRef, _config: Readonly<Record<string, string>>): Promise<void> {
    const folder = this.folder(addon.id);
    const server = this.running.get(addon.id);
    this.running.delete(addon.id);
    await server?.stop();
    rmSync(folder, { recursive: true, force: true });
    if (this.options.account === undefined) await removeAddonAccount('redis', addon.id);
  }

  async stop(): Promise<void> {
    const servers = [...this.running.values()];
    this.running.clear();
    await Promise.all(servers.map((s) => s.stop()));
  }

  private async startInstance(id: string, config: Readonly<Record<string, string>>): Promise<void> {
    if (this.running.has(id)) return;
    const { port = '', password = '' } = config;
    if (!/^\d+$/.test(port) || !/^[0-9a-f]+$/.test(password)) {
      throw HostErrors.INPUT_USAGE.create({ message: `the Redis add-on ${id} has no port or password the host made`, details: { addonId: id } });
    }
    const folder = this.folder(id);
    const data = join(folder, 'data');
    mkdirSync(data, { recursive: true, mode: 0o700 });
    chmodSync(folder, 0o700);
    const account = this.options.account === undefined ? await ensureAddonAccount('redis', id) : (this.options.account ?? undefined);
    // A folder an earlier host gave Debian's shared redis account becomes this add-on's own.
    if (account) ownTree(folder, account);
    // Written at every start from the store's config: the store is the truth, the file follows it.
    const conf = join(folder, 'redis.conf');
    writeFileSync(conf, redisConf({ bind: LOOPBACK, port, password, dir: data }), { mode: 0o600 });
    if (account) chownSync(conf, account.uid, account.gid);
    const server = await ServerProcess.start({
      supervisor: this.options.supervisor,
      what: `Redis add-on ${id}`,
      command: this.options.redisServer ?? 'redis-server',
      // Relative to its working folder: the add-on's id (in the folder's name) is on no command line `ps` shows.
      args: ['redis.conf'],
      cwd: folder,
      account,
      logFile: join(folder, 'redis.log'),
      ready: async () => {
        // The password through REDISCLI_AUTH, not argv (which every user on the machine can read).
        const { stdout } = await runChecked(this.options.redisCli ?? 'redis-cli', ['-h', LOOPBACK, '-p', port, 'ping'], {
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', REDISCLI_AUTH: password },
          // Another program on the port may accept and never answer.
          timeoutMs: 2000,
        });
        return stdout.trim() === 'PONG';
      },
    });
    this.running.set(id, server);
  }
}

/** What a link to a Redis add-on injects, from its stored config. */
export function redisVariables(config: Readonly<Record<string, string>>): Record<string, string> {
  const { host = LOOPBACK, port = '', password = '' } = config;
  return { REDIS_HOST: host, REDIS_PORT: port, REDIS_PASSWORD: password, REDIS_URL: `redis://:${encodeURIComponent(password)}@${host}:${port}` };
}

/** An instance's redis.conf: its password required, its data kept (appendonly) in `dir`, its log on standard output. */
export function redisConf(o: { bind: string; port: string; password: string; dir: string }): string {
  return [`bind ${o.bind}`, `port ${o.port}`, 'protected-mode yes', `requirepass ${o.password}`, 'appendonly yes', `dir "${o.dir}"`, 'daemonize no', 'logfile ""', ''].join('\n');
}
