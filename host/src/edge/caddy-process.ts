import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, openSync, closeSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import type { CaddyFiles } from './caddy-config.js';

/** The caddy program: the one given, else the first on PATH, else Debian's. */
export function findCaddy(given?: string): string {
  if (given !== undefined) return given;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir || '.', 'caddy');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this folder of PATH.
    }
  }
  return '/usr/bin/caddy';
}

/** How a Caddy process ended: an exit status, a signal, or a failure to start it at all (ENOENT…). */
export type CaddyEnd = { readonly code: number | null; readonly signal: NodeJS.Signals | null } | { readonly error: Error };

export interface RunningCaddy {
  readonly child: ChildProcess;
  readonly pid: number | undefined;
  /** Settles when the process has ended (or could not start); never rejects. */
  readonly ended: Promise<CaddyEnd>;
  /** Where this run's output begins in the log file (the file keeps the earlier runs'). */
  readonly logOffset: number;
}

/**
 * Runs `caddy run` on the config file, with an environment of its own: HOME and XDG_* under the edge's
 * folder keep its CA, certificates and autosaves there, and nothing of the host's environment (secrets
 * included) reaches it. Its output is appended to the log file, never to the host's stdout.
 */
export function runCaddy(program: string, dir: string, files: CaddyFiles): RunningCaddy {
  let logOffset = 0;
  try {
    logOffset = statSync(files.log).size;
  } catch {
    // No log yet.
  }
  const log = openSync(files.log, 'a', 0o600);
  try {
    const child = spawn(program, ['run', '--config', files.config, '--pidfile', files.pidFile], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: dir, XDG_DATA_HOME: files.dataDir, XDG_CONFIG_HOME: files.configDir },
      stdio: ['ignore', log, log],
    });
    const ended = new Promise<CaddyEnd>((resolve) => {
      child.once('error', (error) => resolve({ error }));
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    return { child, pid: child.pid, ended, logOffset };
  } finally {
    // The child has its own copy of the descriptor.
    closeSync(log);
  }
}

/** The last lines this run of Caddy wrote: the reason it gives when it fails. */
export async function logTail(file: string, offset: number, lines = 8): Promise<string> {
  try {
    const handle = await open(file, 'r');
    try {
      const { size } = await handle.stat();
      const start = Math.max(offset, size - 64 * 1024);
      const buffer = Buffer.alloc(size - start);
      await handle.read(buffer, 0, buffer.length, start);
      return buffer.toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } finally {
      await handle.close();
    }
  } catch {
    return '';
  }
}

/** The port Caddy names in "listening on <address>:<port>: … address already in use", if it does. */
export function portInUse(output: string): number | undefined {
  const match = /listen(?:ing on)? (?:tcp )?\S*?:(\d+)\S*:? .*address already in use/.exec(output);
  return match === null ? undefined : Number(match[1]);
}
