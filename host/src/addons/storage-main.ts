import { readFileSync } from 'node:fs';
import S3rver from 's3rver';
import AWSAccount from 's3rver/lib/models/account.js';
import { listenForStopSignals } from '../stop-signals.js';
import { verifySigV4 } from './sigv4.js';

/**
 * One storage add-on's S3-compatible server (bundled as dist/storage-server.cjs,
 * run by the storage provider as its own account): s3rver with its data folder,
 * the add-on's key pair instead of s3rver's built-in one, and every request's
 * SigV4 signature checked before s3rver sees it (s3rver checks only the key id).
 * Its config file (0600) is its only argument: port, directory, keyId, secret.
 */
interface StorageConfig {
  readonly port: number;
  readonly directory: string;
  readonly keyId: string;
  readonly secret: string;
}

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as StorageConfig;
AWSAccount.DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
AWSAccount.DUMMY_ACCOUNT.createKeyPair(config.keyId, config.secret);

const server = new S3rver({ address: '127.0.0.1', port: config.port, directory: config.directory, silent: true });
const xml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
// First of all middleware: an unsigned or badly signed request never reaches s3rver.
(server as unknown as { middleware: unknown[] }).middleware.unshift(
  async (ctx: { method: string; url: string; headers: Record<string, string | string[] | undefined>; status: number; type: string; body: string }, next: () => Promise<void>) => {
    const verdict = verifySigV4({ method: ctx.method, url: ctx.url, headers: ctx.headers }, (id) => (id === config.keyId ? config.secret : undefined), Date.now());
    if (verdict.ok) return next();
    ctx.status = 403;
    ctx.type = 'application/xml';
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${verdict.code}</Code><Message>${xml(verdict.why)}</Message></Error>`;
  },
);

server.run().then(
  () => console.log(`storage add-on listening on 127.0.0.1:${config.port}`),
  (error: Error) => {
    console.error(`storage add-on could not start: ${error.message}`);
    process.exit(1);
  },
);
void listenForStopSignals().received.then(() => server.close().finally(() => process.exit(0)));
