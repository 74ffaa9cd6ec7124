import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { CoreErrors } from '../../errors/core-errors.js';
import { formatBytes } from '../../files/tree-size.js';
import { formatSeconds } from '../../health/probes.js';
import { systemClock, type Clock } from '../../time/clock.js';

/** A function with the shape of the global fetch, so downloads can be tested or proxied. */
type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface DownloadOptions {
  readonly fetch?: Fetch;
  readonly clock?: Clock;
  /** Attempts for transient failures (network errors, 408, 429, 5xx). */
  readonly attempts?: number;
  /** First pause between attempts; doubled after each. */
  readonly retryDelayMs?: number;
  /** Gives up on one attempt after this long. */
  readonly timeoutMs?: number;
  readonly log?: (line: string) => void;
  readonly signal?: AbortSignal;
}

class TransientFailure extends Error {}

/**
 * Downloads `url` to `dest` while hashing it, and keeps the file only when its
 * SHA-256 is `sha256`. Transient failures are retried with a doubling pause (on
 * the injected clock); a mismatch is not, since the mirror would serve the same
 * bytes again. `file:` URLs are read from disk, for mirrors on the host itself.
 */
export async function downloadVerified(url: string, sha256: string, dest: string, options: DownloadOptions = {}): Promise<void> {
  const attempts = Math.max(1, options.attempts ?? 3);
  const clock = options.clock ?? systemClock;
  const log = options.log ?? (() => undefined);
  let delay = options.retryDelayMs ?? 1_000;
  for (let attempt = 1; ; attempt++) {
    try {
      const actual = await fetchTo(url, dest, options);
      if (actual !== sha256) {
        await rm(dest, { force: true });
        throw CoreErrors.BUILD_DIGEST_MISMATCH.create({
          message: `${url} has SHA-256 ${actual}, but the plan expects ${sha256}; the download was discarded and nothing was cached.`,
          details: { url, expected: sha256, actual },
        });
      }
      log(`verified SHA-256 ${sha256.slice(0, 16)}…`);
      return;
    } catch (error) {
      await rm(dest, { force: true });
      if (!(error instanceof TransientFailure)) throw error;
      if (attempt >= attempts || options.signal?.aborted) {
        throw CoreErrors.BUILD_DOWNLOAD_FAILED.create({ message: `${url} could not be downloaded after ${attempt} attempt${attempt === 1 ? '' : 's'}: ${error.message}.`, details: { url } });
      }
      log(`download of ${url} failed (${error.message}); attempt ${attempt + 1} of ${attempts} in ${formatSeconds(delay)}`);
      await clock.sleep(delay, options.signal);
      delay *= 2;
    }
  }
}

/** One attempt; resolves with the SHA-256 of what was written. */
async function fetchTo(url: string, dest: string, options: DownloadOptions): Promise<string> {
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  const source = url.startsWith('file:') ? await openFile(url) : await openHttp(url, options);
  try {
    await pipeline(source, hashing, createWriteStream(dest, { mode: 0o600 }));
  } catch (error) {
    if (error instanceof TransientFailure || CoreErrors.BUILD_DOWNLOAD_FAILED.is(error)) throw error;
    throw new TransientFailure(`transfer interrupted: ${(error as Error).message}`);
  }
  return hash.digest('hex');
}

async function openFile(url: string): Promise<Readable> {
  const path = fileURLToPath(url);
  const stream = createReadStream(path);
  await new Promise<void>((ok, ko) => {
    stream.once('open', () => ok());
    stream.once('error', (error: NodeJS.ErrnoException) => ko(CoreErrors.BUILD_DOWNLOAD_FAILED.create({ message: `${url} cannot be read: ${error.code ?? error.message}.`, details: { url } })));
  });
  return stream;
}

async function openHttp(url: string, options: DownloadOptions): Promise<Readable> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const signal = withTimeout(options.signal, options.timeoutMs ?? 600_000);
  let response: Response;
  try {
    response = await fetchImpl(url, { signal, redirect: 'follow' });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new TransientFailure(cause?.code ?? cause?.message ?? (error as Error).message);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    if (response.status === 408 || response.status === 429 || response.status >= 500) throw new TransientFailure(status);
    throw CoreErrors.BUILD_DOWNLOAD_FAILED.create({ message: `${url} answered ${status}.`, details: { url, status: response.status } });
  }
  const size = Number(response.headers.get('content-length'));
  options.log?.(`downloading ${url}${size > 0 ? ` (${formatBytes(size)})` : ''}`);
  return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
}

/** The caller's signal, or a timeout, whichever comes first (AbortSignal.any is missing before Node 20.3). */
function withTimeout(signal: AbortSignal | undefined, ms: number): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  if (!signal) return timeout;
  const controller = new AbortController();
  for (const s of [signal, timeout]) {
    if (s.aborted) controller.abort(s.reason);
    else s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}
