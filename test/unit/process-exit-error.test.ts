import { describe, expect, it } from 'vitest';
import type { ProcessExit } from '../../src/executor/contract.js';
import { exitFix, processExitError } from '../../src/executor/process-exit-error.js';

const exit = (over: Partial<ProcessExit> = {}): ProcessExit => ({
  process: 'web',
  role: 'web',
  code: 1,
  signal: null,
  ranMs: 40,
  restarts: 2,
  inARow: 3,
  willRestart: true,
  output: [],
  ...over,
});

describe('what a web process that exited did, and the fix that follows (processExitError)', () => {
  it('says how it ended, when, how many times it was restarted and its last lines (not the banner and epilogue of npm); all of them are in the details', () => {
    const output = ['> app@1.0.0 start', '> next start', '', 'sh: 1: next: not found', 'npm error Lifecycle script `start` failed with error:', 'npm error code 127', 'npm error command failed'];
    const error = processExitError(exit({ code: 127, output }), { kind: 'before-ready', port: 8080, paths: [] });
    expect(error.code).toBe('RUNPLAN_E_RUN_PROCESS_EXITED');
    expect(error.kind).toBe('deployment');
    expect(error.reason).toBe(
      'the deployment failed: the web process exited with status 127 before it accepted connections on port 8080; it had been restarted 2 times; its last line: "sh: 1: next: not found".',
    );
    expect(error.fix).toMatch(/^A program the command runs was not found \(exit status 127/);
    expect(error.details).toEqual({ process: 'web', exitCode: 127, signal: null, restarts: 2, phase: 'before-ready', output });
  });

  it('quotes a line a restarted process said again only once', () => {
    const said = ['boom', 'boom', 'boom'];
    expect(processExitError(exit({ output: said }), { kind: 'before-ready', port: 1, paths: [] }).reason).toMatch(/its last line: "boom"\.$/);
  });

  it('names the health-check paths before readiness, and the time and window after it', () => {
    const paths = processExitError(exit({ restarts: 0, output: [] }), { kind: 'before-ready', port: 8080, paths: ['/health', '/db'] }, [
      { path: '/health', status: 'no response: connection refused', ok: false },
    ]);
    expect(paths.reason).toBe('the deployment failed: the web process exited with status 1 before its health check passed (GET /health, GET /db); it was not restarted; it printed nothing.');
    expect(paths.details.results).toEqual([{ path: '/health', status: 'no response: connection refused', ok: false }]);
    const window = processExitError(exit({ code: 0, restarts: 0, output: ['ready on 0.0.0.0:8080'] }), { kind: 'stability-window', windowMs: 3_000, afterReadyMs: 400 });
    expect(window.reason).toBe(
      'the deployment failed: the web process exited with status 0 0.4 s after its health check passed, within the stability window of 3 s; it was not restarted; its last line: "ready on 0.0.0.0:8080".',
    );
    expect(window.fix).toMatch(/^It exited with status 0, as a finished command does/);
    expect(processExitError(exit({ code: null, signal: 'SIGKILL' }), { kind: 'before-ready', port: 1, paths: [] }).reason).toContain('the web process was killed by SIGKILL before');
  });

  it('finds the fix from how it ended and what it said last', () => {
    const fix = (code: number | null, output: string[], signal: string | null = null) => exitFix({ code, signal }, output);
    expect(fix(127, [])).toMatch(/not found .*install it in the build/);
    expect(fix(126, ['sh: 1: ./start.sh: Permission denied'])).toMatch(/cannot be executed \(exit status 126/);
    // A build output that was never built: the build hook.
    expect(fix(1, ["Error: Cannot find module '/app/dist/server.js'", '    at Module._resolveFilename'])).toBe(
      'A file the process needs is not in the build (/app/dist/server.js): when the application makes it with a build script (dist/, build/, .next/…), have the service run that script with CC_POST_BUILD_HOOK (e.g. CC_POST_BUILD_HOOK="npm run build"); otherwise commit the file.',
    );
    expect(fix(1, ["Error: Could not find a production build in the '.next' directory. Try building your app with 'next build' before starting the production server."])).toContain(
      'not in the build (.next)',
    );
    expect(fix(1, ["Error: ENOENT: no such file or directory, open '/srv/app/build/index.html'"])).toContain('not in the build (/srv/app/build/index.html)');
    expect(fix(1, ["Error: Cannot find module 'express'"])).toMatch(/^The module "express" is not installed/);
    expect(fix(1, ['Error: listen EADDRINUSE: address already in use 0.0.0.0:8080'])).toMatch(/EADDRINUSE/);
    expect(fix(null, [], 'SIGKILL')).toMatch(/out-of-memory killer/);
    expect(fix(null, [], 'SIGSEGV')).toMatch(/^It was killed by SIGSEGV/);
    expect(fix(3, ['something else went wrong'])).toMatch(/^Read the process's last lines/);
  });
});
