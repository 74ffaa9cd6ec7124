import { existsSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import type { ProcessExit } from '../../src/executor/contract.js';
import { localRunDir } from '../../src/process/run-dir.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LocalProcessRunner } from '../../src/engines/local/local-process-runner.js';
import { assembleEnvironment } from '../../src/env/assemble.js';
import { Logger, memorySink } from '../../src/log/logger.js';
import type { PlannedProcess, RunPlan } from '../../src/plan/schema.js';
import { InstantClock } from '../../src/time/clock.js';
import { DEFAULT_RESTART, restartDelay } from '../../src/plan/restart-policy.js';
import { resolveHooks } from '../../src/planning/resolve-hooks.js';
import { resolveWorkers } from '../../src/planning/resolve-workers.js';
import { get } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive, killAll, processesUnder, processesWithArgument, processTreeScript, statFields } from '../helpers/processes.js';
import { tempDir, writableTempDir } from '../helpers/temp.js';

/** What a plan holds besides its processes, empty: the runner lowers the whole plan. */
const EMPTY_PARTS = { files: [], build: { steps: [] }, layers: [], environment: { variables: [] } };
const proc = (name: string, script: string, extra: Partial<PlannedProcess> = {}): PlannedProcess => ({
  name,
  role: 'worker',
  command: { kind: 'shell', script },
  cwd: '.',
  env: {},
  pathPrepend: [],
  port: null,
  restart: DEFAULT_RESTART,
  stopGraceMs: 2_000,
  ...extra,
});

async function start(processes: PlannedProcess[], env: Record<string, string> = {}, clock = new InstantClock()) {
  const appDir = await tempDir();
  const sink = memorySink();
  const app = await new LocalProcessRunner({ clock }).start({
    plan: { processes, ...EMPTY_PARTS } as unknown as RunPlan,
    appDir,
    env: assembleEnvironment({ application: env }),
    logger: new Logger(sink),
  });
  return { app, sink, appDir, clock };
}

