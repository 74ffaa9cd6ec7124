import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { freePort } from '../deploy/free-port.js';
import { HostErrors } from '../errors.js';
import { runChecked } from '../programs.js';
import { type AddonServer, ServerPerAddon, type ServerPerAddonOptions } from './server-per-addon.js';

const LOOPBACK = '127.0.0.1';

export interface RedisProviderOptions extends ServerPerAddonOptions {
  readonly redisServer?: string;
  readonly redisCli?: string;
}

/**
 * Redis add-ons: one redis-server per add-on (Redis has no per-user databases that keep
 * one customer's keys from another's), each on its own loopback port with its own
 * password (requirepass) and its data kept (appendonly) in its own folder (0700), run
 * as the add-on's own account (addon-accounts.ts): a customer who took over its
 * server (a Lua sandbox escape, as Redis has had) holds only its own data. The folders,
 * accounts and servers' lifecycle: server-per-addon.ts.
 */
export class RedisProvider extends ServerPerAddon {
  constructor(private readonly options: RedisProviderOptions) {
    super('redis', 'data', options);
  }

  protected async newConfig(): Promise<Record<string, string>> {
    return { host: LOOPBACK, port: String(await freePort()), password: randomBytes(24).toString('hex') };
  }

  protected checkConfig(id: string, config: Readonly<Record<string, string>>): void {
    const { port = '', password = '' } = config;
    if (!/^\d+$/.test(port) || !/^[0-9a-f]+$/.test(password)) {
      throw HostErrors.INPUT_USAGE.create({ message: `the Redis add-on ${id} has no port or password the host made`, details: { addonId: id } });
    }
  }

  variables(config: Readonly<Record<string, string>>): Record<string, string> {
    return redisVariables(config);
  }

  protected addonServer(id: string, config: Readonly<Record<string, string>>, data: string): AddonServer {
    const { port = '', password = '' } = config;
    return {
      configFile: { name: 'redis.conf', text: redisConf({ bind: LOOPBACK, port, password, dir: data }) },
      server: {
        what: `Redis add-on ${id}`,
        command: this.options.redisServer ?? 'redis-server',
        // Relative to its working folder: the add-on's id (in the folder's name) is on no command line `ps` shows.
        args: ['redis.conf'],
        logFile: join(this.folder(id), 'redis.log'),
        ready: async () => {
          // The password through REDISCLI_AUTH, not argv (which every user on the machine can read).
          const { stdout } = await runChecked(this.options.redisCli ?? 'redis-cli', ['-h', LOOPBACK, '-p', port, 'ping'], {
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin', REDISCLI_AUTH: password },
            // Another program on the port may accept and never answer.
            timeoutMs: 2000,
          });
          return stdout.trim() === 'PONG';
        },
      },
    };
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
