import { join } from 'node:path';
import { mkdir, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli, startCli } from '../helpers/cli.js';
import { get } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { processesUnder } from '../helpers/processes.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';

const EXPRESS = join(ROOT, 'fixtures', 'node', 'express');
type Event = Record<string, unknown> & { type: string };
const events = (stdout: string): Event[] =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);

/** A host's buildpack whose detect() says it started, then never settles. */
const HANGING_BUILDPACK = `export default {
  id: 'hang', name: 'Hang', priority: 100, defaultHealthCheck: { kind: 'port', reason: 'test' },
  detector: { detect: () => { process.stderr.write('hang: detecting\\n'); return new Promise(() => {}); } },
  planner: { plan: async () => { throw new Error('not reached'); } },
};
`;

async function app(files: Record<string, string>): Promise<string> {
  const dir = await tempDir('runplan-app-');
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

/**
 * --json and --events (issue 13, item 4): every command answers hosts in JSON,
 * errors included, and build and run stream what happens as NDJSON events.
 */
describe('machine-readable output', () => {
  it('build --json: one JSON result on stdout, the lines for people on stderr', async () => {
    const dirs = await deploymentDirs();
    const result = await runCli(['build', EXPRESS, '--json'], dirs.env);
    expect(result.code, result.output).toBe(0);
    const doc = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({ ok: true, command: 'build', appType: 'node', digest: expect.stringMatching(/^sha256:/) });
    expect((doc.steps as Array<{ name: string; status: string; durationMs: number }>).map((s) => s.name)).toEqual(['runtime', 'npm', 'install', 'native-modules']);
    expect(result.stderr).toContain('==> carrying out the plan above');
    expect(result.stderr).toContain('==> step runtime:');
  });

  it('build --events: NDJSON with the plan, each step started and finished with its duration, then the result', async () => {
    const dirs = await deploymentDirs();
    const secret = 'evt_secret_4b1d9a77c2';
    // A new application: nothing of it in the layer cache, so that every step runs.
    const dir = await app({ 'package.json': JSON.stringify({ name: 'events', version: '1.0.0', main: 'a.js' }), 'a.js': '', '.gitignore': 'node_modules\n' });
    // The secret from runplan's environment, as a host gives one (in the arguments it would be warned of first).
    const result = await runCli(['build', dir, '--events', '--env', 'API_TOKEN', '--env', 'CC_PRE_BUILD_HOOK=echo "token $API_TOKEN"'], { ...dirs.env, API_TOKEN: secret });
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toContain(secret);
    const list = events(result.stdout);
    expect(list[0]).toMatchObject({ type: 'plan', digest: expect.stringMatching(/^sha256:/) });
    const steps = list.filter((e) => e.type === 'step-started' || e.type === 'step-finished').map((e) => `${e.type} ${e.step}`);
    expect(steps).toEqual([
      'step-started runtime',
      'step-finished runtime',
      'step-started npm',
      'step-finished npm',
      'step-started pre-build-hook',
      'step-finished pre-build-hook',
      'step-started install',
      'step-finished install',
      'step-started native-modules',
      'step-finished native-modules',
      'step-started verify-main',
      'step-finished verify-main',
    ]);
    expect(list.find((e) => e.type === 'step-finished' && e.step === 'install')).toMatchObject({ status: 'succeeded', durationMs: expect.any(Number) });
    expect(list).toContainEqual({ type: 'log', origin: { kind: 'step', name: 'pre-build-hook', stream: 'stdout' }, level: 'info', text: 'token ***' });
    expect(list.at(-1)).toMatchObject({ type: 'result', ok: true, command: 'build', appType: 'node' });
  });

  it('run --events: processes and health-check results as events, a result once healthy, stopped on SIGTERM', async () => {
    const dirs = await deploymentDirs();
    const port = await freePort();
    const run = startCli(['run', EXPRESS, '--events', '--port', String(port), '--env', 'CC_HEALTH_CHECK_PATH=/'], dirs.env);
    await run.waitFor('"type":"result"');
    expect((await get(`http://127.0.0.1:${port}/`)).status).toBe(200);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const list = events(run.stdout());
    expect(list.find((e) => e.type === 'process-started')).toMatchObject({ process: 'web', pid: expect.any(Number) });
    expect(list.find((e) => e.type === 'health-check')).toMatchObject({ path: '/', status: 200, ok: true, text: 'Response from GET / is 200' });
    expect(list.find((e) => e.type === 'result')).toMatchObject({
      command: 'run',
      status: 'healthy',
      url: `http://127.0.0.1:${port}/`,
      processes: [{ name: 'web' }],
      health: [{ path: '/', status: 200, ok: true }],
    });
    expect(list.some((e) => e.type === 'process-exited' && e.process === 'web')).toBe(true);
    expect(list.at(-1)).toEqual({ type: 'stopped' });
    expect(processesUnder(dirs.workDir)).toEqual([]);
  });

  it('errors are JSON too: input (exit 2), a failed build (exit 1), a usage error', async () => {
    const missing = await runCli(['build', '/nonexistent-app', '--json']);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout)).toEqual({
      ok: false,
      error: expect.objectContaining({ code: 'RUNPLAN_E_APP_DIR_NOT_FOUND', kind: 'input', subject: '/nonexistent-app', fix: expect.any(String), message: '/nonexistent-app is not a directory.' }),
    });

    const failing = await app({ 'package.json': JSON.stringify({ name: 'fails', version: '1.0.0', main: 'a.js', scripts: { install: 'exit 7' } }), 'a.js': '' });
    const dirs = await deploymentDirs();
    const failed = await runCli(['build', failing, '--events'], dirs.env);
    expect(failed.code).toBe(1);
    const list = events(failed.stdout);
    expect(list).toContainEqual(expect.objectContaining({ type: 'step-finished', step: 'install', status: 'failed' }));
    expect(list.at(-1)).toMatchObject({ type: 'error', ok: false, error: { code: 'RUNPLAN_E_BUILD_STEP_FAILED', kind: 'deployment' } });

    const usage = await runCli(['plan', EXPRESS, '--json', '--events']);
    expect(usage.code).toBe(2);
    expect(events(usage.stdout).at(-1)).toMatchObject({ type: 'error', error: { code: 'RUNPLAN_E_CLI_USAGE', message: '--json and --events are two output formats: choose one.' } });
  });

  it('a buildpack whose detect() never settles: build --json and run --json end with exit 1 and exactly one JSON document', async () => {
    // Before: the pending promise did not keep Node.js alive, and both ended with exit 0 and no output.
    const dirs = await deploymentDirs();
    const module = join(await tempDir('runplan-bp-'), 'hang.mjs');
    await writeFile(module, HANGING_BUILDPACK);
    for (const command of ['build', 'run']) {
      const result = await runCli([command, EXPRESS, '--json', '--buildpack', module, '--buildpack-timeout', '0.5'], dirs.env);
      expect(result.code, result.output).toBe(1);
      expect(JSON.parse(result.stdout)).toMatchObject({
        ok: false,
        error: { code: 'RUNPLAN_E_BUILDPACK_TIMEOUT', details: { buildpack: 'hang', phase: 'detect', timeoutMs: 500 } },
      });
    }
  });

  it('build --json interrupted while a buildpack hangs: exit 130 and exactly one JSON document, the interruption', async () => {
    const dirs = await deploymentDirs();
    const module = join(await tempDir('runplan-bp-'), 'hang.mjs');
    await writeFile(module, HANGING_BUILDPACK);
    const build = startCli(['build', EXPRESS, '--json', '--buildpack', module], dirs.env);
    await build.waitFor('hang: detecting');
    build.child.kill('SIGTERM');
    expect(await build.exited).toBe(130);
    expect(JSON.parse(build.stdout())).toMatchObject({ ok: false, error: { code: 'RUNPLAN_E_CLI_INTERRUPTED', details: { signal: 'SIGTERM' } } });
  });

  it('--version --json and --help --json are JSON documents too', async () => {
    const version = await runCli(['--version', '--json']);
    expect(version.code).toBe(0);
    expect(JSON.parse(version.stdout)).toEqual({ ok: true, command: 'version', version: expect.any(String) });
    const help = await runCli(['build', '--help', '--json']);
    expect(help.code).toBe(0);
    expect(JSON.parse(help.stdout)).toMatchObject({ ok: true, command: 'help', usage: expect.stringContaining('--buildpack-timeout SECONDS') });
  });

  it('plan --events and check --json give their results as data', async () => {
    const plan = await runCli(['plan', EXPRESS, '--events']);
    expect(plan.code).toBe(0);
    expect(events(plan.stdout)).toEqual([expect.objectContaining({ type: 'result', command: 'plan', plan: expect.objectContaining({ schemaVersion: 2 }) })]);
    const check = await runCli(['check', 'http://127.0.0.1:9', '--json', '--timeout', '1']);
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: false, error: { code: 'RUNPLAN_E_HEALTH_NOT_LISTENING' } });
  });
});
