import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startProgram } from '../../src/process/run-program.js';
import { ROOT } from '../helpers/cli.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const node = (script: string, options: Parameters<typeof startProgram>[2] = {}) => startProgram(process.execPath, ['-e', script], { env, ...options }).done;

/** The one runner of short-lived programs (src/process/run-program.ts): what its callers rely on. */
describe('startProgram()', () => {
  it('gives a program its input as text or as a stream', async () => {
    const echo = 'process.stdin.pipe(process.stdout)';
    expect(await node(echo, { input: 'text in' })).toMatchObject({ stdout: 'text in', ok: true });
    expect(await node(echo, { input: Readable.from(['a', 'b', 'c']) })).toMatchObject({ stdout: 'abc', ok: true });
  });

  it('runs with exactly the environment given, in the folder given', async () => {
    const ran = await node('console.log(process.cwd(), Object.keys(process.env).sort().join(","))', { cwd: '/', env: { ...env, ONLY_THIS: '1' } });
    expect(ran.stdout.trim()).toBe('/ ONLY_THIS,PATH');
  });

  it('caps the output it keeps, first or last bytes, and counts the rest while the program goes on', async () => {
    const print = 'process.stdout.write("a".repeat(1000) + "z".repeat(1000)); process.exitCode = 0';
    expect(await node(print, { maxBufferBytes: 10 })).toMatchObject({ stdout: 'aaaaaaaaaa', droppedBytes: 1990, ok: true });
    expect(await node(print, { maxBufferBytes: 10, keepLast: true })).toMatchObject({ stdout: 'zzzzzzzzzz', ok: true });
  });

  it('tells each line as it comes, a last line without a newline included', async () => {
    const lines: string[] = [];
    const ran = await node('process.stdout.write("one\\ntwo"); process.stderr.write("err\\n")', { onLine: (line, stream) => lines.push(`${stream}:${line}`) });
    expect(lines.sort()).toEqual(['stderr:err', 'stdout:one', 'stdout:two']);
    expect(ran).toMatchObject({ stdout: '', stderr: '', ok: true });
  });

  it('gives standard output as a stream when asked', async () => {
    const running = startProgram(process.execPath, ['-e', 'process.stdout.write("streamed")'], { env, stdoutStream: true });
    const chunks: Buffer[] = [];
    for await (const chunk of running.stdout) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('streamed');
    expect((await running.done).ok).toBe(true);
  });

  it('stops a program when its signal is aborted, with the signal asked for', async () => {
    const controller = new AbortController();
    const ran = node('setTimeout(() => {}, 60_000)', { signal: controller.signal, killSignal: 'SIGKILL', timeoutMs: 0, onStart: () => controller.abort() });
    expect(await ran).toMatchObject({ interrupted: true, signal: 'SIGKILL', ok: false });
  });

  it('tells a program that cannot start by its error, and drains the input it was given', async () => {
    const input = Readable.from(['never read']);
    const ran = await startProgram('runplan-no-such-program', [], { env, input }).done;
    expect(ran).toMatchObject({ startError: 'ENOENT', exitCode: null, ok: false });
    expect(input.readableFlowing).toBe(true);
  });

  it('fails a program whose input stream fails, and says so', async () => {
    const input = new Readable({ read() {} });
    const ran = node('process.stdin.resume()', { input, onStart: () => input.destroy(new Error('source gone')) });
    expect(await ran).toMatchObject({ ok: false, inputError: { message: 'source gone' } });
  });

  it('sends kill() to its pid: one asked for before it started once it has, none once it exited; onExit is told how it ended', async () => {
    const exits: unknown[] = [];
    const running = startProgram(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { env, timeoutMs: 0, onExit: (code, signal) => exits.push([code, signal]) });
    running.kill('SIGTERM');
    expect(await running.done).toMatchObject({ signal: 'SIGTERM', exitCode: null, ok: false, interrupted: false });
    expect(exits).toEqual([[null, 'SIGTERM']]);
    running.kill('SIGKILL');
    const quick = startProgram(process.execPath, ['-e', 'process.exitCode = 3'], { env, onExit: (code, signal) => exits.push([code, signal]) });
    expect(await quick.done).toMatchObject({ exitCode: 3 });
    quick.kill('SIGTERM');
    expect(exits).toEqual([
      [null, 'SIGTERM'],
      [3, null],
    ]);
  });

  it('appends its standard output and error to outputFile (made 0600), written by the program itself, and keeps none of it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runplan-output-file-'));
    try {
      const log = join(dir, 'server.log');
      const ran = await node('process.stdout.write("out\\n"); process.stderr.write("err\\n")', { outputFile: log });
      expect(ran).toMatchObject({ stdout: '', stderr: '', ok: true });
      expect(readFileSync(log, 'utf8')).toBe('out\nerr\n');
      expect(statSync(log).mode & 0o777).toBe(0o600);
      await node('console.log("again")', { outputFile: log });
      expect(readFileSync(log, 'utf8')).toBe('out\nerr\nagain\n');
      // A file that cannot be opened is the caller's error, at once.
      expect(() => startProgram(process.execPath, ['-e', ''], { env, outputFile: join(dir, 'missing', 'x.log') })).toThrow(/ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("with stdio 'inherit', gives it runplan's own streams: what it reads and writes passes byte for byte, and its exit status is told", async () => {
    // runplan (built: dist/process.js) in a Node.js process of its own, whose streams are this test's pipes.
    const wrapper = `const { startProgram } = await import(process.argv[1]);
      const ran = await startProgram(process.execPath, ['-e', 'process.stdin.pipe(process.stdout); process.stdin.on("end", () => { process.stderr.write("done"); process.exitCode = 7; })'], { env: process.env, stdio: 'inherit', timeoutMs: 0 }).done;
      process.exitCode = ran.exitCode === 7 && ran.stdout === '' && ran.stderr === '' ? 0 : 1;`;
    const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(200_000)]);
    const chunks: Buffer[] = [];
    const running = startProgram(process.execPath, ['--input-type=module', '-e', wrapper, pathToFileURL(join(ROOT, 'dist', 'process.js')).href], {
      env,
      input: bytes,
      stdoutStream: true,
    });
    running.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ran = await running.done;
    expect(ran).toMatchObject({ exitCode: 0, stderr: 'done' });
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  });

  it('kills what it started when runplan exits, unless keepRunningOnExit: a server the host stops by its pid stays up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runplan-keep-running-'));
    const pids: number[] = [];
    try {
      for (const keep of [false, true]) {
        const pidFile = join(dir, `${keep}.pid`);
        const wrapper = `const { startProgram } = await import(process.argv[1]);
          const { writeFileSync } = await import('node:fs');
          startProgram(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { timeoutMs: 0, keepRunningOnExit: ${keep}, onStart: (pid) => { writeFileSync(process.argv[2], String(pid)); process.exit(0); } });`;
        writeFileSync(pidFile, '');
        expect(await startProgram(process.execPath, ['--input-type=module', '-e', wrapper, pathToFileURL(join(ROOT, 'dist', 'process.js')).href, pidFile], { env }).done).toMatchObject({
          exitCode: 0,
        });
        const pid = Number(readFileSync(pidFile, 'utf8'));
        pids.push(pid);
        expect(pid).toBeGreaterThan(1);
        // A program killed as runplan exits may stay a zombie for a moment; it runs nothing.
        for (let i = 0; i < 40 && running(pid) !== keep; i++) await new Promise((r) => setTimeout(r, 50));
        expect(running(pid), `keepRunningOnExit: ${keep}`).toBe(keep);
      }
    } finally {
      for (const pid of pids) if (running(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lets runplan exit by itself while a program it unref()ed runs on: the server another run of the host adopts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runplan-unref-'));
    const pidFile = join(dir, 'pid');
    let pid = 0;
    try {
      // No process.exit: the wrapper ends only once nothing of the program holds its event loop.
      const wrapper = `const { startProgram } = await import(process.argv[1]);
        const { writeFileSync } = await import('node:fs');
        const server = startProgram(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { timeoutMs: 0, keepRunningOnExit: true, detached: true, outputFile: process.argv[2] + '.log', onStart: (pid) => writeFileSync(process.argv[2], String(pid)) });
        server.unref();`;
      const wrapped = await startProgram(process.execPath, ['--input-type=module', '-e', wrapper, pathToFileURL(join(ROOT, 'dist', 'process.js')).href, pidFile], { env, timeoutMs: 20_000 }).done;
      expect(wrapped).toMatchObject({ exitCode: 0, ok: true });
      pid = Number(readFileSync(pidFile, 'utf8'));
      expect(running(pid)).toBe(true);
    } finally {
      if (pid > 1 && running(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Whether the process runs (a zombie does not). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}
