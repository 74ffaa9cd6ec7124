import { probeHttp, probePort } from '../health/probes.js';
import type { Readiness } from '../plan/schema.js';
import type { Clock } from '../time/clock.js';
import { pollDelay } from '../time/poll-delay.js';

const PROBE_TIMEOUT_MS = 5_000;

/** Whether one condition holds right now. */
async function isReady(condition: Readiness): Promise<boolean> {
  switch (condition.kind) {
    case 'http-unix-socket':
      // Any answer, whatever its status, means the server behind the socket serves requests.
      return 'status' in (await probeHttp(new URL(condition.path, 'http://localhost'), PROBE_TIMEOUT_MS, condition.socket));
    case 'tcp-port':
      return probePort('127.0.0.1', condition.port, PROBE_TIMEOUT_MS);
  }
}

export function describeReadiness(condition: Readiness): string {
  switch (condition.kind) {
    case 'http-unix-socket':
      return `GET ${condition.path} answered on unix:${condition.socket}`;
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
