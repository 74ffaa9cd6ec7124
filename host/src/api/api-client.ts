import { type IncomingMessage, request } from 'node:http';
import { RunplanError } from 'runplan';
import { HostErrors } from '../errors.js';
import { readLineAnswer } from '../git/line-answer.js';

/** The host's API, over its unix socket, with its token. */
export class ApiClient {
  constructor(
    private readonly socket: string,
    private readonly token: string,
  ) {}

  private open(method: string, path: string, body: unknown, onResponse: (res: IncomingMessage) => void, onError: (error: Error) => void, signal?: AbortSignal): void {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath: this.socket,
        method,
        path,
        headers: { authorization: `Bearer ${this.token}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
      },
      onResponse,
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      onError(error.code === 'ENOENT' || error.code === 'ECONNREFUSED' ? HostErrors.HOST_NOT_SERVING.create({ message: `nothing answers on ${this.socket}.`, file: this.socket }) : error);
    });
    // A follower that went away (the console's page closed): the API stops following when the request closes.
    signal?.addEventListener('abort', () => req.destroy(), { once: true });
    req.end(payload);
  }

  /** A JSON request; a coded error of the host comes back as that error. */
  json<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    return new Promise((resolve, reject) => {
      this.open(
        method,
        path,
        body,
        (res) =>
          void readBody(res).then((text) => {
            let data: Record<string, unknown>;
            try {
              data = JSON.parse(text) as Record<string, unknown>;
            } catch {
              return reject(new Error(`the host answered ${res.statusCode} without JSON`));
            }
            if ((res.statusCode ?? 500) >= 400) return reject(errorFromAnswer(data.error));
            resolve(data as T);
          }, reject),
        reject,
      );
    });
  }

  /** A streamed operation: each line to `onLine`; resolves with its exit status (or rejects with a coded error sent before it started). */
  async lines(method: string, path: string, body: unknown, onLine: (line: string) => void, signal?: AbortSignal): Promise<number> {
    return (await this.start(method, path, body, onLine, signal)).done;
  }

  /**
   * A streamed operation, resolved once it has started (the host accepted it: its
   * checks passed), with `done`, its exit status; rejected with the coded error of
   * one refused before it started.
   */
  start(method: string, path: string, body: unknown, onLine: (line: string) => void, signal?: AbortSignal): Promise<{ done: Promise<number> }> {
    return new Promise((resolve, reject) => {
      this.open(
        method,
        path,
        body,
        (res) => {
          if ((res.statusCode ?? 500) >= 400 || !String(res.headers['content-type']).startsWith('text/plain')) {
            void readBody(res).then((text) => {
              try {
                reject(errorFromAnswer((JSON.parse(text) as { error?: unknown }).error));
              } catch {
                reject(new Error(`the host answered ${res.statusCode}`));
              }
            }, reject);
            return;
          }
          resolve({ done: new Promise((ended) => readLineAnswer(res, onLine, (status) => ended(status ?? 1))) });
        },
        reject,
        signal,
      );
    });
  }
}

async function readBody(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The host's error document turned back into a coded error, to be printed as any other. */
function errorFromAnswer(error: unknown): Error {
  const e = (error ?? {}) as { code?: string; kind?: string; message?: string; fix?: string; file?: string; variable?: string };
  if (typeof e.code !== 'string') return new Error(e.message ?? 'the host refused the request');
  return new RunplanError(
    { code: e.code, title: '', kind: (e.kind as 'input') ?? 'input', fix: e.fix ?? '' },
    { message: e.message ?? '', ...(e.file ? { file: e.file } : {}), ...(e.variable ? { variable: e.variable } : {}) },
  );
}
