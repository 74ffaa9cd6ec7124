import { accessSync, constants, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { startProgram } from 'runplan/process';
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
  /** Its PID once it started; undefined before, or when it could not start. */
  readonly pid: number | undefined;
  /** Settles when the process has ended (or could not start); never rejects. */
  readonly ended: Promise<CaddyEnd>;
  /** Where this run's output begins in the log file (the file keeps the earlier runs'). */
  readonly logOffset: number;
  /** Sends it a signal by its PID while it runs (none once it has ended). */
  kill(signal: NodeJS.Signals): void;
}

/**
 * Runs `caddy run` on the config file through runplan's one runner, with an environment of its own: HOME and
 * XDG_* under the edge's folder keep its CA, certificates and autosaves there, and nothing of the host's
 * environment (secrets included) reaches it. Its output is appended to the log file by Caddy itself, never to
 * the host's stdout; the edge stops it by its PID.
 */
export function runCaddy(program: string, dir: string, files: CaddyFiles): RunningCaddy {
  let logOffset = 0;
  try {
    logOffset = statSync(files.log).size;
  } catch {
    // No log yet.
  }
  let pid: number | undefined;
  const running = startProgram(program, ['run', '--config', files.config, '--pidfile', files.pidFile], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: dir, XDG_DATA_HOME: files.dataDir, XDG_CONFIG_HOME: files.configDir },
    outputFile: files.log,
    timeoutMs: 0,
    keepRunningOnExit: true,
    onStart: (started) => {
      pid = started;
    },
  });
  const ended = running.done.then((outcome): CaddyEnd => {
    if (outcome.startError !== undefined) return { error: Object.assign(new Error(`spawn ${program} ${outcome.startError}`), { code: outcome.startError }) };
    return { code: outcome.exitCode, signal: outcome.signal };
  });
  return {
    get pid() {
      return pid;
    },
    ended,
    logOffset,
    kill: running.kill,
  };
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
