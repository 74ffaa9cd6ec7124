import { describe, expect, it } from 'vitest';
import type { ProcessExit, RunningApp } from '../../src/executor/contract.js';
import { healthGate } from '../../src/executor/health-gate.js';
import { assembleEnvironment } from '../../src/env/assemble.js';
import { HEALTH_CLOSING_LINE, HttpHealthChecker } from '../../src/executor/http-health-checker.js';
import { planHealthCheck } from '../../src/health/health-paths.js';
import { Logger, memorySink } from '../../src/log/logger.js';
import type { PlannedProcess, RestartPolicy, RunPlan } from '../../src/plan/schema.js';
import { DEFAULT_RESTART } from '../../src/plan/restart-policy.js';
import { LocalProcessRunner } from '../../src/engines/local/local-process-runner.js';
import { type Clock, InstantClock, systemClock } from '../../src/time/clock.js';
import { freePort } from '../helpers/ports.js';
import { processesUnder } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The deployment's health check together with what its web process does
 * (src/executor/health-gate.ts): real processes under the LocalProcessRunner, the real
 * HTTP health checker. The runner's back-off runs on an instant clock; the
 * stability window on a clock whose wait only ends when the process exits
 * (HeldClock), so no test waits for a window to pass.
 */

/** A clock whose sleeps last until their signal aborts: the stability window then ends only by an exit. */
const heldClock: Clock = {
  now: () => Date.now(),
  sleep: (_ms, signal) => new Promise((resolve) => (signal?.aborted ? resolve() : signal?.addEventListener('abort', () => resolve(), { once: true }))),
};

/** What a plan holds besides its processes, empty: the runner lowers the whole plan. */
const EMPTY_PARTS = { files: [], build: { steps: [] }, layers: [], environment: { variables: [] } };
const node = (source: string) => `${JSON.stringify(process.execPath)} -e ${JSON.stringify(source)}`;
/** A server on PORT that exits `afterMs` after its first connection, saying why first (as `next start` without a build does). */
const exitsAfterFirstConnection = (afterMs: number, said: string, code: number) =>
  node(
    `const s = require('http').createServer((q, r) => r.end('ok')); s.once('connection', () => setTimeout(() => { console.error(${JSON.stringify(said)}); process.exit(${code}); }, ${afterMs})); s.listen(+process.env.PORT, '0.0.0.0')`,
  );
const serves = node(`require('http').createServer((q, r) => r.end('ok')).listen(+process.env.PORT, '0.0.0.0')`);

/** The window's time passes once the process has exited (what a real wait would see), and no sooner. */
const passesOnceExited = (started: RunningApp): Clock => ({
  now: () => Date.now(),
  sleep: async () => {
    const web = () => started.processes()[0];
    while (web()?.running !== false && (web()?.restarts ?? 0) === 0) await new Promise((r) => setTimeout(r, 20));
  },
});

/** A runner that learns of exits only when it asks its engine, as swarm's does: its exits and its process table are brought up to date by refresh() alone. */
function askedOnly(started: RunningApp): RunningApp {
  const pending: ProcessExit[] = [];
  const listeners = new Set<(exit: ProcessExit) => void>();
  let table = started.processes();
  started.onExit?.((exit) => pending.push(exit));
  return {
    processes: () => table,
    stop: () => started.stop(),
    onExit: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    refresh: async () => {
      table = started.processes();
      for (const exit of pending.splice(0)) for (const listener of listeners) listener(exit);
    },
  };
}

async function deploy(
  script: string,
  options: { paths?: string[]; restart?: RestartPolicy; windowMs?: number; clock?: Clock | ((running: RunningApp) => Clock); hideExits?: boolean; exitsWhenAsked?: boolean } = {},
) {
  const port = await freePort();
  const appDir = await tempDir();
  const web: PlannedProcess = {
    name: 'web',
    role: 'web',
    command: { kind: 'shell', script },
    cwd: '.',
    env: {},
    pathPrepend: [],
    port,
    restart: options.restart ?? DEFAULT_RESTART,
    stopGraceMs: 2_000,
  };
  const healthCheck = planHealthCheck(
    (options.paths ?? []).map((path) => ({ path, source: 'env CC_HEALTH_CHECK_PATH' })),
    { kind: 'port', reason: 'no path' },
    port,
  );
  const plan = { processes: [web], ...EMPTY_PARTS, healthCheck } as unknown as RunPlan;
  const sink = memorySink();
  const logger = new Logger(sink);
  const started = await new LocalProcessRunner({ clock: new InstantClock() }).start({ plan, appDir, env: assembleEnvironment({ service: { PORT: String(port) } }), logger });
  // A runner that cannot tell exits (a host's own): only its process table is looked at.
  const running: RunningApp = options.hideExits ? { processes: () => started.processes(), stop: () => started.stop() } : options.exitsWhenAsked ? askedOnly(started) : started;
  try {
    const outcome = await healthGate(running, plan, logger, {
      checker: new HttpHealthChecker({ clock: systemClock }),
      target: { baseUrl: `http://127.0.0.1:${port}`, check: healthCheck, verifyListenAddress: true },
      // The clock sees the processes as they are, whatever the runner tells.
      clock: typeof options.clock === 'function' ? options.clock(started) : (options.clock ?? heldClock),
      windowMs: options.windowMs ?? 3_000,
    });
    return { outcome, lines: sink.lines.map((l) => l.text), port };
  } finally {
    await running.stop();
    expect(processesUnder(appDir)).toEqual([]);
  }
}

