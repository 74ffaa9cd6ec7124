// Ruby buildpack: time for a Rails fixture to become healthy through the real
// CLI, and a warm rebuild's bundle step (cached layer) against a raw
// `bundle install` of the same application in the same state.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listFixtures, prepareCopy } from '../scripts/fixture-kit.mjs';
import { cli, median, ms, root, timeCommand, reachableTemp, HEALTHY } from './lib.mjs';

export const title = 'ruby';

const RAILS_FIXTURE = 'rails-puma-config';
// This machine has no gem server: gems come from Debian's packages.
const HOST_ENV = { RUNPLAN_RUBY_GEM_SOURCE: 'local' };

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Wall time from starting `runplan run` to its "deployment healthy" line; then stops it. */
async function timeToHealthy(appDir, cacheDir) {
  const workDir = reachableTemp(join(tmpdir(), 'runplan-bench-work-'));
  const port = await freePort();
  const started = process.hrtime.bigint();
  // The secret from runplan's environment, never its arguments (docs/security.md).
  const child = spawn(process.execPath, [cli, 'run', appDir, '--port', String(port), '--env', 'SECRET_KEY_BASE'], {
    env: { ...process.env, ...HOST_ENV, RUNPLAN_WORK_DIR: workDir, RUNPLAN_CACHE_DIR: cacheDir, SECRET_KEY_BASE: 'bench-secret-key-base-0123456789' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const elapsed = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (HEALTHY.test(output)) resolve(Number(process.hrtime.bigint() - started) / 1e6);
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => reject(new Error(`runplan run exited with ${code}:\n${output}`)));
  });
  child.removeAllListeners('exit');
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGINT');
  await exited;
  rmSync(workDir, { recursive: true, force: true });
  return elapsed;
}

export async function run({ args }) {
  const runs = Number(args['ruby-runs'] ?? 5);
  const cacheDir = reachableTemp(join(tmpdir(), 'runplan-bench-cache-'));
  // The fixture names this machine's Ruby and gets its lock file here, as the tests prepare it.
  const { dir: RAILS, cleanup } = prepareCopy(listFixtures('ruby').find((f) => f.name === RAILS_FIXTURE));
  try {
    const cold = await timeToHealthy(RAILS, cacheDir);
    const warm = [];
    for (let i = 0; i < runs; i++) warm.push(await timeToHealthy(RAILS, cacheDir));
    console.log(`time to healthy, \`runplan run fixtures/ruby/rails-puma-config\` (Rails 6.1, Puma 1 worker behind nginx), ${runs} warm runs`);
    console.log(`  empty cache ${ms(cold)}   warm cache median ${ms(median(warm))}   (min ${ms(Math.min(...warm))}, max ${ms(Math.max(...warm))})`);

    const { buildApp, defaultRegistry } = await import(join(root, 'dist', 'index.js'));
    const { fillPlaceholders } = await import(join(root, 'dist', 'internals.js'));
    const build = async (workDir) =>
      buildApp({
        registry: defaultRegistry({ ruby: { gemSource: 'local' } }),
        appDir: RAILS,
        env: { application: { SECRET_KEY_BASE: 'bench-secret-key-base-0123456789' } },
        host: { workDir, cacheDir },
        sink: () => undefined,
      });
    const cachedSteps = [];
    const rawInstalls = [];
    for (let i = 0; i < runs; i++) {
      const workDir = reachableTemp(join(tmpdir(), 'runplan-bench-work-'));
      const built = await build(workDir);
      const step = built.steps.find((s) => s.name === 'bundle-install');
      if (step.status !== 'cached') throw new Error(`expected a cached bundle layer, got ${step.status}`);
      cachedSteps.push(step.durationMs);
      // The same application, state and environment as the step: what bundler alone costs.
      const planned = built.plan.build.steps.find((s) => s.name === 'bundle-install');
      rawInstalls.push(
        timeCommand('bundle', ['install', '--local'], {
          cwd: built.appDir,
          // The plan is portable: its variables name ${APP_HOME}, which the executor fills in, as here.
          env: {
            ...process.env,
            ...Object.fromEntries(Object.entries({ ...built.environment.toRecord(), ...planned.env }).map(([k, v]) => [k, fillPlaceholders(v, { APP_HOME: built.appDir, RUN_DIR: workDir })])),
          },
        }),
      );
      rmSync(workDir, { recursive: true, force: true });
    }
    console.log(`warm rebuild of the same Rails fixture, bundle step, ${runs} builds`);
    console.log(
      `  runplan (cached layer copied in as the application's user, bundler not run) median ${ms(median(cachedSteps))}   raw \`bundle install --local\` median ${ms(median(rawInstalls))}   saved per build ${ms(median(rawInstalls) - median(cachedSteps))}`,
    );
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
    rmSync(cleanup, { recursive: true, force: true });
  }
}
