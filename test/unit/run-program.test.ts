import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { startProgram } from '../../src/process/run-program.js';

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
});
