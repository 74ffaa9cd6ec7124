import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { type ProcessIdentity, startProgram } from 'runplan/process';
import { signalByIdentity, watchAdopted } from '../supervision/adopted-process.js';
import { logEnd } from '../supervision/log-tail.js';
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

/** How a Caddy process ended: an exit status, a signal, a failure to start it at all (ENOENT…), or, adopted, only that it is gone. */
export type CaddyEnd = { readonly code: number | null; readonly signal: NodeJS.Signals | null } | { readonly error: Error } | { readonly adopted: string };

export interface RunningCaddy {
  /** Its PID once it started; undefined before, or when it could not start. */
  readonly pid: number | undefined;
  /** Settles when the process has ended (or could not start); never rejects. */
  readonly ended: Promise<CaddyEnd>;
  /** Where this run's output begins in the log file (the file keeps the earlier runs'). */
  readonly logOffset: number;
  /** Sends it a signal while it runs (none once it has ended): by its PID while it is serve's child, by its identity once adopted. */
  kill(signal: NodeJS.Signals): void;
  /** Stops watching it and lets serve's process exit while it runs: the next serve adopts it. */
  letGo(): void;
}

/**
 * Runs `caddy run` on the config file through runplan's one runner, with an environment of its own: HOME and
 * XDG_* under the edge's folder keep its CA, certificates and autosaves there, and nothing of the host's
 * environment (secrets included) reaches it. Its output is appended to the log file by Caddy itself, never to
 * the host's stdout (it outlives serve, and the next serve adopts it); the edge stops it by its PID.
 */
export function runCaddy(program: string, dir: string, files: CaddyFiles): RunningCaddy {
  const logOffset = logEnd(files.log);
  let pid: number | undefined;
  const running = startProgram(program, caddyArguments(files), {
    cwd: dir,
    // Its own session: a Ctrl-C at serve's terminal reaches serve, which decides what stops.
    detached: true,
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
    letGo: () => running.unref(),
  };
}

/** What the edge starts Caddy with: the adoption of a Caddy left running checks these. */
function caddyArguments(files: CaddyFiles): string[] {
  return ['run', '--config', files.config, '--pidfile', files.pidFile];
}

/** Whether a process's arguments are those of a Caddy this edge started: `caddy run --config <its caddy.json> …`. */
export function isThisEdgesCaddy(args: readonly string[], files: CaddyFiles): boolean {
  const expected = caddyArguments(files).slice(0, 3);
  return expected.every((arg, i) => args[i + 1] === arg);
}

/** A Caddy a previous serve started, found by its identity: watched by polling, stopped by its identity. */
export function adoptedCaddy(identity: ProcessIdentity, files: CaddyFiles): RunningCaddy {
  const watch = watchAdopted(identity);
  const logOffset = logEnd(files.log);
  return {
    pid: identity.pid,
    ended: watch.ended.then((words) => ({ adopted: words })),
    logOffset,
    kill: (signal) => signalByIdentity(identity, signal),
    letGo: watch.letGo,
  };
}

/** The port Caddy names in "listening on <address>:<port>: … address already in use", if it does. */
export function portInUse(output: string): number | undefined {
  const match = /listen(?:ing on)? (?:tcp )?\S*?:(\d+)\S*:? .*address already in use/.exec(output);
  return match === null ? undefined : Number(match[1]);
}
