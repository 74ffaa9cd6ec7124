import { randomBytes } from 'node:crypto';
import type { StackDefinition } from 'runplan/engines/docker';
import { HostErrors } from '../errors.js';
import { createDatabaseSql, dropDatabaseSql, madeDatabase, newSqlName, postgresqlVariables } from './postgresql.js';
import type { AddonProvider, AddonRef, CreatedAddon, ExistingAddon } from './provider.js';
import { redisConf, redisVariables } from './redis.js';
import { swarmName, type SwarmAddonServices } from './swarm-services.js';
import { STORAGE_STACK } from './swarm-storage.js';

/** What a swarm provider writes in each add-on's config: the engine whose tasks reach its server. */
const SWARM_CONFIG = { engine: 'swarm' } as const;

/** The images of the add-on servers: Debian's packages on runplan's stack root (an operator, or a test, may build them ahead). */
export const SWARM_ADDON_STACKS = {
  postgresql: { name: 'addon-postgresql', packages: ['postgresql'], description: "PostgreSQL add-on servers: Debian's PostgreSQL" },
  redis: { name: 'addon-redis', packages: ['redis-server'], description: "Redis add-on servers: Debian's redis-server" },
  storage: STORAGE_STACK,
} as const satisfies Record<string, StackDefinition>;

const POSTGRESQL_SERVICE = 'runplan-addon-postgresql';
const POSTGRESQL_PORT = '5432';
// The newest major Debian installed in the image (15 on Debian 12), found when the task starts.
const PG_BIN = '"$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"';
const PG_DATA = '/var/lib/postgresql/runplan';

/**
 * PostgreSQL add-ons on a swarm: one cluster, as on one machine, run by a
 * service of Debian's PostgreSQL with its data in a volume; TCP connections need
 * a role's password (scram-sha-256, from any address of the add-ons network),
 * the socket inside the task trusts its user: the host administers the cluster
 * with `docker exec … psql`, the SQL on standard input.
 */
export class SwarmPostgresqlProvider implements AddonProvider {
  readonly kind = 'postgresql' as const;
  private started: Promise<void> | undefined;

  constructor(private readonly services: SwarmAddonServices) {}

  start(): Promise<void> {
    this.started ??= this.services
      .ensure(
        {
          name: POSTGRESQL_SERVICE,
          stack: SWARM_ADDON_STACKS.postgresql,
          user: 'postgres',
          volume: { name: POSTGRESQL_SERVICE, target: '/var/lib/postgresql' },
          script: [
            'set -e',
            `if [ ! -s ${PG_DATA}/PG_VERSION ]; then`,
            `  ${PG_BIN}/initdb -D ${PG_DATA} -U postgres --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --no-locale --no-instructions`,
            `  echo 'host all all all scram-sha-256' >> ${PG_DATA}/pg_hba.conf`,
            'fi',
            `exec ${PG_BIN}/postgres -D ${PG_DATA} -c listen_addresses='*' -k /tmp`,
          ].join('\n'),
        },
        async () => (await this.psql('SELECT 1;')).code === 0,
      )
      .catch((error: unknown) => {
        this.started = undefined;
        throw error;
      });
    return this.started;
  }

  async create(_addon: AddonRef): Promise<CreatedAddon> {
    await this.start();
    const name = newSqlName();
    const password = randomBytes(24).toString('hex');
    try {
      await this.admin(createDatabaseSql(name, password));
    } catch (error) {
      await this.admin(dropDatabaseSql(name)).catch(() => {});
      throw error;
    }
    const config = { ...SWARM_CONFIG, host: POSTGRESQL_SERVICE, port: POSTGRESQL_PORT, database: name, user: name, password };
    return { config, variables: this.variables(config) };
  }

  variables(config: Readonly<Record<string, string>>): Record<string, string> {
    return postgresqlVariables(config);
  }

  async remove(addon: AddonRef, config: Readonly<Record<string, string>>): Promise<void> {
    const name = madeDatabase(addon, config);
    await this.start();
    await this.admin(dropDatabaseSql(name));
  }

