import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../../test/helpers/ports.js';
import { tempDir } from '../../../test/helpers/temp.js';
import { PostgresqlProvider } from '../../src/addons/postgresql.js';

/**
 * A PostgreSQL cluster for a test file's stores: Debian's PostgreSQL started by the add-on provider's own code
 * (initdb, the server as the postgres account, pg_isready; stopped by its PID), with a role the stores log in
 * as over TCP with a password, as a host given a postgres:// URL would.
 */
export interface StoreServer {
  readonly role: string;
  readonly password: string;
  readonly port: number;
  /** A new, empty database the role owns (`options`: the rest of CREATE DATABASE), and its URL. */
  newDatabase(prefix: string, options?: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startStoreServer(folderPrefix: string): Promise<StoreServer> {
  const role = 'runplan_host';
  const password = randomBytes(16).toString('hex');
  const server = new PostgresqlProvider({ dir: join(await tempDir(folderPrefix), 'postgresql'), port: await freePort() });
  await server.start();
  // The cluster's superuser over its socket (trusted there): only to make the role and the databases.
  const admin = new pg.Client({ host: server.socketDir, port: server.port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
  return {
    role,
    password,
    port: server.port,
    async newDatabase(prefix, options = '') {
      const name = `${prefix}_${randomBytes(8).toString('hex')}`;
      await admin.query(`CREATE DATABASE ${name} OWNER ${role} ${options}`);
      return `postgres://${role}:${password}@127.0.0.1:${server.port}/${name}`;
    },
    async stop() {
      await admin.end();
      await server.stop();
    },
  };
}
