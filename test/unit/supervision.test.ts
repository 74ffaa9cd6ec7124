import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { DEFAULT_RESTART } from '../../src/plan/restart-policy.js';
import type { RestartPolicy } from '../../src/plan/schema.js';
import { checkS6 } from '../../src/supervision/s6-programs.js';
import { envFileText, finishScript, runScript, type ServiceScriptInput } from '../../src/supervision/service-scripts.js';
import { latestStatus, parseServiceStatus } from '../../src/supervision/service-status.js';
import { tempDir } from '../helpers/temp.js';

const run = promisify(execFile);

/** s6-supervise's status bytes (s6_svstatus_pack): two TAI64N stamps, the PID, the wait status, the flags. */
function statusBytes({ seconds = 1_000, pid = 0, wstat = 0, flags = 0 }: { seconds?: number; pid?: number; wstat?: number; flags?: number }): Buffer {
  const bytes = Buffer.alloc(35);
  bytes.writeBigUInt64BE(2n ** 62n + BigInt(seconds), 0);
  bytes.writeBigUInt64BE(2n ** 62n + BigInt(seconds), 12);
  bytes.writeBigUInt64BE(BigInt(pid), 24);
  bytes.writeUInt16BE(wstat, 32);
  bytes[34] = flags;
  return bytes;
}

const input = (restart: Partial<RestartPolicy> = {}): ServiceScriptInput => ({
  process: 'web',
  argv: ['node', 'server.js'],
  cwd: '/app',
  envFile: '/tree/runs/r1/web/data/env',
  marker: 'runplan-0123',
  restart: { ...DEFAULT_RESTART, ...restart },
  stopGraceMs: 1_000,
  wrapped: true,
  wantedUp: 'echo true',
});

