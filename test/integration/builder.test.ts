import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, readFile, readlink, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createPlay1Buildpack } from '../../buildpacks/play1/index.js';
import { treeCacheEntry } from '../../src/building/install/tree-cache.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { LayerCache } from '../../src/building/layer-cache.js';
import { StepBuilder, type StepBuilderOptions } from '../../src/building/step-builder.js';
import { assembleEnvironment, Environment } from '../../src/env/assemble.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { defineErrors } from '../../src/errors/runplan-error.js';
import { resolveHostSettings, type HostSettings } from '../../src/host/host-settings.js';
import { Logger, memorySink } from '../../src/log/logger.js';
import { failureRule } from '../../src/plan/failure-rule.js';
import { BuildStepSchema, LayerSchema, PlannedFileSchema, type BuildStep, type Install, type PackageSource, type RunPlan, type StepFailureRule } from '../../src/plan/schema.js';
import { localRunDir } from '../../src/process/run-dir.js';
import { appUser } from '../../src/process/app-user.js';
import { UserFiles } from '../../src/process/user-files.js';
import { InstantClock } from '../../src/time/clock.js';
import { play1InventoryPart, testInventory } from '../helpers/inventory.js';
import { killAll, processesUnder, processesWithArgument, processTreeScript } from '../helpers/processes.js';
import { tempDir, writableTempDir } from '../helpers/temp.js';

const step = (name: string, script: string, extra: Partial<BuildStep> = {}): BuildStep => ({
  name,
  description: name,
  run: { kind: 'shell', script },
  cwd: '.',
  env: {},
  pathPrepend: [],
  layer: null,
  ...extra,
});
const exec = (name: string, argv: string[], extra: Partial<BuildStep> = {}): BuildStep => step(name, '', { run: { kind: 'exec', argv }, ...extra });

/** A plan holding only what the builder reads; its parts are checked against the schema, as a saved plan would be. */
function planWith(steps: BuildStep[], extra: Partial<Pick<RunPlan, 'files' | 'layers'>> = {}): RunPlan {
  return {
    build: { steps: BuildStepSchema.array().parse(steps) },
    layers: LayerSchema.array().parse(extra.layers ?? []),
    files: PlannedFileSchema.array().parse(extra.files ?? []),
    // The builder lowers the whole plan.
    processes: [],
    environment: { variables: [] },
  } as unknown as RunPlan;
}

interface BuildInput {
  appDir?: string;
  cacheDir?: string;
  env?: Record<string, string> | Environment;
  layers?: LayerCache;
  tempDir?: string;
  install?: StepBuilderOptions['install'];
  host?: Partial<HostSettings>;
}

async function build(plan: RunPlan, options: BuildInput = {}) {
  const appDir = options.appDir ?? (await tempDir());
  const cacheDir = options.cacheDir ?? (await tempDir('runplan-test-cache-'));
  const env = options.env instanceof Environment ? options.env : assembleEnvironment({ application: options.env ?? {} });
  const sink = memorySink();
  const builder = new StepBuilder({ ...(options.layers ? { layers: options.layers } : {}), ...(options.install ? { install: options.install } : {}) });
  const run = builder.build({
    plan,
    appDir,
    env,
    host: resolveHostSettings({ cacheDir, ...options.host }),
    logger: new Logger(sink, env.redactor),
    ...(options.tempDir ? { tempDir: options.tempDir } : {}),
  });
  const stepLines = (name?: string) => sink.lines.filter((l) => l.origin.kind === 'step' && (name === undefined || l.origin.name === name)).map((l) => l.text);
  return { run, sink, appDir, cacheDir, stepLines };
}

