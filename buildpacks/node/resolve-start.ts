import { type Command, CoreErrors, decide, type Decision, type OverriddenSource, quoteExcerpt } from '../../src/kit/index.js';
import { NodeErrors } from './errors.js';
import type { PackageJson } from './package-json.js';

export interface StartResolution {
  readonly command: Command;
  /** The file `node` runs when started from main (checked after the build). */
  readonly mainFile: string | undefined;
  readonly decision: Decision;
}

/**
 * How the web process starts (specification, package.json table, Node rules 1 and 5,
 * CC_RUN_COMMAND): the user's CC_RUN_COMMAND when set; else `npm start` when
 * scripts.start is defined; else `node <main>`; neither is an error.
 */
export function resolveStart(pkg: PackageJson, runCommand?: string): StartResolution {
  const start = pkg.scripts?.start;
  const main = pkg.main;
  const overridden: OverriddenSource[] = [];
  const hasStart = start !== undefined && start.trim() !== '';
  const hasMain = main !== undefined && main.trim() !== '';
  if (runCommand !== undefined && runCommand.trim() !== '') {
    if (hasStart) overridden.push({ source: 'package.json scripts.start', value: start, reason: 'CC_RUN_COMMAND overrides it' });
    if (hasMain) overridden.push({ source: 'package.json main', value: main, reason: 'CC_RUN_COMMAND overrides it' });
    return {
      command: { kind: 'shell', script: runCommand.trim() },
      mainFile: undefined,
      decision: decide({
        id: 'node.start',
        subject: 'Start command',
        requests: [{ source: 'env CC_RUN_COMMAND', value: runCommand }],
        resolved: runCommand.trim(),
        reason: 'CC_RUN_COMMAND is set: it is the custom run command',
        lost: overridden,
      }),
    };
  }
  if (hasStart) {
    if (main !== undefined) overridden.push({ source: 'package.json main', value: main, reason: 'main is used only when scripts.start is undefined' });
    return {
      command: { kind: 'exec', argv: ['npm', 'start'] },
      mainFile: undefined,
      decision: decide({
        id: 'node.start',
        subject: 'Start command',
        requests: [{ source: 'package.json scripts.start', value: start }],
        resolved: 'npm start',
        reason: 'scripts.start is defined, so `npm start` is launched',
        lost: overridden,
      }),
    };
  }
  if (hasMain) {
    refuseOutside(main);
    return {
      command: { kind: 'exec', argv: ['node', main] },
      mainFile: main,
      decision: decide({
        id: 'node.start',
        subject: 'Start command',
        requests: [{ source: 'package.json main', value: main }],
        resolved: `node ${main}`,
        reason: 'scripts.start is undefined, so the file named by main is run',
        lost: overridden,
      }),
    };
  }
  throw NodeErrors.NODE_NO_START_COMMAND.create({
    message: 'package.json defines neither scripts.start nor main, so there is no way to start the application.',
    file: 'package.json',
  });
}

/**
 * `node <main>` runs the file relative to the application: an absolute path or
 * one climbing out with ".." would run (and, on a syntax error, print) a file of
 * the host. Links are checked after the build, in the build directory (verify-main).
 */
function refuseOutside(main: string): void {
  let depth = 0;
  const absolute = /^([\\/]|[A-Za-z]:)/.test(main.trim());
  for (const part of main.trim().split(/[\\/]+/)) {
    if (part === '..') depth--;
    else if (part !== '' && part !== '.') depth++;
    if (depth < 0) break;
  }
  if (absolute || depth < 0) {
    throw CoreErrors.APP_PATH_OUTSIDE.create({
      message: `package.json main is ${quoteExcerpt(main)}, which ${absolute ? 'is an absolute path' : 'climbs out of the application with ".."'}; node runs main relative to the application.`,
      file: 'package.json',
      fix: 'Set "main" to the path of the entry file relative to the application root, e.g. "server.js" or "dist/index.js".',
    });
  }
}
