import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Buildpack, StepFailure } from '../../src/buildpack/contract.js';
import { defineErrors } from '../../src/errors/runplan-error.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { LayerCache } from '../../src/build/layer-cache.js';
import { StepBuilder } from '../../src/build/step-builder.js';
import { assembleEnvironment } from '../../src/env/assemble.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { resolveHostSettings } from '../../src/host/host-settings.js';
import { Logger, memorySink } from '../../src/log/logger.js';
import type { BuildStep, RunPlan } from '../../src/plan/schema.js';
import { processesUnder } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const step = (name: string, script: string, extra: Partial<BuildStep> = {}): BuildStep => ({
  name, description: name, run: { kind: 'shell', script }, cwd: '.', env: {}, pathPrepend: [], produces: [], layer: null, ...extra,
});

function planWith(steps: BuildStep[], extra: Partial<RunPlan> = {}): RunPlan {
  return { build: { steps }, layers: [], files: [], ...extra } as unknown as RunPlan;
}

async function build(plan: RunPlan, options: { appDir?: string; env?: Record<string, string>; registry?: BuildpackRegistry; layers?: LayerCache } = {}) {
  const appDir = options.appDir ?? (await tempDir());
  const env = assembleEnvironment({ application: options.env ?? {} });
  const sink = memorySink();
  const builder = new StepBuilder({ registry: options.registry ?? new BuildpackRegistry(), ...(options.layers ? { layers: options.layers } : {}) });
  const run = builder.build({ plan, appDir, env, host: resolveHostSettings({ cacheDir: appDir }), logger: new Logger(sink, env.redactor) });
  return { run, sink, appDir };
}

describe('StepBuilder', () => {
  it('runs steps in order and streams each output line with the step name', async () => {
    const appDir = await tempDir();
    await mkdir(join(appDir, 'bin'));
    await writeFile(join(appDir, 'bin', 'hello'), '#!/bin/sh\necho "hello from $GREETING in $(pwd)"\n', { mode: 0o755 });
    const { run, sink } = await build(
      planWith([step('first', 'echo one; echo two >&2'), step('second', 'hello', { pathPrepend: ['bin'], env: { GREETING: 'step env' }, cwd: 'bin' })]),
      { appDir },
    );
    const reports = await run;
    expect(reports.map((r) => [r.name, r.status])).toEqual([['first', 'succeeded'], ['second', 'succeeded']]);
    const stepLines = sink.lines.filter((l) => l.origin.kind === 'step').map((l) => [(l.origin as { name: string }).name, l.text]);
    expect(stepLines).toEqual([['first', 'one'], ['first', 'two'], ['second', `hello from step env in ${join(appDir, 'bin')}`]]);
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

  it('says which program was missing', async () => {
    const { run } = await build(planWith([{ ...step('x', ''), run: { kind: 'exec', argv: ['runplan-no-such-program'] } }]));
    await expect(run).rejects.toMatchObject({ code: CoreErrors.BUILD_STEP_FAILED.code, fix: expect.stringContaining('runplan-no-such-program') });
  });

  it('runs actions provided by registered buildpacks, and refuses unknown ones', async () => {
    const seen: unknown[] = [];
    const bp = { id: 'demo', actions: { touch: async (params: Readonly<Record<string, unknown>>, ctx: { appDir: string; log: (l: string) => void }) => {
      seen.push(params);
      await writeFile(join(ctx.appDir, 'touched'), 'x');
      ctx.log('touched it');
    } } } as unknown as Buildpack;
    const actionStep: BuildStep = { ...step('act', ''), run: { kind: 'action', action: 'demo/touch', params: { a: 1 } } };
    const { run, appDir, sink } = await build(planWith([actionStep]), { registry: new BuildpackRegistry([bp]) });
    await run;
    expect(seen).toEqual([{ a: 1 }]);
    expect(await readFile(join(appDir, 'touched'), 'utf8')).toBe('x');
    expect(sink.lines.some((l) => l.text === 'touched it' && l.origin.kind === 'step')).toBe(true);
    const unknown = await build(planWith([{ ...actionStep, run: { kind: 'action', action: 'nobody/none', params: {} } }]));
    await expect(unknown.run).rejects.toMatchObject({ code: CoreErrors.BUILD_ACTION_UNKNOWN.code });
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

  it('writes only the requested part of a login:password variable', async () => {
    const plan = planWith([], {
      files: [{ path: 'users', phase: 'build', mode: 0o600, secret: true, reason: 'r', content: [
        { env: 'AUTH', part: 'before-first-colon' }, { text: ':{PLAIN}' }, { env: 'AUTH', part: 'after-first-colon' }, { text: '\n' },
        { env: 'NO_COLON', part: 'before-first-colon' }, { text: '|' }, { env: 'NO_COLON', part: 'after-first-colon' }, { text: '\n' },
      ] }],
    });
    const { run, appDir } = await build(plan, { env: { AUTH: 'alice:pa:ss', NO_COLON: 'bob' } });
    await run;
    expect(await readFile(join(appDir, 'users'), 'utf8')).toBe('alice:{PLAIN}pa:ss\nbob|\n');
  });

  it('skips a step whose layer is cached under the same key, and reruns it when the key changes', async () => {
    const cacheRoot = await tempDir();
    const layers = new LayerCache(cacheRoot);
    const counter = join(cacheRoot, 'runs');
    const fill = step('fill', `mkdir -p deps && echo built > deps/marker && echo x >> ${counter}`, { layer: 'deps' });
    const layer = (key: string) => ({ name: 'deps', path: 'deps', cacheKey: key, keyInputs: ['test'], build: true, launch: true });

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
    const plan = planWith([fill, redo], { layers: [{ name: 'deps', path: 'deps', cacheKey: 'k', keyInputs: ['test'], build: true, launch: true }] });
    const first = await build(plan, { layers });
    expect((await first.run).map((r) => [r.name, r.status])).toEqual([['fill', 'succeeded']]);
    expect(await readFile(join(first.appDir, 'side-effect'), 'utf8')).toBe('filled\n');
    const second = await build(plan, { layers });
    expect((await second.run).map((r) => [r.name, r.status])).toEqual([['fill', 'cached'], ['redo', 'succeeded']]);
    expect(await readFile(join(second.appDir, 'side-effect'), 'utf8')).toBe('redone\n');
  });

  it('lets the application\'s buildpack turn a recognised failure into its own coded error', async () => {
    const Demo = defineErrors({ DEMO_AUTH_REFUSED: { title: 't', kind: 'deployment', fix: 'f' } });
    const bp = {
      id: 'demo',
      diagnoseFailure: ({ step: s, exitCode, output }: StepFailure) =>
        output.some((l) => l.includes('E401')) ? Demo.DEMO_AUTH_REFUSED.create({ message: `${s.name} refused (${exitCode})` }) : undefined,
    } as unknown as Buildpack;
    const registry = new BuildpackRegistry([bp]);
    const refused = await build(planWith([step('install', 'echo "npm error code E401" >&2; exit 1')], { app: { type: 'demo' } } as Partial<RunPlan>), { registry });
    await expect(refused.run).rejects.toMatchObject({ code: 'RUNPLAN_E_DEMO_AUTH_REFUSED', message: expect.stringContaining('install refused (1)') });
    const other = await build(planWith([step('install', 'exit 2')], { app: { type: 'demo' } } as Partial<RunPlan>), { registry });
    await expect(other.run).rejects.toMatchObject({ code: CoreErrors.BUILD_STEP_FAILED.code });
  });
});