describe('StepBuilder', () => {
  it('runs steps in order and streams each output line with the step name', async () => {
    const appDir = await tempDir();
    await mkdir(join(appDir, 'bin'));
    await writeFile(join(appDir, 'bin', 'hello'), '#!/bin/sh\necho "hello from $GREETING in $(pwd)"\n', { mode: 0o755 });
    const { run, sink } = await build(planWith([step('first', 'echo one; echo two >&2'), step('second', 'hello', { pathPrepend: ['bin'], env: { GREETING: 'step env' }, cwd: 'bin' })]), { appDir });
    const reports = await run;
    expect(reports.map((r) => [r.name, r.status])).toEqual([
      ['first', 'succeeded'],
      ['second', 'succeeded'],
    ]);
    const stepLines = sink.lines.filter((l) => l.origin.kind === 'step').map((l) => [(l.origin as { name: string }).name, l.text]);
    expect(stepLines).toEqual([
      ['first', 'one'],
      ['first', 'two'],
      ['second', `hello from step env in ${join(appDir, 'bin')}`],
    ]);
  });

  it('stops at the first failing step with a coded error naming the step and its exit status', async () => {
    const { run, appDir } = await build(planWith([step('ok', 'true'), step('breaks', 'echo boom; exit 3'), step('never', 'touch never-ran')]));
    await expect(run).rejects.toMatchObject({
      code: CoreErrors.BUILD_STEP_FAILED.code,
      message: expect.stringContaining('step "breaks" (echo boom; exit 3) failed with exit status 3'),
      details: { step: 'breaks', exitCode: 3, signal: null },
    });
    await expect(stat(join(appDir, 'never-ran'))).rejects.toThrow();
  });

  it('ends a step when its process exits, stopping what it left running in the background', async () => {
    const { run, appDir } = await build(planWith([step('daemonish', 'sleep 300 & echo left a sleeper')]));
    const started = Date.now();
    await run;
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(processesUnder(appDir)).toEqual([]);
  });

  it('ends a step when its process exits even if a double-forked daemon holds its output, and leaves no process behind', async () => {
    const marker = `runplan-step-daemon-${process.pid}-${Date.now()}`;
    onTestFinished(() => killAll(processesWithArgument(marker)));
    const pids = join(await writableTempDir(), 'pids');
    // The daemon keeps the step's output pipe open: only stopping it ends the step.
    const script = processTreeScript(marker).replace(/\nwait$/, '\nwhile [ "$(wc -l < "$TREE_PIDS")" -lt 3 ]; do sleep 0.05; done; echo tree started');
    const { run, stepLines } = await build(planWith([step('forks', script, { env: { TREE_PIDS: pids } })]));
    await run;
    expect(stepLines('forks')).toContain('tree started');
    expect(processesWithArgument(marker)).toEqual([]);
  });

  it('stops a step that runs longer than the host allows, with every process it started, and names the step', async () => {
    const marker = `runplan-step-hangs-${process.pid}-${Date.now()}`;
    onTestFinished(() => killAll(processesWithArgument(marker)));
    const pids = join(await writableTempDir(), 'pids');
    const { run, sink, appDir } = await build(planWith([step('hangs', `echo waiting for ever; ${processTreeScript(marker)}`, { env: { TREE_PIDS: pids } }), step('never', 'touch never-ran')]), {
      // Long enough for the step to start its whole tree on a loaded machine before the timeout hits.
      host: { buildStepTimeoutMs: 4_000 },
    });
    const started = Date.now();
    await expect(run).rejects.toMatchObject({
      code: CoreErrors.BUILD_STEP_TIMEOUT.code,
      // A script of several lines is named by the step's purpose (describeStep).
      message: expect.stringMatching(/step "hangs" \(.+\) did not finish within 4 s/),
      details: { step: 'hangs', timeoutMs: 4_000 },
    });
    expect((await readFile(pids, 'utf8')).trim().split('\n')).toHaveLength(3);
    // 4 s, then up to the 5 s grace period for the daemon that ignores SIGTERM.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(processesWithArgument(marker)).toEqual([]);
    expect(processesUnder(appDir)).toEqual([]);
    expect(sink.lines.map((l) => l.text)).toContain('step hangs still running after 4 s; stopping it and every process it started');
    await expect(stat(join(appDir, 'never-ran'))).rejects.toThrow();
  });

  it('says which program was missing', async () => {
    const { run } = await build(planWith([exec('x', ['runplan-no-such-program'])]));
    await expect(run).rejects.toMatchObject({ code: CoreErrors.BUILD_STEP_FAILED.code, fix: expect.stringContaining('runplan-no-such-program') });
  });

  it('writes build-phase files with their mode, and never prints the secret they hold', async () => {
    const plan = planWith([step('leaky', 'cat .npmrc; echo "token is $NPM_TOKEN"')], {
      files: [{ path: '.npmrc', phase: 'build', mode: 0o600, secret: true, content: [{ text: '//host/:_authToken=' }, { env: 'NPM_TOKEN' }, { text: '\n' }], reason: 'r' }],
    });
    const { run, appDir, sink } = await build(plan, { env: { NPM_TOKEN: 'npm_SeCrEt_value_42' } });
    await run;
    expect((await stat(join(appDir, '.npmrc'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(appDir, '.npmrc'), 'utf8')).toBe('//host/:_authToken=npm_SeCrEt_value_42\n');
    const printed = sink.lines.map((l) => l.text).join('\n');
    expect(printed).not.toContain('npm_SeCrEt_value_42');
    expect(printed).toContain('token is ***');
  });

  // Issue 21: the token stayed in the built application's .npmrc.
  it('leaves of a build-phase secret file what the plan says once the steps are done: the steps read the token, the built application does not', async () => {
    const file = { path: '.npmrc', phase: 'build' as const, mode: 0o600, secret: true, content: [{ text: '//host/:_authToken=' }, { env: 'NPM_TOKEN' }, { text: '\n' }], reason: 'r' };
    const plan = planWith([step('reads', 'grep -c npm_SeCrEt_value_42 .npmrc > seen-by-step')], {
      files: [
        { ...file, afterBuild: { action: 'replace' as const, text: 'save-exact=true\n', reason: 'the application own' } },
        { ...file, path: '.yarnrc.yml', afterBuild: { action: 'remove' as const, reason: 'none of its own' } },
      ],
    });
    const { run, appDir, sink } = await build(plan, { env: { NPM_TOKEN: 'npm_SeCrEt_value_42' } });
    await run;
    expect(await readFile(join(appDir, 'seen-by-step'), 'utf8')).toBe('1\n');
    expect(await readFile(join(appDir, '.npmrc'), 'utf8')).toBe('save-exact=true\n');
    await expect(stat(join(appDir, '.yarnrc.yml'))).rejects.toThrow();
    expect(sink.lines.map((l) => l.text)).toEqual(expect.arrayContaining(['rewrote .npmrc: the application own', 'removed .yarnrc.yml: none of its own']));
  });

  it('writes only the requested part of a login:password variable', async () => {
    const plan = planWith([], {
      files: [
        {
          path: 'users',
          phase: 'build',
          mode: 0o600,
          secret: true,
          reason: 'r',
          content: [
            { env: 'AUTH', part: 'before-first-colon' },
            { text: ':{PLAIN}' },
            { env: 'AUTH', part: 'after-first-colon' },
            { text: '\n' },
            { env: 'NO_COLON', part: 'before-first-colon' },
            { text: '|' },
            { env: 'NO_COLON', part: 'after-first-colon' },
            { text: '\n' },
          ],
        },
      ],
    });
    const { run, appDir } = await build(plan, { env: { AUTH: 'alice:pa:ss', NO_COLON: 'bob' } });
    await run;
    expect(await readFile(join(appDir, 'users'), 'utf8')).toBe('alice:{PLAIN}pa:ss\nbob|\n');
  });

  it('skips a step whose layer is cached under the same key, and reruns it when the key changes', async () => {
    const cacheRoot = await tempDir();
    const layers = new LayerCache(cacheRoot);
    // Writable by the step: as root, steps run as runplan's unprivileged user (docs/security.md).
    const counterDir = await tempDir();
    await chmod(counterDir, 0o777);
    const counter = join(counterDir, 'runs');
    const fill = step('fill', `mkdir -p deps && echo built > deps/marker && echo x >> ${counter}`, { layer: 'deps' });
    const layer = (key: string) => ({ name: 'deps', path: 'deps', cacheKey: key, keyInputs: ['test'] });

    const first = await build(planWith([fill], { layers: [layer('k1')] }), { layers });
    expect((await first.run).map((r) => r.status)).toEqual(['succeeded']);
    const second = await build(planWith([fill], { layers: [layer('k1')] }), { layers });
    expect((await second.run).map((r) => r.status)).toEqual(['cached']);
    expect(await readFile(join(second.appDir, 'deps', 'marker'), 'utf8')).toBe('built\n');
    const third = await build(planWith([fill], { layers: [layer('k2')] }), { layers });
    expect((await third.run).map((r) => r.status)).toEqual(['succeeded']);
    expect((await readFile(counter, 'utf8')).trim().split('\n')).toHaveLength(2);
  });

  it('runs a step marked onlyIfLayerRestored only when that layer came from the cache', async () => {
    const cacheRoot = await tempDir();
    const layers = new LayerCache(cacheRoot);
    const fill = step('fill', 'mkdir -p deps && echo built > deps/marker && echo filled > side-effect', { layer: 'deps' });
    const redo = step('redo', 'echo redone > side-effect', { onlyIfLayerRestored: 'deps' });
    const plan = planWith([fill, redo], { layers: [{ name: 'deps', path: 'deps', cacheKey: 'k', keyInputs: ['test'] }] });
    const first = await build(plan, { layers });
    expect((await first.run).map((r) => [r.name, r.status])).toEqual([['fill', 'succeeded']]);
    expect(await readFile(join(first.appDir, 'side-effect'), 'utf8')).toBe('filled\n');
    const second = await build(plan, { layers });
    expect((await second.run).map((r) => [r.name, r.status])).toEqual([
      ['fill', 'cached'],
      ['redo', 'succeeded'],
    ]);
    expect(await readFile(join(second.appDir, 'side-effect'), 'utf8')).toBe('redone\n');
  });

  it('caches a layer a later step checks only once that check passed, and skips the check when the layer comes from the cache', async () => {
    const layers = new LayerCache(await tempDir());
    const fill = step('fill', 'mkdir -p deps && echo built > deps/marker', { layer: 'deps' });
    const plan = (check: string) => planWith([fill, step('check', check, { verifiesLayer: 'deps' })], { layers: [{ name: 'deps', path: 'deps', cacheKey: 'k', keyInputs: ['test'] }] });
    const refused = await build(plan('exit 3'), { layers });
    await expect(refused.run).rejects.toMatchObject({ code: CoreErrors.BUILD_STEP_FAILED.code });
    expect(await layers.has('deps', 'k')).toBe(false);
    const passed = await build(plan('test -f deps/marker'), { layers });
    expect((await passed.run).map((r) => [r.name, r.status])).toEqual([
      ['fill', 'succeeded'],
      ['check', 'succeeded'],
    ]);
    expect(await layers.has('deps', 'k')).toBe(true);
    // What the cache holds passed the check: a build that restores it does not run it again.
    const restored = await build(plan('exit 3'), { layers });
    expect((await restored.run).map((r) => [r.name, r.status])).toEqual([
      ['fill', 'cached'],
      ['check', 'cached'],
    ]);
    expect(restored.stepLines('check')).toEqual(['layer deps came from the cache, which holds it only once it passed this check']);
  });

  it("replays the warnings of a layer's check when a build restores the layer instead of checking it", async () => {
    const layers = new LayerCache(await tempDir());
    const fill = step('fill', 'mkdir -p deps && echo built > deps/marker', { layer: 'deps' });
    const warnOn = [{ pattern: '^left out (\\S+)$', warning: { code: 'RUNPLAN_W_DEMO_LEFT_OUT', message: 'the install left out {matches}.', fix: 'Fix the dependency.' } }];
    const plan = planWith([fill, step('check', 'echo left out opt@1.0.0', { verifiesLayer: 'deps', warnOn })], {
      layers: [{ name: 'deps', path: 'deps', cacheKey: 'k', keyInputs: ['test'] }],
    });
    const warned = (sink: ReturnType<typeof memorySink>) => sink.lines.filter((l) => l.text.includes('RUNPLAN_W_DEMO_LEFT_OUT')).map((l) => l.text);
    const first = await build(plan, { layers });
    await first.run;
    expect(warned(first.sink)).toEqual(['RUNPLAN_W_DEMO_LEFT_OUT: the install left out opt@1.0.0. Fix: Fix the dependency.']);
    const second = await build(plan, { layers });
    expect((await second.run).map((r) => r.status)).toEqual(['cached', 'cached']);
    expect(warned(second.sink)).toEqual(['RUNPLAN_W_DEMO_LEFT_OUT: the install left out opt@1.0.0. Fix: Fix the dependency. (found by step check when layer deps was cached)']);
    // A copy saved again without warnings drops the old ones with it.
    await layers.save('deps', 'k', join(second.appDir, 'deps'), new UserFiles(await appUser()));
    expect(await layers.warnings('deps', 'k')).toEqual([]);
  });

  it('replays the warnings of the step that filled a layer, as that step, when a build restores the layer', async () => {
    const layers = new LayerCache(await tempDir());
    const warnOn = [{ pattern: '^blocked (\\S+)$', warning: { code: 'RUNPLAN_W_DEMO_BLOCKED', message: 'the install blocked {matches}.', fix: 'Allow it.' } }];
    const fill = step('fill', 'mkdir -p deps && echo built > deps/marker && echo blocked stamp@1.0.0', { layer: 'deps', warnOn });
    const plan = planWith([fill, step('check', 'true', { verifiesLayer: 'deps' })], {
      layers: [{ name: 'deps', path: 'deps', cacheKey: 'k', keyInputs: ['test'] }],
    });
    const warned = (sink: ReturnType<typeof memorySink>) => sink.lines.filter((l) => l.text.includes('RUNPLAN_W_DEMO_BLOCKED')).map((l) => l.text);
    const first = await build(plan, { layers });
    await first.run;
    expect(warned(first.sink)).toEqual(['RUNPLAN_W_DEMO_BLOCKED: the install blocked stamp@1.0.0. Fix: Allow it.']);
    const second = await build(plan, { layers });
    expect((await second.run).map((r) => r.status)).toEqual(['cached', 'cached']);
    // Once, from the step that raised it, not again from the check.
    expect(warned(second.sink)).toEqual(['RUNPLAN_W_DEMO_BLOCKED: the install blocked stamp@1.0.0. Fix: Allow it. (found by step fill when layer deps was cached)']);
  });

  it('builds again a copy an older runplan saved without a record of what its steps warned, then replays them', async () => {
    const root = await tempDir();
    const layers = new LayerCache(root);
    const warnOn = [{ pattern: '^blocked (\\S+)$', warning: { code: 'RUNPLAN_W_DEMO_BLOCKED', message: 'the install blocked {matches}.', fix: 'Allow it.' } }];
    const plan = planWith([step('fill', 'mkdir -p deps && echo built > deps/marker && echo blocked stamp@1.0.0', { layer: 'deps', warnOn })], {
      layers: [{ name: 'deps', path: 'deps', cacheKey: 'k', keyInputs: ['test'] }],
    });
    await (await build(plan, { layers })).run;
    // What runplan kept before the record: the copy, and at most the check's warnings without their step.
    const entry = join(root, 'deps', 'k');
    await rm(`${entry}.record.json`);
    await writeFile(`${entry}.warnings.json`, '[]');
    const older = new LayerCache(root);
    expect(await older.has('deps', 'k')).toBe(false);
    const again = await build(plan, { layers: older });
    expect((await again.run).map((r) => r.status)).toEqual(['succeeded']);
    expect(await readdir(join(root, 'deps'))).toEqual(['k', 'k.record.json']);
    const restored = await build(plan, { layers: older });
    expect((await restored.run).map((r) => r.status)).toEqual(['cached']);
    expect(restored.sink.lines.some((l) => l.text.includes('RUNPLAN_W_DEMO_BLOCKED') && l.text.includes('(found by step fill'))).toBe(true);
  });
});

describe('StepBuilder: onFailure rules', () => {
  const Demo = defineErrors({
    DEMO_AUTH_REFUSED: { title: 'The registry refused the token', kind: 'input', fix: 'Set a valid NPM_TOKEN.' },
    DEMO_TOOL_MISSING: { title: 'The tool is not installed', kind: 'deployment', fix: 'Install the tool on the host.' },
    DEMO_BROKEN: { title: 'The step broke', kind: 'deployment', fix: 'Read the output.' },
  });
  const refused = failureRule(Demo.DEMO_AUTH_REFUSED, { kind: 'output', pattern: 'npm error code E40[13]\\b' }, { message: 'the registry refused NPM_TOKEN.', variable: 'NPM_TOKEN' });
  const missing = failureRule(Demo.DEMO_TOOL_MISSING, { kind: 'not-found' }, { message: 'the tool is not on PATH.', fix: 'Install the tool, or put its directory on PATH.' });
  const anyFailure = failureRule(Demo.DEMO_BROKEN, { kind: 'any' }, { message: 'the step broke.', file: 'package.json' });

  const failing = async (s: BuildStep) => {
    const { run } = await build(planWith([s]));
    return run.then(
      () => expect.unreachable('the build should fail'),
      (error: unknown) => error,
    );
  };

  it('raises the coded error of a rule whose pattern matches an output line (case-insensitive, stdout or stderr)', async () => {
    const error = await failing(step('install', 'echo fetching; echo "NPM ERROR code E401" >&2; exit 1', { onFailure: [missing, refused, anyFailure] }));
    expect(Demo.DEMO_AUTH_REFUSED.is(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'RUNPLAN_E_DEMO_AUTH_REFUSED',
      kind: 'input',
      message: 'RUNPLAN_E_DEMO_AUTH_REFUSED: the registry refused NPM_TOKEN.',
      fix: 'Set a valid NPM_TOKEN.',
      variable: 'NPM_TOKEN',
      file: undefined,
      details: { step: 'install', exitCode: 1 },
    });
    const fromStdout = await failing(step('install', 'echo "npm error code E403 forbidden"; exit 1', { onFailure: [refused] }));
    expect(fromStdout).toMatchObject({ code: 'RUNPLAN_E_DEMO_AUTH_REFUSED' });
  });

  it('looks at the last 200 output lines only', async () => {
    const error = await failing(step('install', 'echo "npm error code E401"; for i in $(seq 1 200); do echo "line $i"; done; exit 1', { onFailure: [refused] }));
    expect(error).toMatchObject({ code: CoreErrors.BUILD_STEP_FAILED.code });
    const within = await failing(step('install', 'echo "npm error code E401"; for i in $(seq 1 199); do echo "line $i"; done; exit 1', { onFailure: [refused] }));
    expect(within).toMatchObject({ code: 'RUNPLAN_E_DEMO_AUTH_REFUSED' });
  });

  it("raises the not-found rule's error when the program cannot be started, and only then", async () => {
    const error = await failing(exec('tool', ['runplan-no-such-tool', '--version'], { onFailure: [refused, missing, anyFailure] }));
    expect(error).toMatchObject({
      code: 'RUNPLAN_E_DEMO_TOOL_MISSING',
      kind: 'deployment',
      message: 'RUNPLAN_E_DEMO_TOOL_MISSING: the tool is not on PATH.',
      fix: 'Install the tool, or put its directory on PATH.',
      details: { step: 'tool', exitCode: null },
    });
    // A program that is there but not executable cannot be started either.
    const appDir = await tempDir();
    await writeFile(join(appDir, 'tool'), '#!/bin/sh\necho ran\n', { mode: 0o644 });
    const notExecutable = await build(planWith([exec('tool', ['./tool'], { onFailure: [missing] })]), { appDir });
    await expect(notExecutable.run).rejects.toMatchObject({ code: 'RUNPLAN_E_DEMO_TOOL_MISSING' });
    const unexplained = await build(planWith([exec('tool', ['./tool'])]), { appDir });
    await expect(unexplained.run).rejects.toMatchObject({ code: CoreErrors.BUILD_STEP_FAILED.code, fix: '"./tool" is not executable; make it executable or fix the command.' });
    // The program ran and failed: not-found does not apply.
    const ran = await failing(exec('tool', ['/bin/sh', '-c', 'exit 4'], { onFailure: [missing] }));
    expect(ran).toMatchObject({ code: CoreErrors.BUILD_STEP_FAILED.code, details: { step: 'tool', exitCode: 4 } });
  });

  it("raises the any rule's error for whatever failure, in rule order", async () => {
    const error = await failing(step('build', 'exit 5', { onFailure: [refused, anyFailure, missing] }));
    expect(error).toMatchObject({ code: 'RUNPLAN_E_DEMO_BROKEN', kind: 'deployment', file: 'package.json', variable: undefined, details: { step: 'build', exitCode: 5 } });
    // The first rule that matches wins, even when a later one is more specific.
    const first = await failing(step('install', 'echo "npm error code E401"; exit 1', { onFailure: [anyFailure, refused] }));
    expect(first).toMatchObject({ code: 'RUNPLAN_E_DEMO_BROKEN' });
  });

  it('falls back to RUNPLAN_E_BUILD_STEP_FAILED when no rule matches, and ignores rules of steps that succeed', async () => {
    const error = await failing(step('install', 'echo "npm error code E500"; exit 2', { onFailure: [refused, missing] }));
    expect(error).toMatchObject({
      code: CoreErrors.BUILD_STEP_FAILED.code,
      message: expect.stringContaining('failed with exit status 2'),
      details: { step: 'install', exitCode: 2, signal: null },
    });
    const { run } = await build(planWith([step('noisy', 'echo "npm error code E401"; exit 0', { onFailure: [refused, anyFailure] })]));
    expect((await run).map((r) => r.status)).toEqual(['succeeded']);
  });

  it('matches rules written by hand in a plan (as data)', async () => {
    const rule: StepFailureRule = {
      when: { kind: 'output', pattern: '^Gemfile\\.lock .* (is|was) (?:frozen|missing)$' },
      error: { code: 'ACME_E_LOCK_FROZEN', kind: 'input', message: 'the lock file is out of date.', fix: 'Run bundle lock and commit Gemfile.lock.', file: 'Gemfile.lock' },
    };
    const error = await failing(step('bundle', 'echo "Gemfile.lock in deployment mode is frozen"; exit 16', { onFailure: [rule] }));
    expect(error).toMatchObject({ code: 'ACME_E_LOCK_FROZEN', kind: 'input', file: 'Gemfile.lock', fix: 'Run bundle lock and commit Gemfile.lock.', details: { step: 'bundle', exitCode: 16 } });
  });
});

describe('Play 1.x: the build checks what play precompile wrote, whatever its status', () => {
  it("the plan's precompile-check step fails without precompiled/ (RUNPLAN_E_PLAY1_PRECOMPILE_NO_OUTPUT) and passes with it", async () => {
    const options = { hostEnv: {}, mirror: 'https://mirror.example/play/{version}/play-{version}.zip', checksums: { '1.11.0': 'a'.repeat(64) } };
    const { plan } = await createPlan({
      registry: new BuildpackRegistry([createPlay1Buildpack(options)]),
      inventory: testInventory({ play1: play1InventoryPart(options, {}) }),
      files: new MemorySource({ 'conf/application.conf': 'application.name=demo\n', 'conf/routes': 'GET / Application.index\n' }),
      appDir: '/srv/app',
      env: { application: {} },
    });
    const names = plan.build.steps.map((s) => s.name);
    expect(names.slice(names.indexOf('precompile'))).toEqual(['precompile', 'precompile-check']);
    const check = plan.build.steps.filter((s) => s.name === 'precompile-check');
    // What an older launcher leaves when its JVM failed: status 0, no precompiled/.
    const { run } = await build(planWith(check));
    await expect(run).rejects.toMatchObject({ code: 'RUNPLAN_E_PLAY1_PRECOMPILE_NO_OUTPUT', kind: 'deployment', details: { step: 'precompile-check' } });
    const appDir = await tempDir();
    await mkdir(join(appDir, 'precompiled', 'java'), { recursive: true });
    await expect((await build(planWith(check), { appDir })).run).resolves.toEqual([expect.objectContaining({ name: 'precompile-check', status: 'succeeded' })]);
  });
});

describe('StepBuilder: placeholders and temporary directory', () => {
  it('fills ${APP_HOME} and ${RUN_DIR} in argv, cwd, env and PATH additions, and APP_HOME in the environment, never in shell scripts', async () => {
    const appDir = await tempDir();
    await mkdir(join(appDir, 'sub', 'bin'), { recursive: true });
    await writeFile(join(appDir, 'sub', 'bin', 'where'), '#!/bin/sh\necho "where: $(pwd)"\n', { mode: 0o755 });
    // The deployment environment as a saved plan holds it: APP_HOME is a placeholder the executor fills.
    const planned = assembleEnvironment({ service: { APP_HOME: '${APP_HOME}' }, application: { PLAIN: 'literal ${APP_HOME}' } });
    expect(planned.toPlan().variables.find((v) => v.name === 'APP_HOME')).toMatchObject({ placeholder: 'APP_HOME' });
    const env = Environment.fromPlan(planned.toPlan(), {});
    const plan = planWith([
      exec('argv', ['/bin/sh', '-c', 'printf "%s\\n" "$1" "$2" "$DATA" "$SOCKET" "$(pwd)"', 'sh', '${APP_HOME}/arg', '--run=${RUN_DIR}/x'], {
        cwd: '${APP_HOME}/sub',
        env: { DATA: '${APP_HOME}/data', SOCKET: '${RUN_DIR}/app.sock' },
      }),
      exec('path', ['where'], { pathPrepend: ['${APP_HOME}/sub/bin'], cwd: 'sub' }),
      step('shell', 'echo "env: $APP_HOME"; echo \'script: ${APP_HOME}\'; echo "plain: $PLAIN"'),
    ]);
    const { run, stepLines } = await build(plan, { appDir, env });
    await run;
    const runDir = localRunDir(appDir);
    expect(stepLines('argv')).toEqual([`${appDir}/arg`, `--run=${runDir}/x`, `${appDir}/data`, `${runDir}/app.sock`, join(appDir, 'sub')]);
    expect(stepLines('path')).toEqual([`where: ${join(appDir, 'sub')}`]);
    // Only a value that is a placeholder is filled; a script is the user's own text.
    expect(stepLines('shell')).toEqual([`env: ${appDir}`, 'script: ${APP_HOME}', 'plain: literal ${APP_HOME}']);
  });

  it('fills placeholder chunks of files', async () => {
    const plan = planWith([step('show', 'cat conf/app.conf')], {
      files: [
        {
          path: 'conf/app.conf',
          phase: 'build',
          mode: 0o644,
          secret: false,
          reason: 'r',
          content: [{ text: 'root ' }, { placeholder: 'APP_HOME' }, { text: '/public;\nsocket ' }, { placeholder: 'RUN_DIR' }, { text: '/puma.sock;\n' }],
        },
      ],
    });
    const { run, appDir, stepLines } = await build(plan);
    await run;
    const expected = `root ${appDir}/public;\nsocket ${localRunDir(appDir)}/puma.sock;\n`;
    expect(await readFile(join(appDir, 'conf/app.conf'), 'utf8')).toBe(expected);
    expect(stepLines('show')).toEqual(expected.trimEnd().split('\n'));
  });

  it("gives steps the private temporary directory as TMPDIR, and the host's otherwise", async () => {
    const privateTmp = await tempDir('runplan-step-tmp-');
    const plan = planWith([step('tmp', 'echo "$TMPDIR"; mktemp')]);
    const { run, stepLines } = await build(plan, { tempDir: privateTmp });
    await run;
    const [tmpdir, made] = stepLines('tmp');
    expect(tmpdir).toBe(privateTmp);
    expect(made?.startsWith(`${privateTmp}/`)).toBe(true);
    expect(await readdir(privateTmp)).toHaveLength(1);

    const host = await build(planWith([step('tmp', 'echo "$TMPDIR"')]));
    await host.run;
    expect(host.stepLines('tmp')[0]).toBe(process.env.TMPDIR ?? '');
  });
});

describe('StepBuilder: install steps', () => {
  let server: Server;
  let base: string;
  let root: string;
  const served = new Map<string, Buffer | ((count: number) => { status: number; body?: Buffer })>();
  const hits = new Map<string, number>();

  beforeAll(async () => {
    root = await tempDir('runplan-builder-install-');
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      const count = (hits.get(path) ?? 0) + 1;
      hits.set(path, count);
      const entry = served.get(path);
      if (entry === undefined) return void res.writeHead(404).end();
      const answer = typeof entry === 'function' ? entry(count) : { status: 200, body: entry };
      res.writeHead(answer.status, answer.body ? { 'content-length': answer.body.length } : {}).end(answer.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** A tool-1.0.tar.gz whose launcher lost its execute bit, served at /<name>. */
  async function toolArchive(name: string): Promise<PackageSource & { type: 'archive' }> {
    const dir = join(root, name);
    await mkdir(join(dir, 'tool-1.0', 'bin'), { recursive: true });
    await mkdir(join(dir, 'tool-1.0', 'lib'), { recursive: true });
    await writeFile(join(dir, 'tool-1.0', 'bin', 'tool'), '#!/bin/sh\necho "tool 1.0 from $(dirname "$0")"\ncat "$(dirname "$(readlink -f "$0")")/../lib/data.txt"\n');
    await chmod(join(dir, 'tool-1.0', 'bin', 'tool'), 0o644);
    await writeFile(join(dir, 'tool-1.0', 'lib', 'data.txt'), 'data\n');
    const file = join(root, `${name}.tar.gz`);
    await tar.c({ gzip: true, file, cwd: dir }, ['tool-1.0']);
    const bytes = await readFile(file);
    served.set(`/${name}`, bytes);
    return { type: 'archive', url: `${base}/${name}`, sha256: createHash('sha256').update(bytes).digest('hex') };
  }

  const installStep = (source: PackageSource): BuildStep =>
    step('tool', '', {
      description: 'install the tool',
      run: { kind: 'install', source, target: '.runplan/tool', executables: ['bin/tool'], links: [{ path: '.runplan/bin/tool', target: 'bin/tool' }] } satisfies Install,
    });
  const useTool = exec('use', ['tool'], { pathPrepend: ['.runplan/bin'] });

  it('installs an archive through the shared cache, with executables and links the next steps use; a second build reuses the cache', async () => {
    const source = await toolArchive('tool.tar.gz');
    const cacheDir = await tempDir('runplan-builder-cache-');
    const first = await build(planWith([installStep(source), useTool]), { cacheDir });
    expect((await first.run).map((r) => [r.name, r.status])).toEqual([
      ['tool', 'succeeded'],
      ['use', 'succeeded'],
    ]);
    const tool = join(first.appDir, '.runplan/tool/bin/tool');
    expect((await stat(tool)).mode & 0o777).toBe(0o555);
    expect((await lstat(join(first.appDir, '.runplan/bin/tool'))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(first.appDir, '.runplan/bin/tool'))).toBe('../tool/bin/tool');
    expect(first.stepLines('use')).toEqual([`tool 1.0 from ${join(first.appDir, '.runplan/bin')}`, 'data']);
    expect(first.stepLines('tool')).toEqual(expect.arrayContaining([`downloading ${source.url} into the shared cache`, `${source.url} in .runplan/tool`]));
    expect(first.sink.lines.some((l) => l.origin.kind === 'runplan' && l.text === `step tool: install ${source.url} into .runplan/tool`)).toBe(true);
    const entry = treeCacheEntry(cacheDir, source);
    // The build reaches the tree through a symlink to the cache entry itself.
    expect(await readlink(join(first.appDir, '.runplan/tool'))).toBe(await realpath(entry));
    expect(hits.get('/tool.tar.gz')).toBe(1);

    const second = await build(planWith([installStep(source), useTool]), { cacheDir });
    expect((await second.run).map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(second.stepLines('tool')).toEqual([`${source.url} in .runplan/tool (from the shared cache)`]);
    expect(second.stepLines('use')).toEqual([`tool 1.0 from ${join(second.appDir, '.runplan/bin')}`, 'data']);
    expect(hits.get('/tool.tar.gz')).toBe(1);
  });

  it("fetches with the builder's install options (clock, attempts)", async () => {
    const source = await toolArchive('flaky-tool.tar.gz');
    const bytes = served.get('/flaky-tool.tar.gz') as Buffer;
    served.set('/flaky-tool.tar.gz', (n) => (n === 1 ? { status: 503 } : { status: 200, body: bytes }));
    const clock = new InstantClock();
    const { run, stepLines } = await build(planWith([installStep(source)]), { install: { clock, retryDelayMs: 10 } });
    await run;
    expect(clock.sleeps).toEqual([10]);
    expect(stepLines('tool')).toContain(`download of ${source.url} failed (HTTP 503 Service Unavailable); attempt 2 of 3 in 0.0 s`);
  });

  it("stops the build with the install's coded error; nothing is cached and later steps do not run", async () => {
    const source = await toolArchive('tampered.tar.gz');
    const genuine = source.sha256;
    const cacheDir = await tempDir('runplan-builder-cache-');
    const { run, appDir } = await build(planWith([installStep({ ...source, sha256: 'f'.repeat(64) }), step('after', 'touch after-ran')]), { cacheDir });
    await expect(run).rejects.toMatchObject({ code: CoreErrors.BUILD_DIGEST_MISMATCH.code, message: expect.stringContaining(`has SHA-256 ${genuine}, but the plan expects ${'f'.repeat(64)}`) });
    await expect(stat(join(appDir, 'after-ran'))).rejects.toThrow();
    expect(await readdir(join(cacheDir, 'trees', 'archive'))).toEqual([]);
  });
});
