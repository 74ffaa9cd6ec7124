import { shellWord } from '../shell/shell-word.js';
import type { Readiness } from '../plan/schema.js';
import { probeHttp, probePort, probeUnixSocket } from './probes.js';
import type { Clock } from '../time/clock.js';
import { pollDelay } from '../time/poll-delay.js';

const PROBE_TIMEOUT_MS = 5_000;

/**
 * The readiness rules of a plan's `startAfter`, in one place for every
 * executor: this machine probes them here (isReady), an image's entrypoint runs
 * the shell test readinessTest() renders from the same rule.
 *
 * - `http-unix-socket`: any HTTP answer on the socket, whatever its status,
 *   means the server behind it serves requests;
 * - `unix-socket`: the socket accepts a connection, and nothing is sent (an
 *   application would log a request it cannot route as an error); in an image
 *   the socket file's presence stands for it (the server makes it as it
 *   listens, and an image ships no client that only connects);
 * - `tcp-port`: a TCP connection to 127.0.0.1 is accepted. (Inside a container
 *   nothing stands between the process and the port; docker-proxy's early
 *   accept only concerns a published port, which the health check handles.)
 */
async function isReady(condition: Readiness): Promise<boolean> {
  switch (condition.kind) {
    case 'http-unix-socket':
      // Any answer, whatever its status, means the server behind the socket serves requests.
      return 'status' in (await probeHttp(new URL(condition.path, 'http://localhost'), PROBE_TIMEOUT_MS, condition.socket));
    case 'unix-socket':
      return probeUnixSocket(condition.socket, PROBE_TIMEOUT_MS);
    case 'tcp-port':
      return probePort('127.0.0.1', condition.port, PROBE_TIMEOUT_MS);
  }
}

export function describeReadiness(condition: Readiness): string {
  switch (condition.kind) {
    case 'http-unix-socket':
      return `GET ${condition.path} answered on unix:${condition.socket}`;
    case 'unix-socket':
      return `unix:${condition.socket} accepting connections`;
    case 'tcp-port':
      return `127.0.0.1:${condition.port} accepting connections`;
  }
}

/**
 * Polls until every condition holds. Resolves true when they do, false when
 * `signal` aborts first. There is no time limit of its own: the deployment's
 * health check has one, and a process that waits forever never opens its port.
 */
export async function waitUntilReady(conditions: readonly Readiness[], clock: Clock, signal: AbortSignal): Promise<boolean> {
  const start = clock.now();
  for (const condition of conditions) {
    for (;;) {
      if (signal.aborted) return false;
      if (await isReady(condition)) break;
      await clock.sleep(pollDelay(clock.now() - start), signal);
    }
  }
  return !signal.aborted;
}

/** A shell test (sh, run in an image's entrypoint) that succeeds once a lowered `condition` holds; the same rule as isReady. */
export function readinessTest(condition: Readiness): string {
  if (condition.kind === 'http-unix-socket') {
    return `curl -s -o /dev/null --max-time 5 --unix-socket ${shellWord(condition.socket)} ${shellWord(`http://localhost${condition.path}`)}`;
  }
  if (condition.kind === 'unix-socket') return `test -S ${shellWord(condition.socket)}`;
  // bash's /dev/tcp: a TCP connect and nothing more, as probePort does.
  return `timeout 5 bash -c ${shellWord(`exec 3<>/dev/tcp/127.0.0.1/${condition.port}`)} 2>/dev/null`;
}
