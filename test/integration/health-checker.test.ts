import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpHealthChecker, HEALTH_CLOSING_LINE } from '../../src/executor/http-health-checker.js';
import { planHealthCheck } from '../../src/health/health-paths.js';
import { Logger, memorySink } from '../../src/log/logger.js';
import { InstantClock } from '../../src/time/clock.js';
import { freePort } from '../helpers/ports.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise((r) => {
          s.closeAllConnections();
          s.close(r);
        }),
    ),
  );
});

/** A real HTTP server answering each path with the given status (or a function of the request count). */
async function serve(routes: Record<string, number | ((n: number) => number) | 'hang'>, host = '0.0.0.0'): Promise<number> {
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    const n = (counts.get(req.url ?? '') ?? 0) + 1;
    counts.set(req.url ?? '', n);
    const route = routes[req.url ?? ''];
    if (route === 'hang') return;
    const status = typeof route === 'function' ? route(n) : (route ?? 404);
    res.writeHead(status, status >= 300 && status < 400 ? { location: '/' } : {});
    res.end(String(status));
  });
  servers.push(server);
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, host, r));
  return port;
}

function run(port: number, paths: string[], timing: Partial<{ readyTimeoutMs: number; requestTimeoutMs: number; retryDelayMs: number }> = {}, verifyListenAddress = false) {
  const clock = new InstantClock();
  const sink = memorySink();
  const check = planHealthCheck(
    paths.map((path, i) => ({ path, source: `CC_HEALTH_CHECK_PATH_${i}` })),
    { kind: 'port', reason: 'r' },
    port,
    timing,
  );
  const report = new HttpHealthChecker({ clock }).check({ baseUrl: `http://127.0.0.1:${port}`, check, verifyListenAddress }, new Logger(sink));
  return report.then((r) => ({ report: r, lines: sink.lines.map((l) => l.text), clock }));
}

describe('HTTP health check (specification health-check rules)', () => {
  it('passes when every path answers exactly 200, logging one line per path', async () => {
    const port = await serve({ '/': 200, '/health': 200 });
    const { report, lines } = await run(port, ['/', '/health']);
    expect(report.ok).toBe(true);
    expect(lines).toEqual(['Response from GET / is 200', 'Response from GET /health is 200']);
  });

  it('checks all paths and fails with the exact lines when one is not 200', async () => {
    const port = await serve({ '/': 200, '/missing': 404, '/also': 200 });
    const { report, lines } = await run(port, ['/', '/missing', '/also']);
    expect(report.ok).toBe(false);
    expect(lines).toEqual([
      'Response from GET / is 200',
      'Response from GET /missing is 404',
      'Response from GET /also is 200',
      'Health check failed:',
      '- GET /missing returned 404.',
      HEALTH_CLOSING_LINE,
    ]);
    expect(HEALTH_CLOSING_LINE).toBe('If the deployment fails after this message, please update your configuration and redeploy.');
  });

  it("behind a proxy (portProbe http), waits on the health path, never asking the application's root (a GET / may do work)", async () => {
    const asked: string[] = [];
    const server = createServer((req, res) => {
      asked.push(req.url ?? '');
      res.writeHead(200);
      res.end('ok');
    });
    servers.push(server);
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    const check = planHealthCheck([{ path: '/health', source: 'CC_HEALTH_CHECK_PATH' }], { kind: 'port', reason: 'r' }, port, {});
    const report = await new HttpHealthChecker({ clock: new InstantClock() }).check({ baseUrl: `http://127.0.0.1:${port}`, check, portProbe: 'http' }, new Logger(memorySink()));
    expect(report.ok).toBe(true);
    expect(asked).toEqual(['/health', '/health']);
  });

  it('does not follow redirects and accepts no 2xx other than 200', async () => {
    const port = await serve({ '/moved': 301, '/found': 302, '/created': 201, '/empty': 204 });
    const { report, lines } = await run(port, ['/moved', '/found', '/created', '/empty']);
    expect(report.ok).toBe(false);
    expect(lines.filter((l) => l.startsWith('- '))).toEqual(['- GET /moved returned 301.', '- GET /found returned 302.', '- GET /created returned 201.', '- GET /empty returned 204.']);
  });

  it('treats an ordinary error status as final, without retrying', async () => {
    const port = await serve({ '/': 500 });
    const { report, clock } = await run(port, ['/']);
    expect(report.ok).toBe(false);
    expect(clock.sleeps).toEqual([]);
  });

  it('retries while the application answers 502–504, then passes', async () => {
    const port = await serve({ '/': (n) => (n < 3 ? 503 : 200) });
    const { report, lines, clock } = await run(port, ['/'], { retryDelayMs: 1000 });
    expect(report.ok).toBe(true);
    expect(lines.filter((l) => l.startsWith('Waiting for the application'))).toHaveLength(2);
    expect(lines.at(-1)).toBe('Response from GET / is 200');
    expect(clock.sleeps).toEqual([1000, 1000]);
  });

  it('reports a refused connection readably once the ready timeout is spent', async () => {
    const port = await freePort();
    const { report, lines } = await run(port, ['/'], { readyTimeoutMs: 2000, retryDelayMs: 500 });
    expect(report.ok).toBe(false);
    expect(lines).toContain('Response from GET / is no response: connection refused');
    expect(lines).toContain('- GET / returned no response: connection refused.');
    expect(lines.at(-1)).toBe(HEALTH_CLOSING_LINE);
  });

  it('reports a timeout readably', async () => {
    const port = await serve({ '/slow': 'hang' });
    const { report, lines } = await run(port, ['/slow'], { requestTimeoutMs: 300, readyTimeoutMs: 1500, retryDelayMs: 1000 });
    expect(report.ok).toBe(false);
    expect(lines).toContain('- GET /slow returned no response: timed out after 0.3 s.');
  });

  it('with no path, passes when the port accepts connections on all interfaces', async () => {
    const port = await serve({}, '0.0.0.0');
    const { report, lines } = await run(port, [], {}, true);
    expect(report.ok).toBe(true);
    expect(lines).toEqual([`Port ${port} accepts connections`]);
  });

  it('with no path, fails when the port never accepts connections within the ready timeout', async () => {
    const port = await freePort();
    const { report, lines, clock } = await run(port, [], { readyTimeoutMs: 3000 });
    expect(report.ok).toBe(false);
    expect(lines).toEqual(['Health check failed:', `- port ${port} did not accept connections within 3 s.`, HEALTH_CLOSING_LINE]);
    expect(clock.now()).toBeGreaterThanOrEqual(2800);
  });

  it('fails an application bound to 127.0.0.1 only, which the service could not reach', async () => {
    const port = await serve({ '/': 200 }, '127.0.0.1');
    const { report, lines } = await run(port, [], {}, true);
    expect(report.ok).toBe(false);
    expect(lines[1]).toBe(`- port ${port} is bound to the loopback interface only; listen on 0.0.0.0.`);
  });
});
