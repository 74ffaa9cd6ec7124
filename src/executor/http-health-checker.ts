import type { HealthChecker, HealthReport, HealthTarget, PathResult } from './contract.js';
import { systemClock, type Clock } from '../time/clock.js';
import { pollDelay } from '../time/poll-delay.js';
import type { Logger } from '../log/logger.js';
import { listenScope } from '../health/listen-address.js';
import { formatSeconds, probeHttp, probePort, type ProbeOutcome } from '../health/probes.js';

/** The closing line the specification prescribes after a failure. */
export const HEALTH_CLOSING_LINE = 'If the deployment fails after this message, please update your configuration and redeploy.';

const TRANSIENT_STATUSES = new Set([502, 503, 504]);

/** What HttpHealthChecker waits with (a test passes a clock that does not sleep). */
export interface HttpHealthCheckerOptions {
  readonly clock?: Clock;
}

/**
 * The deployment health check of the specification:
 * every configured path is requested with GET; only exactly 200 passes; redirects
 * are not followed; each answer is logged as `Response from GET <path> is <status>`;
 * on failure `Health check failed:`, one `- GET <path> returned <status>.` per failing
 * path and the closing line follow. With no path configured the web port must
 * accept connections within the ready timeout.
 *
 * While an application is still starting it may refuse connections or, behind a
 * proxy, answer 502–504: such transient failures are retried until the ready
 * timeout. Any other status is final.
 */
export class HttpHealthChecker implements HealthChecker {
  private readonly clock: Clock;

  constructor(options: HttpHealthCheckerOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  async check(target: HealthTarget, logger: Logger, signal?: AbortSignal): Promise<HealthReport> {
    const { check } = target;
    const base = new URL(target.baseUrl);
    const deadline = this.clock.now() + check.readyTimeoutMs;
    const host = base.hostname.replace(/^\[|\]$/g, '');
    const port = Number(base.port || (base.protocol === 'https:' ? 443 : 80));

    const started = this.clock.now();
    // Through a proxy, the first probe asks the health path, never the application's root: a GET / may do work (count a visit, write a row).
    const firstProbe = check.kind === 'http' && check.paths[0] ? new URL(check.paths[0].path, base) : new URL('/', base);
    const portOpen = await this.waitForPort(host, port, deadline, signal, target.portProbe === 'http' ? firstProbe : undefined);
    if (check.kind === 'port') {
      if (!portOpen) {
        const waited = signal?.aborted ? `; the check stopped after ${formatSeconds(this.clock.now() - started)}: ${whyStopped(signal.reason)}` : ` within ${formatSeconds(check.readyTimeoutMs)}`;
        return this.fail(logger, 'not-listening', `port ${port} did not accept connections${waited}`);
      }
      const scope = target.verifyListenAddress ? await listenScope(port) : 'unknown';
      if (scope === 'loopback-only') {
        return this.fail(logger, 'loopback-only', `port ${port} is bound to the loopback interface only; listen on 0.0.0.0`);
      }
      logger.health(`Port ${port} accepts connections`);
      return { ok: true, results: [] };
    }

    if (portOpen && target.verifyListenAddress && (await listenScope(port)) === 'loopback-only') {
      return this.fail(logger, 'loopback-only', `port ${port} is bound to the loopback interface only; listen on 0.0.0.0`);
    }

    for (;;) {
      const results: Array<PathResult & { transient: boolean }> = [];
      for (const { path } of check.paths) {
        const outcome = await probeHttp(new URL(path, base), check.requestTimeoutMs);
        results.push(toResult(path, outcome));
      }
      const failing = results.filter((r) => !r.ok);
      const retry = failing.length > 0 && failing.every((r) => r.transient) && this.clock.now() + check.retryDelayMs < deadline && !signal?.aborted;
      if (retry) {
        logger.health(`Waiting for the application: ${failing.map((r) => `GET ${r.path} gave ${r.status}`).join(', ')}; next try in ${formatSeconds(check.retryDelayMs)}`);
        await this.clock.sleep(check.retryDelayMs, signal);
        continue;
      }
      const report = results.map(({ path, status, ok }) => ({ path, status, ok }));
      reportPathResults(report, logger);
      return { ok: failing.length === 0, results: report };
    }
  }

  /** Until the port is open: a TCP connect, or with `http` any HTTP answer from that URL (a proxy may accept connections first). */
  private async waitForPort(host: string, port: number, deadline: number, signal?: AbortSignal, http?: URL): Promise<boolean> {
    const start = this.clock.now();
    for (;;) {
      if (http ? 'status' in (await probeHttp(http, 1_000)) : await probePort(host, port, 1_000)) return true;
      const delay = pollDelay(this.clock.now() - start);
      if (signal?.aborted || this.clock.now() + delay >= deadline) return false;
      await this.clock.sleep(delay, signal);
    }
  }

  private fail(logger: Logger, kind: NonNullable<HealthReport['problem']>['kind'], message: string): HealthReport {
    logger.health('Health check failed:', 'error');
    logger.health(`- ${message}.`, 'error');
    logger.health(HEALTH_CLOSING_LINE, 'error');
    return { ok: false, results: [], problem: { kind, message } };
  }
}

/**
 * The specification's lines for the answers of a health check: `Response from GET
 * <path> is <status>` each, then on failure `Health check failed:`, one `- GET
 * <path> returned <status>.` per failing path and the closing line. An engine
 * whose own scheduler ran the check (Swarm's HEALTHCHECK) reports it with these too.
 */
export function reportPathResults(results: readonly PathResult[], logger: Logger): void {
  for (const r of results)
    logger.event({ type: 'health-check', path: r.path, status: typeof r.status === 'number' ? r.status : null, ok: r.ok }, `Response from GET ${r.path} is ${r.status}`, { kind: 'health' });
  const failing = results.filter((r) => !r.ok);
  if (failing.length === 0) return;
  logger.health('Health check failed:', 'error');
  for (const r of failing) logger.health(`- GET ${r.path} returned ${r.status}.`, 'error');
  logger.health(HEALTH_CLOSING_LINE, 'error');
}

/** Why the caller stopped the check early: an interruption, or what its abort reason says (the web process exited). */
function whyStopped(reason: unknown): string {
  if (typeof reason === 'string') return /^SIG[A-Z]+$/.test(reason) ? `interrupted by ${reason}` : reason;
  return reason instanceof Error && !(reason.name === 'AbortError') ? reason.message : 'interrupted';
}

function toResult(path: string, outcome: ProbeOutcome): PathResult & { transient: boolean } {
  if ('status' in outcome) {
    return { path, status: outcome.status, ok: outcome.status === 200, transient: TRANSIENT_STATUSES.has(outcome.status) };
  }
  return { path, status: outcome.failure, ok: false, transient: outcome.transient };
}
