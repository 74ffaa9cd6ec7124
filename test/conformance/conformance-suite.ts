import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { checkFixture, type Fixture, type FixtureExpectation, listFixtures } from '../helpers/fixtures.js';
import { dockerEngine, type EngineUnderTest, LOCAL_ENGINE, podmanEngine, swarmEngine } from '../helpers/engines-under-test.js';
import { podmanAvailable } from '../helpers/podman.js';
import { execFileSync } from 'node:child_process';
import { freePort } from '../helpers/ports.js';
import { expectRecorded, type Recorded } from '../helpers/engine-records.js';

/**
 * One conformance suite for every executor (issue 23): the same fixture apps,
 * the same saved plan, the same HTTP answers and the same lines, whether the
 * plan is carried out on this machine, by Docker, or as Swarm services. Each
 * case is a fixture with its expect.json (what it answers over HTTP, what the
 * deployment prints, or the coded error it fails with) plus the lines every
 * engine must print for it. An engine that cannot honour a case declares it
 * below with its reason, and the case then checks that the engine says so
 * (its coded refusal), never that it silently does something else.
 */
interface ConformanceCase {
  /** What the case proves, as the issue names the plan's rules. */
  readonly id: string;
  readonly fixture: readonly [type: string, name: string];
  /** Lines every engine prints for it, beyond the fixture's own. */
  readonly output?: readonly string[];
  /**
   * The lines an engine prints instead of the fixture's own (which tell the
   * local runner's whole story), where the engine tells the same outcome in
   * other words: each with its reason beside it.
   */
  readonly linesOf?: Readonly<Record<string, readonly string[]>>;
  /** The HTTP checks of an engine instead of the fixture's, where its build differs by design: each with its reason beside it. */
  readonly requestsOf?: Readonly<Record<string, FixtureExpectation['requests']>>;
  readonly hostEnv?: Readonly<Record<string, string>>;
  /** `output` may come after the deployment is accepted (what a worker does later): waited for on foreground engines. */
  readonly later?: boolean;
}

export const CASES: readonly ConformanceCase[] = [
  // The specification's health-check lines, then the deployment accepted.
  { id: 'health gate: healthy', fixture: ['node', 'express'], output: ['accepts connections', '==> deployment healthy'] },
  // A web process that exits before it listens: how it ended, not "not listening".
  {
    id: 'health gate: the web process exits before it answers',
    fixture: ['node', 'exits-command-not-found'],
    output: ['Health check failed:'],
    // podman's log of a container restarted at once may join the last run's partial line to the one before:
    // every line but the words of that last line (one line, or two when they were joined).
    linesOf: {
      podman: [
        'RUNPLAN_W_RUN_CRASH_LOOP: web is crash-looping: 3 exits in a row',
        'the web process exited with status 127 before it accepted connections on port {{port}}; it had been restarted 2 times; its last line',
        'fix: A program the command runs was not found (exit status 127',
      ],
    },
  },
  // Healthy, then dead within the stability window: the deployment fails.
  {
    id: 'stability window',
    fixture: ['node', 'exits-after-listen'],
    // On Swarm the task's own health check (the image's) is the first connection: the app exits 200 ms later, and
    // Swarm restarts it. Whether runplan's check reaches a task before its exit or only restarting tasks depends on
    // how fast Swarm tells the task running (25 s on a loaded machine): either way the deployment fails with the
    // process's exit and its last line, never healthy (notInOutput).
    linesOf: { swarm: ['RUNPLAN_E_RUN_PROCESS_EXITED', "Could not find a production build in the '.next' directory"] },
  },
  // nginx starts once Puma answers on its socket (http-unix-socket readiness); both share the run directory.
  { id: 'readiness (unix socket) and a process group', fixture: ['ruby', 'rails-puma-config'], hostEnv: { RUNPLAN_RUBY_GEM_SOURCE: 'local' } },
  // The hook's effect is the HTTP answer; on Swarm its lines are in the task's log (docker service logs), not runplan's output.
  { id: 'pre-run hook', fixture: ['node', 'hook-pre-run'], linesOf: { swarm: [] } },
  // A failing pre-run hook fails the deployment with the hook's coded error (an image's entrypoint refuses the start and the
  // engine reads its refusal back, src/executor/refusal.ts), and the run-failed hook runs.
  { id: 'pre-run hook: fails', fixture: ['node', 'hook-run-failed/pre-run-fails'] },
  // Bounded by the step timeout everywhere: stopped, RUNPLAN_E_BUILD_STEP_TIMEOUT.
  // On Swarm the hook's own line ("preparing") is in the task's log only.
  {
    id: 'pre-run hook: timeout',
    fixture: ['node', 'hook-run-failed/pre-run-timeout'],
    linesOf: { swarm: ['did not finish within 15 s and was stopped', 'run-failed hook ran with hello'] },
  },
  // A build step that hangs: stopped at the host's step timeout in an image's build (GNU timeout in its RUN) as locally.
  { id: 'build step: timeout', fixture: ['node', 'hook-run-failed/build-timeout'] },
  { id: 'workers', fixture: ['node', 'workers'] },
  // CC_WORKER_RESTART=always with a delay: a worker that exits runs again, web serving all along; its exits in a row are a crash loop.
  { id: 'restart policy', fixture: ['node', 'worker-restart'], output: ['RUNPLAN_W_RUN_CRASH_LOOP: worker is crash-looping: 3 exits in a row'], later: true },
  // CC_OVERRIDE_BUILDCACHE: a folder of the last build comes back in the next build (the deploy builds a second time).
  // An image's second build of an unchanged application is BuildKit's cache, every step included: no step runs, so
  // the folder is the first build's (one line); test/engines/docker.test.ts checks the restore when the step runs again.
  {
    id: 'warm-start layer',
    fixture: ['node', 'cache-override/path'],
    requestsOf: Object.fromEntries(['docker', 'swarm', 'podman'].map((engine) => [engine, [{ path: '/', status: 200, json: { builds: 1, msLinkedToCache: false } }]])),
  },
  { id: 'APP_FOLDER', fixture: ['node', 'app-folder-workspace'] },
];

