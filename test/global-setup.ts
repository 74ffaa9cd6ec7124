import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { probeContainerExec, startTestEngine } from '../scripts/test-engine.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The content-addressed cache (runtimes, downloads, layers) shared by every test of the run. */
    sharedCacheDir: string;
    /** DOCKER_HOST of the Docker engine the tests started, or '' when this machine has none. */
    dockerHost: string;
    /** '' when the engine runs `docker exec` and HEALTHCHECKs inside containers, else why not. */
    containerExecProblem: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // `vitest` run directly (not through `npm test`) still tests a current dist/.
  // @ts-expect-error: plain ES module without type declarations
  const { ensureBuilt } = await import('../scripts/bootstrap.mjs');
  await ensureBuilt();
  // Kept between runs: it only holds content addressed by version or key, so
  // reusing it is safe, and it spares downloading the same runtimes again.
  const sharedCacheDir = process.env.RUNPLAN_TEST_CACHE_DIR ?? join(tmpdir(), 'runplan-test-cache');
  mkdirSync(sharedCacheDir, { recursive: true });
  project.provide('sharedCacheDir', sharedCacheDir);

  // One engine for the whole run (its data root holds the stack images between runs), stopped at the end.
  const engine = process.env.RUNPLAN_TEST_ENGINE === 'off' ? undefined : await startTestEngine(sharedCacheDir);
  project.provide('dockerHost', engine?.host ?? '');
  const execProblem = engine ? probeContainerExec(engine.host) : '';
  // Swarm gates its updates on HEALTHCHECKs, which only an engine that execs into containers can run.
  if (execProblem) console.warn(`runplan tests: the swarm tests that need health checks are skipped: ${execProblem}`);
  project.provide('containerExecProblem', execProblem);
  if (!process.env.KUBECONFIG) console.warn('runplan tests: the real-cluster Kubernetes test (test/cluster/) is not run: KUBECONFIG names no cluster.');
  return async () => {
    await engine?.stop();
  };
}
