import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { startCli } from '../helpers/cli.js';
import { get } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';
import type { HttpCheck, RealApp } from './corpus.js';

/** How long a cold deployment may take: installing a framework's dependencies and its production build. */
const DEPLOY_TIMEOUT_MS = 15 * 60_000;

/** What deploying a real app gave. */
export interface Deployment {
  /** undefined: deployed, healthy and answering as its check says; else the first thing that went wrong. */
  readonly problem?: string;
  /** Everything runplan printed. */
  readonly output: string;
  /** From the start of `runplan run` to its "build succeeded" line (undefined: the build did not succeed). */
  readonly buildMs?: number;
  /** From the start of `runplan run` to "deployment healthy", or to its exit when it failed. */
  readonly deployMs: number;
}

/**
 * Deploys a copy of the scaffolded app with `runplan run`, exactly as a user
 * would (the app's folder, `--port`, and its variables as `--env`; nothing else),
 * then checks the page over HTTP and stops it with Ctrl-C (SIGINT).
 */
export async function deployRealApp(entry: RealApp, scaffolded: string): Promise<Deployment> {
  // runplan builds in its own copy; this one keeps the cached scaffold out of reach of anything that writes into the folder given.
  const copy = join(await tempDir(`runplan-real-${entry.id}-`), 'app');
  await cp(scaffolded, copy, { recursive: true, verbatimSymlinks: true });
  const dirs = await deploymentDirs();
  const port = await freePort();
  const env = Object.entries(entry.env).flatMap(([name, value]) => ['--env', `${name}=${value}`]);
  const started = Date.now();
  const run = startCli(['run', copy, '--port', String(port), ...env], dirs.env);
  let buildMs: number | undefined;
  run.waitFor('build succeeded', DEPLOY_TIMEOUT_MS).then(
    () => (buildMs = Date.now() - started),
    () => undefined,
  );
  try {
    try {
      await run.waitFor('==> deployment healthy', DEPLOY_TIMEOUT_MS);
    } catch {
      if (run.child.exitCode === null) run.child.kill('SIGINT');
      await run.exited;
      return { problem: `not deployed: ${firstError(run.output())}`, output: run.output(), buildMs, deployMs: Date.now() - started };
    }
    const deployMs = Date.now() - started;
    const problem = await pageProblem(`http://127.0.0.1:${port}`, entry.check);
    run.child.kill('SIGINT');
    const code = await run.exited;
    const stopped = code === 0 ? undefined : `runplan exited ${code} when stopped`;
    return { problem: problem ?? stopped, output: run.output(), buildMs, deployMs };
  } finally {
    if (run.child.exitCode === null) {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  }
}

/** What is wrong with the page, or undefined when it answers 200 with the content expected. */
async function pageProblem(base: string, check: HttpCheck): Promise<string | undefined> {
  const answer = await get(`${base}${check.path}`).catch((error: Error) => error);
  if (answer instanceof Error) return `GET ${check.path} failed: ${answer.message}`;
  const excerpt = answer.body.slice(0, 600);
  if (answer.status !== 200) return `GET ${check.path} answered ${answer.status}: ${excerpt}`;
  for (const text of check.includes) if (!answer.body.includes(text)) return `GET ${check.path} does not contain ${JSON.stringify(text)}: ${excerpt}`;
  for (const text of check.excludes ?? []) if (answer.body.includes(text)) return `GET ${check.path} contains ${JSON.stringify(text)}: ${excerpt}`;
  return undefined;
}

/** The coded error runplan ended with (its line and the fix), else its last line. */
function firstError(output: string): string {
  const lines = output.split('\n');
  const at = lines.findIndex((l) => /^error RUNPLAN_E_/.test(l));
  if (at >= 0) return lines.slice(at, at + 4).join(' | ');
  return lines.filter((l) => l.trim() !== '').at(-1) ?? '(no output)';
}
