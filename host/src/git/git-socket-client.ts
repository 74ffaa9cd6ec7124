import { request } from 'node:http';
import { AUTHORIZE_PATH, PUSH_PATH, type PushRequest } from './hook-protocol.js';
import { readLineAnswer } from './line-answer.js';
import { PushError } from './push-error.js';

/**
 * The client side of the git socket (HTTP on <data>/run/git.sock, served by
 * `runplan-host serve`), used by the forced command and the proc-receive hook,
 * which run as the SSH user.
 */

/** Whether `key` may push to `app` (GET /authorize: 200 or 403). */
export async function authorizePush(socketPath: string, key: string, app: string): Promise<boolean> {
  const query = new URLSearchParams({ key, app });
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: `${AUTHORIZE_PATH}?${query}`, method: 'GET' }, (res) => {
      res.resume();
      res.once('end', () => {
        if (res.statusCode === 200) resolve(true);
        else if (res.statusCode === 403) resolve(false);
        else reject(unexpected(`GET ${AUTHORIZE_PATH} answered ${res.statusCode}`));
      });
    });
    req.once('error', (error) => reject(connectionError(error)));
    req.end();
  });
}

/**
 * POST /push: hands each line serve streams to `onLine` as it arrives and
 * resolves with the status of the exit line and the code it names; 1 when the
 * answer ends without one (serve stopped mid-deploy).
 */
export async function postPush(socketPath: string, push: PushRequest, onLine: (line: string) => void): Promise<{ status: number; code?: string }> {
  const body = JSON.stringify(push);
  return new Promise((resolve, reject) => {
    let answered = false;
    let settled = false;
    const req = request({ socketPath, path: PUSH_PATH, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      answered = true;
      readLineAnswer(res, onLine, (status, code) => {
        if (settled) return;
        settled = true;
        if (status === undefined) {
          onLine(
            res.statusCode === 200
              ? 'runplan-host serve stopped answering before the deploy ended; the push is rejected.'
              : `runplan-host serve refused the push (HTTP ${res.statusCode}); the push is rejected.`,
          );
        }
        resolve(status === undefined ? { status: 1 } : { status, ...(code === undefined ? {} : { code }) });
      });
    });
    req.once('error', (error) => {
      // Once serve answered, a dropped connection is the answer's end (readLineAnswer's 'close'), not a failure to reach serve.
      if (!answered && !settled) {
        settled = true;
        reject(connectionError(error));
      }
    });
    req.end(body);
  });
}

function connectionError(error: Error) {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ECONNREFUSED') {
    return new PushError('HOST_NOT_SERVING', { message: 'the host is not serving: nothing answers on its git socket, so no push can deploy now', cause: error });
  }
  return unexpected(`the git socket could not be reached (${code ?? error.message})`, error);
}

function unexpected(message: string, cause?: unknown) {
  return new PushError('HOST_NOT_SERVING', {
    message: `the host did not answer as expected: ${message}`,
    fix: 'Restart runplan-host serve (with the same --data), then push again.',
    ...(cause === undefined ? {} : { cause }),
  });
}
