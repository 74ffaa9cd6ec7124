import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../deploy/free-port.js';
import { HostErrors } from '../errors.js';
import { ADDON_ID } from '../store/store.js';
import type { AddonProvider, AddonRef, CreatedAddon } from './provider.js';
import { scramSha256Verifier } from './scram.js';
import { type ServerAccount, ServerProcess, serverAccount } from './server-process.js';
import type { Supervisor } from '../supervision/supervisor.js';
import { type ProgramFailed, runChecked } from '../programs.js';

const DEBIAN_ROOT = '/usr/lib/postgresql';
const LOOPBACK = '127.0.0.1';
// What a role or database name made from an id looks like; checked again before any DROP.
const SQL_NAME = /^addon_[0-9a-f]{32}$/;

export interface PostgresqlProviderOptions {
  /** `<data>/addons/postgresql`: the cluster, its socket folder, its log and the port it keeps. */
  readonly dir: string;
  /** The loopback port; by default the one chosen on first start (kept in `<dir>/server.json`). */
  readonly port?: number;
  /** Where initdb, postgres and pg_isready are; by default the newest major under /usr/lib/postgresql. */
  readonly binDir?: string;
  /** psql (Debian's wrapper picks the newest client). */
  readonly psql?: string;
  /** Who the server runs as: by default `postgres` when the host runs as root (null: the host's own user). */
  readonly account?: ServerAccount | null;
  /** The host's supervisor: a death and restart of a server is in the host's log and its state in status. */
  readonly supervisor?: Supervisor;
  /**
   * The releases' own networks (a CIDR), whose connections reach the server translated to its loopback port
   * with their own source address: let in with a role's password, as from loopback.
   */
  readonly releasesNetwork?: string;
}

/**
 * PostgreSQL add-ons: one cluster the host makes with initdb and starts, on a loopback
 * port; each add-on is a role with a random password and a database it owns, both
 * named from the add-on's id, which no other role may connect to.
 *
 * Authentication: TCP connections (the apps) need a role's password (scram-sha-256);
 * the socket (in `<dir>/run`, mode 0700, so only the server's account and root reach it)
 * trusts its user: it is how the host itself administers the cluster, with no superuser
 * password to keep.
 */
export class PostgresqlProvider implements AddonProvider {
  readonly kind = 'postgresql' as const;
  private server: ServerProcess | undefined;
  private port_: number | undefined;
  private bin_: string | undefined;

  constructor(private readonly options: PostgresqlProviderOptions) {}

  get clusterDir(): string {
    return join(this.options.dir, 'cluster');
  }
  /** The folder of its Unix socket (`psql -h <socketDir>`). */
  get socketDir(): string {
    return join(this.options.dir, 'run');
  }
  get logFile(): string {
    return join(this.options.dir, 'postgresql.log');
  }
  get port(): number {
    if (this.port_ === undefined) throw new Error('PostgresqlProvider: start() first');
    return this.port_;
  }
  get pid(): number | undefined {
    return this.server?.pid;
  }

  async start(): Promise<void> {
    if (this.server) return;
    const bin = this.bin();
    const account = this.options.account === undefined ? await serverAccount('postgres') : (this.options.account ?? undefined);
    const dir = this.options.dir;
    // Folders made on the way are searchable (0711) so the server's account reaches its own; its own are 0700.
    mkdirSync(dir, { recursive: true, mode: 0o711 });
    chmodSync(dir, 0o700);
    mkdirSync(this.socketDir, { recursive: true, mode: 0o700 });
    if (account) for (const d of [dir, this.socketDir]) chownSync(d, account.uid, account.gid);

    const stateFile = join(dir, 'server.json');
    const kept = existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as { port?: number }).port : undefined;
    // The port is kept: the add-ons' variables (in releases already made) name it.
    this.port_ = this.options.port ?? kept ?? (await freePort());
    writeFileSync(stateFile, `${JSON.stringify({ port: this.port_ })}\n`, { mode: 0o600 });

