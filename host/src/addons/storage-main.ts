import { readFileSync } from 'node:fs';
import S3rver from 's3rver';
import AWSAccount from 's3rver/lib/models/account.js';
import { listenForStopSignals } from '../stop-signals.js';
import { s3RequestProblem } from './s3-names.js';
import { verifySigV4 } from './sigv4.js';
import { guardFilesystemStore } from './storage-guard.js';

/**
 * One storage add-on's S3-compatible server (bundled as dist/storage-server.cjs,
 * run by the storage provider as the add-on's own account): s3rver with its data
 * folder and the add-on's key pair instead of s3rver's built-in one. Before s3rver
 * sees a request, its names are checked (s3-names.ts: nothing that could climb out
 * of a folder) and its SigV4 signature (s3rver checks only the key id); its file
 * store checks every path it makes again (storage-guard.ts).
 * Its config file (0600, `storage.json` in its working folder) is its only
 * argument: port, directory, keyId, secret; none of them is on its command line.
 */
interface StorageConfig {
  readonly port: number;
  readonly directory: string;
  readonly keyId: string;
  readonly secret: string;
}

interface Ctx {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: string;
}

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as StorageConfig;
AWSAccount.DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
AWSAccount.DUMMY_ACCOUNT.createKeyPair(config.keyId, config.secret);
guardFilesystemStore();

// vhostBuckets off: a Host header never names a bucket (s3-names.ts refuses any Host but an address anyway).
const server = new S3rver({ address: '127.0.0.1', port: config.port, directory: config.directory, silent: true, vhostBuckets: false });
const xml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
const answer = (ctx: Ctx, status: number, code: string, message: string) => {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xml(message)}</Message></Error>`;
};
// First of all middleware: a request with a name that could leave its folder, or unsigned, or badly signed, never reaches s3rver.
(server as unknown as { middleware: unknown[] }).middleware.unshift(async (ctx: Ctx, next: () => Promise<void>) => {
  const problem = s3RequestProblem(ctx);
  if (problem) return answer(ctx, problem.status, problem.code, problem.message);
  const verdict = verifySigV4({ method: ctx.method, url: ctx.url, headers: ctx.headers }, (id) => (id === config.keyId ? config.secret : undefined), Date.now());
  if (verdict.ok) return next();
  answer(ctx, 403, verdict.code, verdict.why);
});

server.run().then(
  () => console.log(`storage add-on listening on 127.0.0.1:${config.port}`),
  (error: Error) => {
    console.error(`storage add-on could not start: ${error.message}`);
    process.exit(1);
  },
);
void listenForStopSignals().received.then(() => server.close().finally(() => process.exit(0)));