/**
 * A case an engine cannot honour, and how it says so: a coded error that fails
 * the deployment, or coded warnings (Executor.unhonoured) printed before its
 * processes start, the deployment going ahead without the HTTP checks that
 * depend on what it does not honour — and `still`, what the engine does honour
 * of the case, checked as behaviour: lines its processes print, or that the
 * deploy flow prints of them, or, where the processes outlive runplan's own
 * (Swarm's services), what the engine keeps of them.
 */
interface Unsupported {
  readonly reason: string;
  readonly says: `RUNPLAN_E_${string}` | `RUNPLAN_W_${string}`;
  readonly alsoSays?: readonly `RUNPLAN_W_${string}`[];
  readonly still?: {
    readonly output?: readonly string[];
    readonly requests?: FixtureExpectation['requests'];
    readonly later?: boolean;
    /** What the engine keeps of the processes (their lines, a restarted one's runs), read while the deployment runs. */
    readonly recorded?: Recorded;
  };
}

/** Swarm waits for a service to converge before the health gate: a task that exits before it is healthy is restarted until that wait ends. */
const NOT_CONVERGED: Unsupported = {
  reason: 'a task that exits before it is healthy is restarted until the service fails to converge',
  says: 'RUNPLAN_E_SWARM_NOT_CONVERGED',
};

const PROCESSES_APART: Unsupported = {
  reason: "each process runs in a container of its own: the workers' files are not the web process's",
  says: 'RUNPLAN_W_ENGINE_PROCESSES_APART',
};

/** The workers run, each in a container of its own: what each printed (its variables, ms resolved in the application folder). */
const WORKERS_APART: Unsupported = {
  ...PROCESSES_APART,
  still: { output: ['started worker (container', 'started worker-10 (container', 'worker hello as 1000', 'worker-2 hello', 'worker-10 3600000'] },
};

/** The worker is restarted (the engine's events count its exits), with the engine's back-off instead of the plan's delay. */
const RESTARTS_APART = (delay: boolean): Unsupported => ({
  ...PROCESSES_APART,
  ...(delay ? { alsoSays: ['RUNPLAN_W_ENGINE_RESTART_DELAY'] } : {}),
  // The third exit may come after the deployment is accepted: waited for.
  still: { output: ['RUNPLAN_W_RUN_CRASH_LOOP: worker is crash-looping: 3 exits in a row'], later: true },
});

/**
 * Swarm runs the workers, one service each, and `deploy` returns once healthy:
 * each worker's lines are in its service's log (its variables, ms resolved in
 * the application folder), read there.
 */
const WORKERS_IN_SERVICES: Unsupported = {
  ...PROCESSES_APART,
  still: { recorded: { lines: { worker: ['worker hello as 1000'], 'worker-2': ['worker-2 hello'], 'worker-10': ['worker-10 3600000'] } } },
};

/**
 * Swarm restarts the worker itself, after the plan's delay (`--restart-delay`,
 * fixed as the plan's is): its task history shows each exit (status 3) and
 * each next task started no sooner than 1 s after the last ended. Nobody
 * watches the exits once `deploy` returns, so no crash-loop warning is printed.
 */
const RESTARTS_IN_TASKS: Unsupported = {
  ...PROCESSES_APART,
  still: { recorded: { restarts: { process: 'worker', exits: 3, exitCode: 3, delayMs: 1_000 } } },
};

interface EngineEntry {
  readonly engine: () => EngineUnderTest;
  /** Why the engine cannot run here, or undefined when it can. */
  readonly missing: () => string | undefined;
  readonly unsupported: Readonly<Record<string, Unsupported>>;
  readonly setup?: () => Promise<() => Promise<void>>;
}