    if (!existsSync(join(this.clusterDir, 'PG_VERSION'))) {
      const args = ['-D', this.clusterDir, '-U', 'postgres', '--auth-local=trust', '--auth-host=scram-sha-256', '--encoding=UTF8', '--no-locale', '--no-instructions'];
      try {
        await runChecked(join(bin, 'initdb'), args, { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' }, timeoutMs: 0, ...ids(account) });
      } catch (error) {
        const e = error as { stderr?: string; message: string };
        throw HostErrors.ADDON_SERVER_FAILED.create({
          message: `initdb could not make the PostgreSQL cluster ${this.clusterDir}: ${(e.stderr || e.message).trim()}`,
          file: this.clusterDir,
          details: { what: 'PostgreSQL', command: 'initdb' },
          cause: error,
        });
      }
    }
    const port = String(this.port_);
    const letIn = this.letInReleases();
    this.server = await ServerProcess.start({
      supervisor: this.options.supervisor,
      what: 'PostgreSQL',
      command: join(bin, 'postgres'),
      args: ['-D', this.clusterDir, '-p', port, '-k', this.socketDir, '-c', `listen_addresses=${LOOPBACK}`, '-c', 'unix_socket_permissions=0700'],
      cwd: dir,
      account,
      logFile: this.logFile,
      // SIGINT is PostgreSQL's fast shutdown: open connections (the apps') are closed, not waited for.
      stopSignal: 'SIGINT',
      ready: async () => {
        await runChecked(join(bin, 'pg_isready'), ['-q', '-h', this.socketDir, '-p', port, '-U', 'postgres', '-d', 'postgres', '-t', '2']);
        return true;
      },
    });
    // A server an earlier serve left running reads the new line now.
    if (letIn) await this.admin('select pg_reload_conf();');
  }

  /** Adds the releases' network to pg_hba.conf (password only) when it is not there: whether it was added. */
  private letInReleases(): boolean {
    const network = this.options.releasesNetwork;
    if (network === undefined) return false;
    const file = join(this.clusterDir, 'pg_hba.conf');
    const line = `host all all ${network} scram-sha-256`;
    const text = readFileSync(file, 'utf8');
    if (text.split('\n').includes(line)) return false;
    writeFileSync(file, `${text.endsWith('\n') ? text : `${text}\n`}# The releases' own network namespaces (runplan-host).\n${line}\n`);
    return true;
  }

  async create(_addon: AddonRef): Promise<CreatedAddon> {
    const name = newSqlName();
    const password = randomBytes(24).toString('hex');
    try {
      await this.admin(createDatabaseSql(name, password));
    } catch (error) {
      await this.drop(name).catch(() => {});
      throw error;
    }
    const config = { host: LOOPBACK, port: String(this.port), database: name, user: name, password };
    return { config, variables: this.variables(config) };
  }

  /** A restore: the add-on's role (same password) and empty database made again, for its dump to be loaded into. */
  async recreate(addon: AddonRef, config: Readonly<Record<string, string>>): Promise<string> {
    const name = madeDatabase(addon, config);
    await this.admin(createDatabaseSql(name, config.password ?? ''));
    return name;
  }

  variables(config: Readonly<Record<string, string>>): Record<string, string> {
    return postgresqlVariables(config);
  }

  async remove(addon: AddonRef, config: Readonly<Record<string, string>>): Promise<void> {
    await this.drop(madeDatabase(addon, config));
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await server?.stop();
  }

  async detach(): Promise<void> {
    this.server?.detach();
    this.server = undefined;
  }

  private async drop(name: string): Promise<void> {
    await this.admin(dropDatabaseSql(name));
  }

  /** Runs SQL as the cluster's superuser over the socket (trust: see the class comment); given on stdin, never in argv. */
  private admin(sql: string): Promise<void> {
    if (!this.server) return Promise.reject(new Error('PostgresqlProvider: start() first'));
    const psql = this.options.psql ?? 'psql';
    const args = ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', this.socketDir, '-p', String(this.port), '-U', 'postgres', '-d', 'postgres'];
    return runChecked(psql, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' }, input: sql, timeoutMs: 0 }).then(
      () => undefined,
      (error: ProgramFailed) => {
        throw HostErrors.ADDON_SERVER_FAILED.create({
          message: `PostgreSQL refused the host's administration: ${error.stderr.trim() || error.message}`,
          file: this.logFile,
          details: { what: 'PostgreSQL', command: 'psql' },
        });
      },
    );
  }

  private bin(): string {
    if (this.options.binDir) return this.options.binDir;
    if (this.bin_) return this.bin_;
    // Whichever major Debian installed (15 on Debian 12): the newest if several are.
    const majors = existsSync(DEBIAN_ROOT)
      ? readdirSync(DEBIAN_ROOT)
          .filter((d) => /^\d+$/.test(d) && existsSync(join(DEBIAN_ROOT, d, 'bin', 'initdb')))
          .sort((a, b) => Number(b) - Number(a))
      : [];
    if (majors[0] === undefined) {
      throw HostErrors.ADDON_SERVER_FAILED.create({
        message: `no PostgreSQL server under ${DEBIAN_ROOT} (no <major>/bin/initdb)`,
        fix: 'Install Debian’s PostgreSQL server: apt-get install postgresql.',
        file: DEBIAN_ROOT,
        details: { what: 'PostgreSQL', command: 'initdb' },
      });
    }
    this.bin_ = join(DEBIAN_ROOT, majors[0], 'bin');
    return this.bin_;
  }
}

/**
 * The role and database name of a new add-on: random, of the shape SQL_NAME checks. Not
 * made from the add-on's id: every role sees every database and role name (pg_database,
 * pg_roles), and `ps` shows them in each connection's process title.
 */
export function newSqlName(): string {
  return `addon_${randomBytes(16).toString('hex')}`;
}

/** The name an add-on made before names were random has: its id without hyphens (a plain SQL identifier, 38 characters). */
function sqlName(addonId: string): string {
  if (!ADDON_ID.test(addonId)) throw HostErrors.INPUT_USAGE.create({ message: `${addonId} is not an add-on id (addon_<uuid>)`, details: { addonId } });
  return addonId.replaceAll('-', '');
}

function ids(account: ServerAccount | undefined): { uid?: number; gid?: number } {
  return account ? { uid: account.uid, gid: account.gid } : {};
}

/** The SQL that makes an add-on's role (its password given as a SCRAM verifier) and the database it alone may connect to. */
export function createDatabaseSql(name: string, password: string): string {
  // CREATE DATABASE runs outside a transaction: each statement on its own, undone by the caller on failure.
  return `
    CREATE ROLE "${name}" LOGIN PASSWORD '${scramSha256Verifier(password)}';
    CREATE DATABASE "${name}" OWNER "${name}";
    REVOKE ALL ON DATABASE "${name}" FROM PUBLIC;
  `;
}

/** The SQL that removes an add-on's database and role; WITH (FORCE) closes the apps' connections first, and both are no-ops once gone, so a removal can be repeated. */
export function dropDatabaseSql(name: string): string {
  return `DROP DATABASE IF EXISTS "${name}" WITH (FORCE); DROP ROLE IF EXISTS "${name}";`;
}

/** The database an add-on's config names, checked to be one the host made before anything is dropped. */
export function madeDatabase(addon: AddonRef, config: Readonly<Record<string, string>>): string {
  const name = config.database ?? sqlName(addon.id);
  if (!SQL_NAME.test(name) || (config.user !== undefined && config.user !== name)) {
    throw HostErrors.INPUT_USAGE.create({ message: `the add-on ${addon.id} does not name a database the host made`, details: { addonId: addon.id } });
  }
  return name;
}

/** What a link to a PostgreSQL add-on injects, from its stored config. */
export function postgresqlVariables(config: Readonly<Record<string, string>>): Record<string, string> {
  const { host = LOOPBACK, port = '', database = '', user = '', password = '' } = config;
  return {
    POSTGRESQL_ADDON_HOST: host,
    POSTGRESQL_ADDON_PORT: port,
    POSTGRESQL_ADDON_DB: database,
    POSTGRESQL_ADDON_USER: user,
    POSTGRESQL_ADDON_PASSWORD: password,
    POSTGRESQL_ADDON_URI: `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${host}:${port}/${encodeURIComponent(database)}`,
  };
}
