import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../test/helpers/cli.js';
import { tempDir } from '../../test/helpers/temp.js';

/**
 * serve's way of waiting for its stop signal, in a program of its own: a child started through execa is running
 * (execa's exit hook, signal-exit, is loaded and signals the process again when only its own listeners are
 * left) when SIGTERM comes. With process.once, serve died of that SIGTERM with everything it started left running.
 */
const PROGRAM = `
const { execa } = require('execa');
const { listenForStopSignals } = require(process.argv[2]);
const stop = listenForStopSignals();
const child = execa('sleep', ['30']);
child.catch(() => undefined);
child.on('spawn', () => console.log('ready'));
stop.received.then(async (signal) => {
  // A second signal while it stops changes nothing.
  process.kill(process.pid, 'SIGINT');
  await new Promise((r) => setTimeout(r, 100));
  console.log('stopping after ' + signal + ', first signal ' + stop.signal);
  child.kill();
});
`;

describe("serve's stop signals", () => {
  it('stop the program cleanly while a child started through execa runs, a second signal ignored', async () => {
    const dir = await tempDir('runplan-host-stop-signals-');
    const bundle = join(dir, 'stop-signals.cjs');
    await build({ entryPoints: [join(ROOT, 'host/src/stop-signals.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: bundle, logLevel: 'error' });
    const script = join(dir, 'program.cjs');
    await writeFile(script, PROGRAM);
    const child = spawn(process.execPath, [script, bundle], { env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('ready')) resolve();
      }),
    );
    child.kill('SIGTERM');
    expect(await exited, out).toEqual({ code: 0, signal: null });
    expect(out).toContain('stopping after SIGTERM, first signal SIGTERM');
  });
});
