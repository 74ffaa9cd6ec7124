import type { PathResult, ProcessExit } from './contract.js';
import { CoreErrors } from '../errors/core-errors.js';
import type { RunplanError } from '../errors/runplan-error.js';
import { formatSeconds } from '../health/probes.js';

/** When the web process exited, as the deployment saw it. */
export type ExitPhase =
  | { readonly kind: 'before-ready'; readonly port: number; readonly paths: readonly string[] }
  | { readonly kind: 'stability-window'; readonly windowMs: number; readonly afterReadyMs: number };

/** The lines of output quoted in the message itself (all of them, up to OutputTail's bound, are in the details). */
const QUOTED_LINES = 3;

/**
 * RUNPLAN_E_RUN_PROCESS_EXITED for a web process that exited before its
 * deployment was accepted: how it ended (status or signal), how many times it
 * had been restarted, its last lines, and a fix that follows from them.
 */
export function processExitError(exit: ProcessExit, phase: ExitPhase, results: readonly PathResult[] = []): RunplanError {
  const how =
    exit.error !== undefined
      ? `could not be started (${exit.error})`
      : exit.limit?.resource === 'memory'
        ? `was killed: the application used more than its ${exit.limit.limit}`
        : exit.signal !== null
          ? `was killed by ${exit.signal}`
          : exit.code === null
            ? 'stopped running (its runner does not tell how)'
            : `exited with status ${exit.code}`;
  const when =
    phase.kind === 'before-ready'
      ? phase.paths.length > 0
        ? `before its health check passed (${phase.paths.map((p) => `GET ${p}`).join(', ')})`
        : `before it accepted connections on port ${phase.port}`
      : `${formatSeconds(phase.afterReadyMs)} after its health check passed, within the stability window of ${formatSeconds(phase.windowMs)}`;
  const restarted = exit.restarts === 0 ? 'it was not restarted' : `it had been restarted ${exit.restarts} time${exit.restarts === 1 ? '' : 's'}`;
  const meaningful = saidByTheApplication(exit.output);
  // A process restarted says the same again: each line is quoted once.
  const last = meaningful.filter((line, i) => line !== meaningful[i - 1]).slice(-QUOTED_LINES);
  const said = last.length === 0 ? 'it printed nothing' : `its last line${last.length === 1 ? '' : 's'}: ${last.map((l) => JSON.stringify(l)).join(' ')}`;
  const limited =
    exit.limit?.resource === 'processes'
      ? ` after the application reached its limit of ${exit.limit.limit}`
      : exit.limit?.resource === 'disk'
        ? ` while the application's disk was full (its ${exit.limit.limit})`
        : '';
  // Killed for its memory: the limit is the cause, whatever it printed.
  const error = exit.limit?.resource === 'memory' ? CoreErrors.RUN_MEMORY_LIMIT : CoreErrors.RUN_PROCESS_EXITED;
  return error.create({
    message: `the deployment failed: the ${exit.process} process ${how}${limited} ${when}; ${restarted}; ${said}.`,
    ...(exit.limit?.resource === 'memory' ? {} : { fix: exitFix(exit, meaningful) }),
    details: {
      process: exit.process,
      exitCode: exit.code,
      signal: exit.signal,
      ...(exit.limit ? { limit: exit.limit } : {}),
      restarts: exit.restarts,
      phase: phase.kind,
      output: exit.output,
      ...(results.length > 0 ? { results } : {}),
    },
  });
}

/** What to do, from how the process ended and what it said last (the first cause that matches). */
export function exitFix(exit: Pick<ProcessExit, 'code' | 'signal'>, output: readonly string[]): string {
  const text = output.join('\n');
  const missingFile = missingBuildOutput(text);
  // dash: "sh: 1: next: not found"; bash: "bash: line 1: next: command not found".
  if (exit.code === 127 || /^\S*sh: (?:line )?\d+: .*not found$/.test(lastOf(output))) {
    return 'A program the command runs was not found (exit status 127 is the shell\'s "not found"): install it in the build — a dependency in package.json\'s "dependencies" ("devDependencies" are not installed for production), a gem of the Gemfile — or correct the command (CC_RUN_COMMAND, scripts.start).';
  }
  if (exit.code === 126) {
    return 'The command names a file that cannot be executed (exit status 126: permission denied or not a program): commit it executable (git update-index --chmod=+x FILE) or run it through its interpreter (node FILE, sh FILE).';
  }
  if (missingFile !== undefined) {
    return `A file the process needs is not in the build (${missingFile}): when the application makes it with a build script (dist/, build/, .next/…), have the service run that script with CC_POST_BUILD_HOOK (e.g. CC_POST_BUILD_HOOK="npm run build"); otherwise commit the file.`;
  }
  const module = /Cannot find (?:module|package) '([^'./][^']*)'/.exec(text)?.[1];
  if (module !== undefined) {
    return `The module "${module}" is not installed: add it to package.json's "dependencies" ("devDependencies" are not installed for production unless CC_NODE_DEV_DEPENDENCIES=install).`;
  }
  if (/EADDRINUSE/.test(text)) {
    return 'Another program already listens on the port the process tried to open (EADDRINUSE): stop it, or make the application listen once, on PORT only.';
  }
  if (exit.signal === 'SIGKILL') {
    return "It was killed with SIGKILL, which the kernel's out-of-memory killer sends: give the instance more memory (--memory) or make the application use less.";
  }
  if (exit.signal !== null) return `It was killed by ${exit.signal}: find what sent the signal (the application itself, or another program of the host).`;
  if (exit.code === 0) {
    return 'It exited with status 0, as a finished command does: the web command must run the server in the foreground and keep running (not start it in the background and return, not run a one-off build or script).';
  }
  return "Read the process's last lines of output (in the error's details and in the log above) and fix what made it exit, then deploy again.";
}

/**
 * The lines worth quoting: without blank ones, and without the package
 * manager's own words around a script — the banner npm and pnpm print before
 * it (`> app@1.0.0 start`, `> next start`) and the epilogue after a failed one
 * (`npm error code 127`, `npm error command failed`…) — which would hide what
 * the application said.
 * All of them, when nothing else is left.
 */
function saidByTheApplication(output: readonly string[]): string[] {
  const lines = output.filter((line) => line.trim() !== '');
  const own = lines.filter((line) => !PACKAGE_MANAGER_EPILOGUE.test(line));
  return own.length > 0 ? own : lines;
}

const PACKAGE_MANAGER_EPILOGUE = /^(?:> |npm (?:error|ERR!|warn|notice)\b|error Command failed with exit code|info Visit https:\/\/yarnpkg\.com|\s*ELIFECYCLE|\[ELIFECYCLE\]|.*ERR_PNPM_\w+)/;

/** The file a "no such file" or "cannot find module <path>" complaint names: what a build step should have made. */
function missingBuildOutput(text: string): string | undefined {
  const patterns = [
    /Cannot find module '([./][^']*)'/,
    /ENOENT: no such file or directory, \w+ '([^']+)'/,
    /Could not find a production build in the '([^']+)' directory/,
    /no such file to load -- (\S+)/,
  ];
  for (const pattern of patterns) {
    const found = pattern.exec(text)?.[1];
    if (found !== undefined) return found;
  }
  return undefined;
}

function lastOf(lines: readonly string[]): string {
  return lines[lines.length - 1] ?? '';
}