describe('a web process that exits before it is healthy', () => {
  it('fails with RUNPLAN_E_RUN_PROCESS_EXITED once it crash-loops: exit status, restarts, its last lines, the fix for "not found"', async () => {
    // An absolute path: "not found" whatever PATH holds.
    const { outcome, lines, port } = await deploy('/nonexistent/runplan-no-such-server --port "$PORT"');
    expect('error' in outcome && outcome.error).toMatchObject({
      code: 'RUNPLAN_E_RUN_PROCESS_EXITED',
      details: { process: 'web', exitCode: 127, signal: null, restarts: 2, phase: 'before-ready' },
      fix: expect.stringMatching(/^A program the command runs was not found \(exit status 127/),
    });
    const error = 'error' in outcome ? outcome.error : undefined;
    expect(error?.reason).toMatch(
      new RegExp(
        `^the deployment failed: the web process exited with status 127 before it accepted connections on port ${port}; it had been restarted 2 times; its last line: "/bin/sh: 1: /nonexistent/runplan-no-such-server: not found"\\.$`,
      ),
    );
    // The health check stopped waiting with its own lines, not at its 60 s timeout.
    const failed = lines.indexOf('Health check failed:');
    expect(lines[failed + 1]).toMatch(new RegExp(`^- port ${port} did not accept connections; the check stopped after .* s: the web process is crash-looping\\.$`));
    expect(lines[failed + 2]).toBe(HEALTH_CLOSING_LINE);
  });

  it("keeps the specification's lines for the configured paths, and stops waiting at once for a process that is not restarted", async () => {
    const { outcome, lines } = await deploy(node(`console.error("Error: Cannot find module '/srv/app/dist/server.js'"); process.exit(1)`), {
      paths: ['/health'],
      restart: { ...DEFAULT_RESTART, policy: 'never' },
    });
    const error = 'error' in outcome ? outcome.error : undefined;
    expect(error).toMatchObject({ code: 'RUNPLAN_E_RUN_PROCESS_EXITED', details: { exitCode: 1, restarts: 0, results: [{ path: '/health', ok: false }] } });
    expect(error?.reason).toContain('before its health check passed (GET /health); it was not restarted');
    expect(error?.fix).toContain('not in the build (/srv/app/dist/server.js)');
    expect(error?.fix).toContain('CC_POST_BUILD_HOOK="npm run build"');
    const response = lines.findIndex((l) => l.startsWith('Response from GET /health is '));
    expect(lines.slice(response, response + 4)).toEqual([
      'Response from GET /health is no response: connection refused',
      'Health check failed:',
      '- GET /health returned no response: connection refused.',
      HEALTH_CLOSING_LINE,
    ]);
  });

  it('a process that answers HTTP and fails its path still fails the health check itself', async () => {
    const { outcome } = await deploy(node(`require('http').createServer((q, r) => { r.statusCode = 500; r.end(); }).listen(+process.env.PORT, '0.0.0.0')`), { paths: ['/'] });
    expect('error' in outcome && outcome.error.code).toBe('RUNPLAN_E_HEALTH_CHECK_FAILED');
  });
});

describe('the stability window', () => {
  it('fails a deployment whose web process accepted the health check, then exited: the same report, after readiness', async () => {
    const said = "Error: Could not find a production build in the '.next' directory.";
    const { outcome, lines, port } = await deploy(exitsAfterFirstConnection(100, said, 1));
    expect(lines).toContain(`Port ${port} accepts connections`);
    expect(lines).toContain('health check passed; the deployment is accepted once web has stayed up 3 s (stability window)');
    const error = 'error' in outcome ? outcome.error : undefined;
    expect(error).toMatchObject({ code: 'RUNPLAN_E_RUN_PROCESS_EXITED', details: { process: 'web', exitCode: 1, restarts: 0, phase: 'stability-window' } });
    expect(error?.reason).toMatch(
      /^the deployment failed: the web process exited with status 1 .* s after its health check passed, within the stability window of 3 s; it was not restarted; its last line: ".*production build.*"\.$/,
    );
    expect(error?.fix).toContain('not in the build (.next)');
  });

  it('accepts a web process that stays up for the window', async () => {
    const { outcome } = await deploy(serves, { clock: new InstantClock() });
    expect(outcome).toEqual({ health: { ok: true, results: [] } });
  });

  it('with a window of 0, accepts at once, as before', async () => {
    const { outcome, lines } = await deploy(exitsAfterFirstConnection(100, 'bye', 0), { windowMs: 0 });
    expect('health' in outcome).toBe(true);
    expect(lines.some((l) => l.includes('stability window'))).toBe(false);
  });

  it("watches a runner that cannot tell exits through its process table, once the window's time is over", async () => {
    const { outcome } = await deploy(exitsAfterFirstConnection(100, 'bye', 0), { hideExits: true, clock: passesOnceExited });
    const error = 'error' in outcome ? outcome.error : undefined;
    expect(error).toMatchObject({ code: 'RUNPLAN_E_RUN_PROCESS_EXITED', details: { process: 'web', exitCode: null, phase: 'stability-window', output: [] } });
    expect(error?.reason).toContain('the web process stopped running (its runner does not tell how)');
  });

  it('asks a runner that learns of exits by asking (RunningApp.refresh) once more when the window is over: the exit it learns then fails the deployment, told in full', async () => {
    const { outcome } = await deploy(exitsAfterFirstConnection(100, 'bye', 0), { exitsWhenAsked: true, clock: passesOnceExited });
    const error = 'error' in outcome ? outcome.error : undefined;
    expect(error).toMatchObject({ code: 'RUNPLAN_E_RUN_PROCESS_EXITED', details: { process: 'web', exitCode: 0, phase: 'stability-window', output: ['bye'] } });
    expect(error?.reason).toContain('the web process exited with status 0');
  });
});