/** Runs the finish script as s6 would after an exit: in a service directory whose run lasted `ranMs`, after `inARow` exits in a row. */
async function finish(restart: Partial<RestartPolicy>, exit: { code?: number; signal?: number }, state: { ranMs: number; inARow?: number }) {
  const dir = await tempDir('runplan-finish-');
  await mkdir(join(dir, 'data'));
  await writeFile(join(dir, 'data', 'started'), String(Date.now() - state.ranMs));
  await writeFile(join(dir, 'data', 'inarow'), String(state.inARow ?? 0));
  // A delay the test does not wait for: `sleep` is the script's last step, and PATH finds this one first.
  await mkdir(join(dir, 'bin'));
  await writeFile(join(dir, 'bin', 'sleep'), '#!/bin/sh\necho "slept $1" >&2\n', { mode: 0o755 });
  const script = join(dir, 'finish');
  await writeFile(script, finishScript(input(restart)), { mode: 0o755 });
  const args = exit.signal === undefined ? [String(exit.code ?? 0), '0'] : ['256', String(exit.signal)];
  const result = await run(script, [...args, 'web'], { cwd: dir, env: { PATH: `${join(dir, 'bin')}:/usr/bin:/bin` } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
  const line = result.stdout.trim();
  const report = line.startsWith('runplan-0123 ') ? (JSON.parse(line.slice('runplan-0123 '.length)) as { exit: Record<string, unknown> }).exit : undefined;
  return { ...result, report, restarts: await readFile(join(dir, 'data', 'restarts'), 'utf8').then(Number, () => 0) };
}

describe('the s6 supervision of a lasting run (src/supervision/)', () => {
  it('reads s6-supervise status: up with its PID, down with the exit code or the signal, and whether s6 wants it up', () => {
    expect(parseServiceStatus(statusBytes({ pid: 4242, flags: 0b100 }))).toMatchObject({ up: true, pid: 4242, wantUp: true, finishing: false });
    expect(parseServiceStatus(statusBytes({ wstat: 3 << 8, flags: 0b1000 }))).toMatchObject({ up: false, pid: undefined, exitCode: 3, signal: undefined, wantUp: false });
    expect(parseServiceStatus(statusBytes({ wstat: 9, flags: 0b110 }))).toMatchObject({ up: false, exitCode: undefined, signal: 9, wantUp: true, finishing: true });
    expect(parseServiceStatus(Buffer.alloc(10))).toBeUndefined();
  });

  it('keeps the later of two overlapping status reads: one that began first and ended last does not put a process that went up back down', () => {
    const down = parseServiceStatus(statusBytes({ seconds: 100, flags: 0b100 }));
    const up = parseServiceStatus(statusBytes({ seconds: 101, pid: 4242, flags: 0b100 }));
    expect(latestStatus(up, down)).toBe(up);
    expect(latestStatus(down, up)).toBe(up);
    expect(latestStatus(up, undefined)).toBe(up);
    expect(latestStatus(undefined, down)).toBe(down);
  });

  it('refuses a machine without s6 with RUNPLAN_E_HOST_SUPERVISOR_UNAVAILABLE, naming the program and the package', async () => {
    await expect(checkS6({ svscan: '/nonexistent/s6-svscan' })).rejects.toMatchObject({
      code: CoreErrors.HOST_SUPERVISOR_UNAVAILABLE.code,
      message: expect.stringContaining('/nonexistent/s6-svscan is missing'),
      fix: expect.stringContaining('apt-get install s6'),
    });
  });

  it("restarts by the plan's policy: the delay doubles with each exit in a row, a long run starts counting again, and s6's own second is taken off", async () => {
    const first = await finish({}, { code: 1 }, { ranMs: 200 });
    expect(first.code).toBe(0);
    expect(first.report).toMatchObject({ code: 1, signal: 0, inARow: 1, restarts: 1, willRestart: true, delayMs: 1000 });
    // A delay of 1 s is s6's own second: finish does not sleep.
    expect(first.stderr).toBe('');
    const third = await finish({}, { code: 1 }, { ranMs: 200, inARow: 2 });
    expect(third.report).toMatchObject({ inARow: 3, delayMs: 4000 });
    expect(third.stderr).toContain('slept 3.0');
    const capped = await finish({ maxDelayMs: 5000 }, { code: 1 }, { ranMs: 200, inARow: 3 });
    expect(capped.report).toMatchObject({ delayMs: 5000 });
    const afterAGoodRun = await finish({}, { code: 1 }, { ranMs: 60_000, inARow: 5 });
    expect(afterAGoodRun.report).toMatchObject({ inARow: 1, delayMs: 1000 });
  });

  it("never restarts faster than runplan's floor in a crash loop, whatever the plan's delay", async () => {
    const loop = await finish({ initialDelayMs: 0 }, { code: 1 }, { ranMs: 10, inARow: 4 });
    expect(loop.report).toMatchObject({ inARow: 5, delayMs: 800 });
  });

  it("follows never and on-failure: exit 125 tells s6 not to start it again; a signal is told by its number, bwrap's 128 + N as that signal", async () => {
    const never = await finish({ policy: 'never' }, { code: 0 }, { ranMs: 100 });
    expect(never).toMatchObject({ code: 125, report: { willRestart: false, restarts: 0 }, restarts: 0 });
    const clean = await finish({ policy: 'on-failure' }, { code: 0 }, { ranMs: 100 });
    expect(clean).toMatchObject({ code: 125, report: { code: 0, willRestart: false } });
    const failed = await finish({ policy: 'on-failure' }, { code: 2 }, { ranMs: 100 });
    expect(failed).toMatchObject({ code: 0, report: { code: 2, willRestart: true } });
    const killed = await finish({}, { signal: 9 }, { ranMs: 100 });
    expect(killed.report).toMatchObject({ code: null, signal: 9 });
    const viaBwrap = await finish({}, { code: 128 + 15 }, { ranMs: 100 });
    expect(viaBwrap.report).toMatchObject({ code: null, signal: 15 });
  });

  it('starts the process with only its own environment, read from a file, and never names a value on a command line', () => {
    const text = runScript(input());
    expect(text).toContain('exec /usr/bin/env -i /bin/sh -c \'unset PWD OLDPWD; . "$0" && exec "$@"\' /tree/runs/r1/web/data/env node server.js');
    expect(envFileText({ TOKEN: "it's secret", PATH: '/usr/bin', 'BAD NAME': 'x' })).toBe("export TOKEN='it'\\''s secret'\nexport PATH='/usr/bin'\n");
  });
});