  /** Its service goes on serving the applications' tasks: the next serve finds it (start()). */
  async detach(): Promise<void> {
    this.started = undefined;
  }

  /** Removes the service, as serve removes the applications' (the cluster's data stays in its volume). */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = undefined;
    await this.services.stop(POSTGRESQL_SERVICE);
  }

  private psql(sql: string) {
    const argv = ['sh', '-c', `exec ${PG_BIN}/psql "$@"`, 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', '/tmp', '-U', 'postgres', '-d', 'postgres'];
    return this.services.exec(POSTGRESQL_SERVICE, 'postgres', argv, sql);
  }

  private async admin(sql: string): Promise<void> {
    const ran = await this.psql(sql);
    if (ran.code !== 0) {
      throw HostErrors.ADDON_SERVER_FAILED.create({
        message: `PostgreSQL (service ${POSTGRESQL_SERVICE}) refused the host's administration: ${ran.stderr.trim()}`,
        details: { what: 'PostgreSQL', command: 'psql' },
      });
    }
  }
}

const REDIS_PORT = '6379';
const REDIS_CONF = 'redis.conf';

/**
 * Redis add-ons on a swarm: as on one machine, one server per add-on, each a
 * service with its data in its own volume; its redis.conf (with the password)
 * is a swarm secret, so the password is in no service's arguments.
 */
export class SwarmRedisProvider implements AddonProvider {
  readonly kind = 'redis' as const;
  private readonly started = new Set<string>();

  constructor(private readonly services: SwarmAddonServices) {}

  async start(existing: readonly ExistingAddon[] = []): Promise<void> {
    await Promise.all(existing.map((addon) => this.ensure(addon.id, addon.config)));
  }

  async create(addon: AddonRef): Promise<CreatedAddon> {
    const config = { ...SWARM_CONFIG, host: swarmName(addon.id), port: REDIS_PORT, password: randomBytes(24).toString('hex') };
    try {
      await this.ensure(addon.id, config);
    } catch (error) {
      await this.remove(addon).catch(() => {});
      throw error;
    }
    return { config, variables: this.variables(config) };
  }

  variables(config: Readonly<Record<string, string>>): Record<string, string> {
    return redisVariables(config);
  }

  async remove(addon: AddonRef): Promise<void> {
    const name = swarmName(addon.id);
    this.started.delete(name);
    await this.services.remove(name, name, `${name}-conf`);
  }

  /** Its services go on serving the applications' tasks: the next serve finds them (start()). */
  async detach(): Promise<void> {
    this.started.clear();
  }

  /** Removes the services it started, as serve removes the applications' (the data stays in their volumes). */
  async stop(): Promise<void> {
    const started = [...this.started];
    this.started.clear();
    await Promise.all(started.map((name) => this.services.stop(name)));
  }

  private ensure(id: string, config: Readonly<Record<string, string>>): Promise<void> {
    const { password = '' } = config;
    if (!/^[0-9a-f]+$/.test(password)) {
      throw HostErrors.INPUT_USAGE.create({ message: `the Redis add-on ${id} has no password the host made`, details: { addonId: id } });
    }
    const name = swarmName(id);
    this.started.add(name);
    return this.services.ensure(
      {
        name,
        stack: SWARM_ADDON_STACKS.redis,
        user: 'redis',
        volume: { name, target: '/var/lib/redis' },
        secret: { name: `${name}-conf`, content: redisConf({ bind: '0.0.0.0', port: REDIS_PORT, password, dir: '/var/lib/redis' }), target: REDIS_CONF },
        script: `exec redis-server /run/secrets/${REDIS_CONF}`,
      },
      // Without the password a serving Redis answers NOAUTH: enough to know it serves, with no secret in an exec's arguments.
      async () => {
        const ran = await this.services.exec(name, 'redis', ['redis-cli', 'ping']);
        return /NOAUTH|PONG/.test(ran.stdout + ran.stderr);
      },
    );
  }
}
