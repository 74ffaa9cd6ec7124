import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
export const CLI = join(ROOT, 'dist', 'cli.js');

export interface CliRun {
  readonly child: ChildProcess;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves when a line containing `text` has been printed; rejects if the CLI exits first. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

/**
 * Shows the CLI's download lines ("downloading … into the shared cache", "cached …
 * (148 MB unpacked) in 5.2 s") in the test run's output as they come: a first run
 * downloads about a gigabyte, and on a slow network that must not look like a hang.
 */
class ProgressEcho {
  private partial = '';
  push(chunk: Buffer): void {
    const lines = (this.partial + chunk.toString()).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) if (/downloading \S+ into the shared cache|cached \S+ \(.* unpacked\) in /.test(line)) console.log(line.trim());
  }
}

/** Starts the real `runplan` CLI as a separate process. */
export function startCli(args: readonly string[], env: Record<string, string> = {}): CliRun {
  // "--" first, as the executable's shebang does: Node must not read an --env-file among the arguments.
  const child = spawn(process.execPath, ['--', CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let all = '';
  let out = '';
  let err = '';
  const progress = new ProgressEcho();
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const l of listeners) l();
  };
  child.stdout.on('data', (c: Buffer) => {
    progress.push(c);
    all += c;
    out += c;
    notify();
  });
  child.stderr.on('data', (c: Buffer) => {
    all += c;
    err += c;
    notify();
  });
  let done = false;
  // Marked done before the waiters look again, so that one waiting for a line the CLI never printed fails at once.
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      done = true;
      notify();
      resolve(code);
    }),
  );
  const matches = (text: string | RegExp) => (typeof text === 'string' ? all.includes(text) : text.test(all));
  return {
    child,
    output: () => all,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(text, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${text}; output:\n${all}`));
        }, timeoutMs);
        const check = () => {
          if (matches(text)) {
            clearTimeout(timer);
            listeners.delete(check);
            resolve();
          } else if (done) {
            clearTimeout(timer);
            listeners.delete(check);
            reject(new Error(`runplan exited before printing ${text}; output:\n${all}`));
          }
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** Runs the CLI to completion. */
export async function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string; output: string }> {
  const run = startCli(args, env);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr(), output: run.output() };
}