const dockerHost = inject('dockerHost');
const execProblem = inject('containerExecProblem');

const ENGINES: readonly EngineEntry[] = [
  { engine: () => LOCAL_ENGINE, missing: () => undefined, unsupported: {} },
  {
    engine: () => dockerEngine(dockerHost),
    missing: () => (dockerHost ? undefined : 'no test Docker engine (RUNPLAN_TEST_ENGINE=off)'),
    unsupported: { workers: WORKERS_APART, 'restart policy': RESTARTS_APART(true) },
  },
  {
    engine: () => swarmEngine(dockerHost),
    // Swarm counts a task as running once its HEALTHCHECK passes, which the engine runs with exec.
    missing: () => (!dockerHost ? 'no test Docker engine (RUNPLAN_TEST_ENGINE=off)' : execProblem || undefined),
    unsupported: { workers: WORKERS_IN_SERVICES, 'restart policy': RESTARTS_IN_TASKS, 'health gate: the web process exits before it answers': NOT_CONVERGED },
    setup: swarmOfOneNode,
  },
  {
    engine: () => podmanEngine(dockerHost),
    missing: () => (!dockerHost ? 'no test Docker engine to build the image (RUNPLAN_TEST_ENGINE=off)' : podmanAvailable() ? undefined : 'podman is not installed'),
    unsupported: { workers: WORKERS_APART, 'restart policy': RESTARTS_APART(true) },
  },
];

export const fixture = ([type, name]: readonly [string, string]) => {
  const found = listFixtures(type).find((f) => f.name === name);
  if (found === undefined) throw new Error(`no fixture ${type}/${name}`);
  return found as Fixture;
};

/**
 * The cases on one engine: each engine's cases are a test file of their own
 * (test/conformance/<engine>.test.ts) so the test workers share them; Swarm's
 * run in test/engines/swarm.test.ts with the other suites that use a swarm.
 */
export function conformanceSuite(engineName: string): void {
  const entry = ENGINES.find((e) => e.engine().name === engineName);
  if (entry === undefined) throw new Error(`no conformance engine ${engineName}`);
  const missing = entry.missing();
  describe.skipIf(missing !== undefined)(`conformance: ${engineName}${missing ? ` (skipped: ${missing})` : ''}`, () => {
    let teardown: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      teardown = await entry.setup?.();
    });
    afterAll(async () => teardown?.());

    for (const c of CASES) {
      const unsupported = entry.unsupported[c.id];
      it(unsupported ? `${c.id}: ${unsupported.says.startsWith('RUNPLAN_W_') ? 'unhonoured' : 'refused'} (${unsupported.reason})` : c.id, { timeout: 600_000 }, async () => {
        const given = fixture(c.fixture);
        const expectation = !unsupported
          ? { ...given.expect, output: [...(c.linesOf?.[engineName] ?? given.expect.output ?? []), ...(c.output ?? [])], requests: c.requestsOf?.[engineName] ?? given.expect.requests ?? [] }
          : unsupported.says.startsWith('RUNPLAN_W_')
            ? {
                ...given.expect,
                output: [`warn: ${unsupported.says}: `, ...(unsupported.alsoSays ?? []).map((code) => `warn: ${code}: `), ...(unsupported.still?.output ?? [])],
                requests: unsupported.still?.requests ?? [],
              }
            : { ...given.expect, deploy: 'fails' as const, output: [unsupported.says], requests: [], errorCode: unsupported.says };
        const awaited = [...(c.later && !unsupported ? (c.output ?? []) : []), ...(unsupported?.still?.later ? (unsupported.still.output ?? []) : [])];
        const later = awaited.length > 0 ? { awaitLines: awaited } : {};
        const engine = entry.engine();
        const recorded = unsupported?.still?.recorded;
        const records = engine.records;
        if (recorded && !records) throw new Error(`${engine.name} keeps no records of its processes to read`);
        const read = recorded && records ? { whileDeployed: () => expectRecorded(records, recorded) } : {};
        await checkFixture({ ...given, expect: expectation }, { engine, ...later, ...read, ...(c.hostEnv ? { hostEnv: c.hostEnv } : {}) });
      });
    }
  });
}

/** The test engine made a single-node swarm for these cases (the other Swarm suites of test/engines/swarm.test.ts run before or after them). */
async function swarmOfOneNode(): Promise<() => Promise<void>> {
  const docker = (...args: string[]) => execFileSync('/usr/bin/docker', args, { env: { ...process.env, DOCKER_HOST: dockerHost }, stdio: 'pipe' });
  try {
    docker('swarm', 'leave', '--force');
  } catch {
    // Not in a swarm: as expected.
  }
  docker('swarm', 'init', '--advertise-addr', '127.0.0.1', '--listen-addr', `127.0.0.1:${await freePort()}`);
  return async () => {
    docker('swarm', 'leave', '--force');
  };
}
