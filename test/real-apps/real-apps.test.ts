import { appendFile } from 'node:fs/promises';
import { describe, expect, inject, it } from 'vitest';
import { REAL_APPS, type RealApp, SERVICE_VARIABLES } from './corpus.js';
import { type Deployment, deployRealApp } from './deploy.js';
import { scaffoldedApp } from './scaffold.js';

/** Scaffolding (cold) and a cold deployment (dependencies, framework build) of one app, with room to spare on two shared cores. */
const APP_TIMEOUT_MS = 25 * 60_000;

/**
 * The real-apps corpus (test/real-apps/corpus.ts, docs/real-apps.md): each app
 * is scaffolded at run time from pinned packages (once; the test cache keeps
 * it), deployed by `runplan run` with only the service's documented variables,
 * and its page checked over HTTP. An app with `pending` fails today for the
 * reason it gives: its test passes while the deployment still fails with that
 * evidence, and fails once the app deploys (remove `pending` then) or fails
 * for another reason (say which in `pending`).
 */
describe('real apps', () => {
  it('holds the frameworks of issue 22, each with only documented variables', () => {
    const ids = REAL_APPS.map((a) => a.id);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    for (const id of ['express-generator', 'nestjs', 'fastify-cli', 'nextjs', 'react-router', 'astro-node', 'nuxt', 'vite-ssr-react', 'rails']) expect(ids).toContain(id);
    const undocumented = REAL_APPS.flatMap((app) =>
      Object.keys(app.env)
        .filter((name) => !SERVICE_VARIABLES.has(name))
        .map((name) => `${app.id}: ${name}`),
    );
    expect(undocumented).toEqual([]);
  });

  // One app at a time: each scaffold and build uses both cores.
  for (const app of REAL_APPS) {
    const name = app.pending ? `${app.id} [pending: ${app.pending.reason}]` : app.id;
    it(
      name,
      async () => {
        const scaffolded = await scaffoldedApp(app, inject('sharedCacheDir'));
        const deployment = await deployRealApp(app, scaffolded.dir);
        await report(app, scaffolded.scaffoldMs, scaffolded.made, deployment);
        expectOutcome(app, deployment);
      },
      APP_TIMEOUT_MS,
    );
  }
});

/**
 * A pending app fails with the evidence of today's reason; a mistake fails and
 * says the fix; every other app is served.
 */
function expectOutcome(app: RealApp, deployment: Deployment): void {
  const shown = `${app.id}: ${deployment.problem ?? 'served'}\n${tail(deployment.output, 60)}`;
  if (app.pending) {
    const changed = app.mistake ? 'runplan now handles this mistake differently' : 'it now deploys and serves';
    expect(deployment.problem, `${app.id}: ${changed}: remove its pending field\n${shown}`).toBeDefined();
    for (const line of app.pending.evidence) expect(deployment.output, `${app.id}: the evidence of its pending field is gone (${changed}?)\n${shown}`).toContain(line);
  } else if (app.mistake) {
    expect(deployment.problem, `${app.id} is a mistake that must not deploy\n${shown}`).toMatch(/^not deployed: /);
    for (const text of app.mistake.says) expect(deployment.output, `${app.id}: runplan does not say ${text}\n${shown}`).toContain(text);
  } else {
    expect(deployment.problem, shown).toBeUndefined();
  }
}

/**
 * One line per app in the test's output (the times the issue asks for), and,
 * with RUNPLAN_REAL_APPS_REPORT=FILE, one JSON line per app with runplan's
 * whole output when it was not served.
 */
async function report(app: RealApp, scaffoldMs: number, made: boolean, deployment: Deployment): Promise<void> {
  const seconds = (ms: number | undefined) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);
  const outcome = deployment.problem === undefined ? 'served' : `FAILED: ${deployment.problem.split('\n')[0]}`;
  console.log(
    `real app ${app.id}: scaffold ${seconds(scaffoldMs)}${made ? '' : ' (earlier run, cached)'}, build ${seconds(deployment.buildMs)}, healthy after ${seconds(deployment.deployMs)}: ${outcome}`,
  );
  const file = process.env.RUNPLAN_REAL_APPS_REPORT;
  if (file === undefined) return;
  const line = {
    id: app.id,
    framework: app.framework,
    origin: app.origin,
    scaffoldMs,
    scaffoldCached: !made,
    buildMs: deployment.buildMs ?? null,
    deployMs: deployment.deployMs,
    problem: deployment.problem ?? null,
    pending: app.pending?.reason ?? null,
    output: deployment.problem === undefined ? null : deployment.output,
  };
  await appendFile(file, `${JSON.stringify(line)}\n`);
}

function tail(output: string, lines: number): string {
  return output.split('\n').slice(-lines).join('\n');
}