async function until(condition: () => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const WEB = `node -e "require('http').createServer((q, s) => s.end(JSON.stringify({ port: process.env.PORT, greeting: process.env.GREETING, extra: process.env.EXTRA }))).listen(+process.env.PORT, '0.0.0.0')"`;

describe('LocalProcessRunner', () => {
  it('starts each process with the deployment environment and its own overrides', async () => {
    const port = await freePort();
    const { app, sink } = await start([proc('web', WEB, { role: 'web', port, env: { EXTRA: 'from plan' } })], { PORT: String(port), GREETING: 'hello' });
    try {
      await until(() => sink.lines.length > 0 || app.processes()[0]?.running === true);
      let answer: unknown;
      for (let i = 0; i < 100 && !answer; i++) answer = await get(`http://127.0.0.1:${port}/`).catch(() => new Promise((r) => setTimeout(() => r(undefined), 50)));
      expect(JSON.parse((answer as { body: string }).body)).toEqual({ port: String(port), greeting: 'hello', extra: 'from plan' });
    } finally {
      await app.stop();
    }
  });

  it('restarts a crashing process with exponential back-off, and logs each restart', async () => {
    const { app, sink, clock } = await start([proc('worker', 'echo crashing; exit 3')]);
    await until(() => (app.processes()[0]?.restarts ?? 0) >= 4);
    await app.stop();
    expect(clock.sleeps.slice(0, 4)).toEqual([1_000, 2_000, 4_000, 8_000]);
    const restarts = sink.lines.filter((l) => l.text.includes('restarting in')).map((l) => l.text);
    expect(restarts[0]).toMatch(/^worker exited with code 3 after .*; restarting in 1 s \(restart 1\)$/);
    expect(restarts[1]).toMatch(/restarting in 2 s \(restart 2\)$/);
    expect(restartDelay(DEFAULT_RESTART, 20)).toBe(DEFAULT_RESTART.maxDelayMs);
  });

  it('stops with SIGTERM to the whole process group, and leaves no child behind', async () => {
    const { app, appDir, sink } = await start([proc('web', 'sleep 300 & sleep 300 & wait')]);
    await until(() => processesUnder(appDir).length >= 3);
    await app.stop();
    expect(processesUnder(appDir)).toEqual([]);
    expect(sink.lines.some((l) => l.text.startsWith('stopping web (SIGTERM to process group'))).toBe(true);
  });

  it('sends SIGKILL after the grace period to a process that ignores SIGTERM', async () => {
    const script = `node -e "process.on('SIGTERM', () => console.log('ignoring SIGTERM')); console.log('ready'); setInterval(() => {}, 1000)"`;
    const { app, appDir, sink } = await start([proc('stubborn', script, { stopGraceMs: 500 })]);
    await until(() => sink.lines.some((l) => l.text === 'ready'));
    const pid = app.processes()[0]?.pid as number;
    await app.stop();
    expect(isAlive(pid)).toBe(false);
    expect(processesUnder(appDir)).toEqual([]);
    const texts = sink.lines.map((l) => l.text);
    expect(texts).toContain('ignoring SIGTERM');
    expect(texts).toContain('stubborn still running after 0.5 s; sending SIGKILL');
  });

  it('caps the back-off of a crash loop and reports the loop once, coded, at its third exit in a row', async () => {
    const restart = { policy: 'always' as const, initialDelayMs: 1_000, maxDelayMs: 4_000, resetAfterMs: 30_000 };
    const { app, sink, clock } = await start([proc('worker', 'echo crashing; exit 3', { restart })]);
    await until(() => (app.processes()[0]?.restarts ?? 0) >= 6);
    await app.stop();
    expect(clock.sleeps.slice(0, 6)).toEqual([1_000, 2_000, 4_000, 4_000, 4_000, 4_000]);
    const loops = sink.lines.filter((l) => l.text.includes('crash-looping'));
    expect(loops.map((l) => [l.level, l.text])).toEqual([
      [
        'warn',
        'RUNPLAN_W_RUN_CRASH_LOOP: worker is crash-looping: 3 exits in a row, each within 30 s of starting (last: exited with code 3); restarts are spaced out up to 10 s apart until it stays up 30 s',
      ],
    ]);
  });

  it('tells each exit of a process: status, restarts so far, exits in a row, whether it comes back, and its last lines, redacted', async () => {
    const secret = 'hunter2-very-secret';
    const appDir = await tempDir();
    const sink = memorySink();
    const env = assembleEnvironment({ application: { API_TOKEN: secret } });
    const app = await new LocalProcessRunner({ clock: new InstantClock() }).start({
      plan: { processes: [proc('web', 'echo "token $API_TOKEN"; echo "boom" >&2; exit 4', { role: 'web' })], ...EMPTY_PARTS } as unknown as RunPlan,
      appDir,
      env,
      logger: new Logger(sink, env.redactor),
    });
    const exits: ProcessExit[] = [];
    const stopTelling = app.onExit?.((exit) => exits.push(exit));
    await until(() => exits.length >= 2);
    stopTelling?.();
    await app.stop();
    const [first, second] = exits;
    expect(first).toMatchObject({ process: 'web', role: 'web', code: 4, signal: null, restarts: 0, inARow: 1, willRestart: true });
    expect(second).toMatchObject({ restarts: 1, inARow: 2 });
    expect(first?.output).toEqual(expect.arrayContaining(['token ***', 'boom']));
    expect(JSON.stringify(exits)).not.toContain(secret);
  });

  it('leaves no process of the tree behind, not even a double-forked daemon in its own session that ignores SIGTERM', async () => {
    const marker = `runplan-tree-${process.pid}-${Date.now()}`;
    const pidsFile = join(await writableTempDir(), 'pids');
    const { app, sink } = await start([proc('forker', processTreeScript(marker), { stopGraceMs: 500 })], { TREE_PIDS: pidsFile });
    onTestFinished(() => killAll(processesWithArgument(marker)));
    const roles = async () =>
      new Map(
        (await readFile(pidsFile, 'utf8').catch(() => ''))
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split(' ') as [string, string]),
      );
    const deadline = Date.now() + 20_000;
    while ((await roles()).size < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const pids = await roles();
    expect([...pids.keys()].sort()).toEqual(['child', 'daemon', 'grandchild']);
    const leader = app.processes()[0]?.pid as number;
    // The daemon really left: another session and group, so a signal to the group misses it.
    const daemon = statFields(Number(pids.get('daemon')));
    expect(daemon?.session).not.toBe(statFields(leader)?.session);
    expect(daemon?.pgid).not.toBe(leader);
    expect(processesWithArgument(marker)).toHaveLength(3);
    await app.stop();
    expect(processesWithArgument(marker)).toEqual([]);
    for (const pid of pids.values()) expect(isAlive(Number(pid)) && statFields(Number(pid))?.state !== 'Z').toBe(false);
    expect(sink.lines.map((l) => l.text)).toContain('forker still running after 0.5 s; sending SIGKILL');
  });

  it('stops what a process left behind when it exits by itself, daemons included, before restarting it', async () => {
    const marker = `runplan-leftover-${process.pid}-${Date.now()}`;
    const daemon = `process.chdir('/'); setInterval(() => {}, 1000)`;
    const launcher = `require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(daemon)}, '${marker}'], { detached: true, stdio: 'ignore' }).unref()`;
    onTestFinished(() => killAll(processesWithArgument(marker)));
    const { app } = await start([
      proc('once', `${JSON.stringify(process.execPath)} -e '${launcher.replaceAll("'", `'\\''`)}'; echo started; exit 0`, { restart: { ...DEFAULT_RESTART, policy: 'never' } }),
    ]);
    await until(() => app.processes()[0]?.running === false);
    // The supervisor stops the tree once the leader is gone; give it the time it polls.
    const deadline = Date.now() + 10_000;
    while (processesWithArgument(marker).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(processesWithArgument(marker)).toEqual([]);
    await app.stop();
  });

  it('does not restart processes once stopping, even mid back-off', async () => {
    const { app } = await start([proc('worker', 'exit 1')]);
    await until(() => (app.processes()[0]?.restarts ?? 0) >= 1);
    await app.stop();
    const restarts = app.processes()[0]?.restarts;
    await new Promise((r) => setTimeout(r, 200));
    expect(app.processes()[0]?.restarts).toBe(restarts);
    expect(app.processes()[0]?.running).toBe(false);
  });

  it('starts a process with startAfter only once the server it waits for answers on its unix socket', async () => {
    const socketDir = await tempDir();
    // Writable by the processes: as root, they run as runplan's unprivileged user (docs/security.md).
    await chmod(socketDir, 0o777);
    const socket = `${socketDir}/backend.sock`;
    const backend = `node -e "setTimeout(() => require('http').createServer((q, s) => { s.statusCode = 404; s.end(); }).listen(process.env.SOCK), 700)"`;
    const front = `node -e "require('http').request({ socketPath: process.env.SOCK, path: '/' }, (r) => console.log('front saw backend ' + r.statusCode)).end(); setInterval(() => {}, 1000)"`;
    const { app, sink } = await start([proc('backend', backend), proc('front', front, { startAfter: [{ kind: 'http-unix-socket', socket, path: '/' }] })], { SOCK: socket });
    try {
      await until(() => sink.lines.some((l) => l.text.startsWith('front saw backend')));
      const texts = sink.lines.map((l) => l.text);
      expect(texts).toContain(`front starts once GET / answered on unix:${socket}`);
      // Any answer counts, even a 404: the server is up.
      expect(texts).toContain('front saw backend 404');
      expect(texts.findIndex((t) => t.startsWith('started backend'))).toBeLessThan(texts.findIndex((t) => t.startsWith('started front')));
    } finally {
      await app.stop();
    }
  });

  it('never starts a waiting process when stopped first, and stops the others', async () => {
    const socketDir = await tempDir();
    const { app, appDir } = await start([
      proc('backend', 'sleep 300'),
      proc('front', 'echo should-not-run', { startAfter: [{ kind: 'http-unix-socket', socket: `${socketDir}/none.sock`, path: '/' }] }),
    ]);
    await until(() => processesUnder(appDir).length >= 1);
    await app.stop();
    expect(app.processes().find((p) => p.name === 'front')?.pid).toBeUndefined();
    expect(processesUnder(appDir)).toEqual([]);
  });
});

describe('LocalProcessRunner: workers (CC_WORKER_RESTART) and the pre-run hook', () => {
  const worker = (script: string, restart: Record<string, string> = {}) => {
    const [planned] = resolveWorkers(new Map(Object.entries({ CC_WORKER_COMMAND: script, ...restart })), { env: {}, pathPrepend: [] }, new Set()).processes;
    return { ...(planned as PlannedProcess), stopGraceMs: 2_000 };
  };
  // As root the processes and hooks run as runplan's unprivileged user: they write into a directory it may write to.
  const startWritable = async (processes: PlannedProcess[]) => {
    const appDir = await writableTempDir();
    const sink = memorySink();
    const app = await new LocalProcessRunner({ clock: new InstantClock() }).start({
      plan: { processes, ...EMPTY_PARTS } as unknown as RunPlan,
      appDir,
      env: assembleEnvironment({}),
      logger: new Logger(sink),
    });
    return { app, sink, appDir };
  };

  it('on-failure (the default) restarts a worker that exits 1, each time after the same delay', async () => {
    const { app, clock, sink } = await start([worker('echo once >> runs.txt; exit 1', { CC_WORKER_RESTART_DELAY: '3' })]);
    await until(() => (app.processes()[0]?.restarts ?? 0) >= 3);
    await app.stop();
    expect(clock.sleeps.slice(0, 3)).toEqual([3_000, 3_000, 3_000]);
    expect(sink.lines.some((l) => /^worker exited with code 1 after .*; restarting in 3 s \(restart 1\)$/.test(l.text))).toBe(true);
  });

  it('on-failure does not restart a worker that exits 0', async () => {
    const { app, sink } = await start([worker('exit 0')]);
    await until(() => sink.lines.some((l) => l.text.includes('not restarted')));
    await new Promise((r) => setTimeout(r, 200));
    expect(app.processes()[0]?.restarts).toBe(0);
    expect(sink.lines.map((l) => l.text)).toContainEqual(expect.stringMatching(/^worker exited with code 0 after .*; not restarted \(policy on-failure\)$/));
    await app.stop();
  });

  it('no never restarts a worker, even after exit 1', async () => {
    const { app, sink, appDir } = await startWritable([worker('echo ran >> runs.txt; exit 1', { CC_WORKER_RESTART: 'no' })]);
    await until(() => sink.lines.some((l) => l.text.includes('not restarted')));
    await new Promise((r) => setTimeout(r, 200));
    expect(app.processes()[0]?.restarts).toBe(0);
    expect(await readFile(join(appDir, 'runs.txt'), 'utf8')).toBe('ran\n');
    expect(sink.lines.map((l) => l.text)).toContainEqual(expect.stringMatching(/exited with code 1 after .*; not restarted \(policy never\)$/));
    await app.stop();
  });

  it('always restarts a worker that exits 0', async () => {
    const { app, clock } = await start([worker('exit 0', { CC_WORKER_RESTART: 'always', CC_WORKER_RESTART_DELAY: '0' })]);
    await until(() => (app.processes()[0]?.restarts ?? 0) >= 2);
    await app.stop();
    // At once after a lone exit; the second in a row already waits the floor (next test).
    expect(clock.sleeps.slice(0, 2)).toEqual([0, 100]);
  });

  it('never restarts in a tight loop: a zero delay gets a floor of 100 ms doubling up to 10 s, and the loop is reported once', async () => {
    // CC_WORKER_RESTART=always with CC_WORKER_RESTART_DELAY=0 restarted an instant exit 1,533 times in 8 s (issue 21).
    const { app, clock, sink } = await start([worker('exit 1', { CC_WORKER_RESTART: 'always', CC_WORKER_RESTART_DELAY: '0' })]);
    await until(() => (app.processes()[0]?.restarts ?? 0) >= 10);
    await app.stop();
    expect(clock.sleeps.slice(0, 10)).toEqual([0, 100, 200, 400, 800, 1_600, 3_200, 6_400, 10_000, 10_000]);
    expect(sink.lines.filter((l) => l.text.startsWith('RUNPLAN_W_RUN_CRASH_LOOP: worker is crash-looping: 3 exits in a row'))).toHaveLength(1);
  });

  it('fails at once when a program cannot be spawned, and stops the processes already started', async () => {
    const appDir = await tempDir();
    const attempt = new LocalProcessRunner({ clock: new InstantClock() }).start({
      plan: { processes: [proc('web', 'sleep 300'), proc('worker', '', { command: { kind: 'exec', argv: ['runplan-no-such-program'] } })], ...EMPTY_PARTS } as unknown as RunPlan,
      appDir,
      env: assembleEnvironment({}),
      logger: new Logger(memorySink()),
    });
    await expect(attempt).rejects.toMatchObject({
      code: 'RUNPLAN_E_RUN_SPAWN_FAILED',
      kind: 'deployment',
      message: expect.stringContaining('process "worker" could not be started'),
      details: { process: 'worker' },
    });
    expect(processesUnder(appDir)).toEqual([]);
  });

  it('runs the pre-run hook in the application folder before any process starts; a failing one starts none and names the variable', async () => {
    const appDir = await writableTempDir();
    const sink = memorySink();
    const { runHooks } = resolveHooks(new Map([['CC_PRE_RUN_HOOK', 'echo "prepared $GREETING" > pre-run.txt']]), [], {}, { env: {}, pathPrepend: [] });
    const env = assembleEnvironment({ application: { GREETING: 'hello' } });
    const app = await new LocalProcessRunner({ clock: new InstantClock() }).start({
      plan: { processes: [proc('reader', 'cat pre-run.txt; sleep 300')], ...EMPTY_PARTS, runHooks } as unknown as RunPlan,
      appDir,
      env,
      logger: new Logger(sink),
    });
    await until(() => sink.lines.some((l) => l.text === 'prepared hello'));
    await app.stop();

    const failing = resolveHooks(new Map([['CC_PRE_RUN_HOOK', 'exit 7']]), [], {}, { env: {}, pathPrepend: [] }).runHooks;
    const started = new LocalProcessRunner({ clock: new InstantClock() }).start({
      plan: { processes: [proc('never', 'echo started > started.txt; sleep 300')], ...EMPTY_PARTS, runHooks: failing } as unknown as RunPlan,
      appDir,
      env,
      logger: new Logger(memorySink()),
    });
    await expect(started).rejects.toMatchObject({ code: 'RUNPLAN_E_HOOK_FAILED', variable: 'CC_PRE_RUN_HOOK' });
    await expect(readFile(join(appDir, 'started.txt'), 'utf8')).rejects.toThrow();
    expect(processesUnder(appDir)).toEqual([]);
  });

  const hanging = (marker: string) => resolveHooks(new Map([['CC_PRE_RUN_HOOK', `echo waiting; sleep 300 & sh -c 'sleep 300' ${marker} & wait`]]), [], {}, { env: {}, pathPrepend: [] }).runHooks;

  it('an interruption stops a pre-run hook with everything it started, starts no process and removes the run folder', async () => {
    const appDir = await writableTempDir();
    const marker = `runplan-hook-${process.pid}-${Date.now()}`;
    onTestFinished(() => killAll(processesWithArgument(marker)));
    const sink = memorySink();
    const interrupt = new AbortController();
    const started = new LocalProcessRunner({ clock: new InstantClock() }).start({
      plan: { processes: [proc('never', 'echo started > started.txt; sleep 300')], ...EMPTY_PARTS, runHooks: hanging(marker) } as unknown as RunPlan,
      appDir,
      env: assembleEnvironment({}),
      logger: new Logger(sink),
      signal: interrupt.signal,
    });
    await until(() => sink.lines.some((l) => l.text === 'waiting') && processesWithArgument(marker).length > 0);
    interrupt.abort('SIGTERM');
    await expect(started).rejects.toMatchObject({ code: 'RUNPLAN_E_BUILD_INTERRUPTED' });
    expect(processesWithArgument(marker)).toEqual([]);
    expect(processesUnder(appDir)).toEqual([]);
    expect(existsSync(localRunDir(appDir))).toBe(false);
    await expect(readFile(join(appDir, 'started.txt'), 'utf8')).rejects.toThrow();
  });

  it('stops a pre-run hook that outlives the step timeout, with RUNPLAN_E_BUILD_STEP_TIMEOUT naming it', async () => {
    const appDir = await writableTempDir();
    const marker = `runplan-hook-timeout-${process.pid}-${Date.now()}`;
    onTestFinished(() => killAll(processesWithArgument(marker)));
    const started = new LocalProcessRunner({ clock: new InstantClock() }).start({
      plan: { processes: [proc('never', 'sleep 300')], ...EMPTY_PARTS, runHooks: hanging(marker) } as unknown as RunPlan,
      appDir,
      env: assembleEnvironment({}),
      logger: new Logger(memorySink()),
      hookTimeoutMs: 500,
    });
    await expect(started).rejects.toMatchObject({ code: 'RUNPLAN_E_BUILD_STEP_TIMEOUT', details: { step: 'pre-run-hook', timeoutMs: 500 } });
    expect(processesWithArgument(marker)).toEqual([]);
    expect(existsSync(localRunDir(appDir))).toBe(false);
  });
});
