import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { InstantClock } from 'runplan/process';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive } from '../../test/helpers/processes.js';
import { HeldClock } from './helpers/held-clock.js';
import { exitWords, type Part, type SupervisedPart, Supervisor } from '../src/supervision/supervisor.js';

/** A part made of a real process per run: `programs` gives each run's command line (the last one is kept for the runs after). */
function processPart(programs: readonly (readonly string[])[], { detachable = false } = {}): Part & { readonly pids: number[]; alive(): boolean } {
  let child: ChildProcess | undefined;
  let runs = 0;
  const pids: number[] = [];
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  // Let go as the edge and sshd are: the process is no longer this part's, and holds nothing of this one.
  const detach = () => {
    child?.unref();
    child = undefined;
  };
  return {
    ...(detachable ? { detach } : {}),
    id: 'test',
    name: 'the test server',
    pids,
    alive: running,
    async start() {
      const [program, ...args] = programs[Math.min(runs, programs.length - 1)] as string[];
      runs += 1;
      const c = spawn(program as string, args, { stdio: 'ignore' });
      await new Promise((resolve, reject) => {
        c.once('spawn', resolve);
        c.once('error', reject);
      });
      child = c;
      pids.push(c.pid as number);
      const ended = new Promise<string>((resolve) => c.once('exit', (code, signal) => resolve(exitWords(code, signal))));
      return { pid: c.pid, ended };
    },
    async stop() {
      if (child === undefined || !running()) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
    async check() {
      return { up: running(), detail: running() ? 'runs' : 'does not run' };
    },
  };
}

async function until(what: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('Supervisor (real processes, an injected clock)', () => {
  const started: SupervisedPart[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((p) => p.stop()));
  });

  it('starts a part that was killed again after its back-off, says so in the log, and its health tells the restart', async () => {
    const lines: string[] = [];
    const part = processPart([['sleep', '600']]);
    const clock = new HeldClock();
    const supervisor = new Supervisor({ log: (l) => lines.push(l), clock });
    started.push(await supervisor.start(part));
    const first = part.pids[0] as number;
    clock.hold();
    process.kill(first, 'SIGKILL');
    await until(() => clock.holding === 1);
    expect(lines).toEqual([expect.stringMatching(/^the test server was killed by SIGKILL after [\d.]+ s; starting it again in 1\.0 s \(restart 1\)$/)]);
    // Down, and said so by the check, until the back-off ends.
    expect(await supervisor.health()).toEqual([{ part: 'test', name: 'the test server', up: false, detail: 'does not run', pid: null, restarts: 0, lastExit: 'was killed by SIGKILL' }]);
    clock.release();
    await until(() => lines.length === 2);
    expect(lines[1]).toMatch(/^the test server serves again \(PID \d+, [\d.]+ s after it stopped\)$/);
    const second = part.pids[1] as number;
    expect(isAlive(second)).toBe(true);
    expect(await supervisor.health()).toEqual([{ part: 'test', name: 'the test server', up: true, detail: 'runs', pid: second, restarts: 1, lastExit: 'was killed by SIGKILL' }]);
  });

  it('does not spin on a part that dies at once: the delay doubles up to its ceiling, which the log names once, and tries on', async () => {
    const lines: string[] = [];
    const part = processPart([['sh', '-c', 'exit 3']]);
    const clock = new InstantClock();
    const supervised = await new Supervisor({ log: (l) => lines.push(l), clock }).start(part);
    started.push(supervised);
    await until(() => clock.sleeps.length >= 8);
    await supervised.stop();
    expect(clock.sleeps.slice(0, 8)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    const ceiling = lines.filter((l) => l.includes('keeps failing'));
    expect(ceiling).toEqual(['the test server keeps failing (6 times in a row, each within 30 s of its start): it is started again every 30 s until a run lasts 30 s']);
    expect(lines[0]).toMatch(/^the test server exited with code 3 after 0\.0 s; starting it again in 1\.0 s \(restart 1\)$/);
  });

  it('tries again, later each time, when a restart itself fails, until one serves', async () => {
    const lines: string[] = [];
    // The first run serves; the next two cannot start (no such program); the fourth serves.
    const part = processPart([['sleep', '600'], ['/nonexistent/runplan-no-server'], ['/nonexistent/runplan-no-server'], ['sleep', '600']]);
    const clock = new InstantClock();
    const supervised = await new Supervisor({ log: (l) => lines.push(l), clock }).start(part);
    started.push(supervised);
    process.kill(part.pids[0] as number, 'SIGKILL');
    await until(() => lines.some((l) => l.includes('serves again')));
    expect(clock.sleeps).toEqual([1_000, 2_000, 4_000]);
    expect(lines.slice(1, 3)).toEqual([
      expect.stringMatching(/^the test server could not be started again: spawn \/nonexistent\/runplan-no-server ENOENT; starting it again in 2\.0 s \(restart 2\)$/),
      expect.stringMatching(/^the test server could not be started again: .*ENOENT; starting it again in 4\.0 s \(restart 3\)$/),
    ]);
    expect(part.alive()).toBe(true);
  });

  it('starts nothing again once stopped: a stop during the back-off ends it, and a part that dies after stopRestarting() stays down', async () => {
    const lines: string[] = [];
    const clock = new HeldClock();
    const supervisor = new Supervisor({ log: (l) => lines.push(l), clock });
    const waiting = processPart([['sleep', '600']]);
    const supervised = await supervisor.start(waiting);
    clock.hold();
    process.kill(waiting.pids[0] as number, 'SIGKILL');
    await until(() => clock.holding === 1);
    await supervised.stop();
    expect(clock.holding).toBe(0);
    expect(waiting.pids).toHaveLength(1);
    expect(await supervisor.health()).toEqual([]);

    clock.release();
    const other = processPart([['sleep', '600']]);
    started.push(await supervisor.start(other));
    supervisor.stopRestarting();
    process.kill(other.pids[0] as number, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(other.pids).toHaveLength(1);
    expect(lines.filter((l) => l.includes('starting it again'))).toHaveLength(1);
  });

  it('lets go of a part on detach(): its process keeps running, and when it dies later nothing is started again; a part that cannot be let go stays supervised', async () => {
    const lines: string[] = [];
    const clock = new InstantClock();
    const supervisor = new Supervisor({ log: (l) => lines.push(l), clock });
    const letGo = processPart([['sleep', '600']], { detachable: true });
    const kept = processPart([['sleep', '600']]);
    await supervisor.start(letGo);
    started.push(await supervisor.start(kept));
    const pid = letGo.pids[0] as number;
    try {
      supervisor.detachAll();
      expect(isAlive(pid)).toBe(true);
      // No longer the supervisor's: status no longer lists it; the other part is still there.
      expect((await supervisor.health()).map((h) => h.pid)).toEqual([kept.pids[0]]);
      process.kill(pid, 'SIGKILL');
      await until(() => !isAlive(pid));
      await new Promise((r) => setTimeout(r, 500));
      expect(letGo.pids).toEqual([pid]);
      expect(clock.sleeps).toEqual([]);
      expect(lines).toEqual([]);
      // The part that could not be let go is started again as before.
      process.kill(kept.pids[0] as number, 'SIGKILL');
      await until(() => lines.some((l) => l.includes('serves again')));
      expect(kept.pids).toHaveLength(2);
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
