import { readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IMAGE_BINDINGS } from '../../src/engines/image/scripts.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { assemblePath, lowerPlan, mergeEnvironment } from '../../src/lowering/lower.js';
import { processGroups } from '../../src/lowering/process-groups.js';
import { type Bindings, fillPlaceholders } from '../../src/plan/placeholders.js';
import { type FileChunk, PLACEHOLDERS, type RunPlan } from '../../src/plan/schema.js';
import { ROOT } from '../helpers/cli.js';

/** Every golden plan (test/golden/<type>/<case>.json) that is a plan, not a refusal. */
function goldenPlans(): Array<[string, RunPlan]> {
  const dir = join(ROOT, 'test/golden');
  const plans: Array<[string, RunPlan]> = [];
  for (const type of readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory())) {
    for (const file of readdirSync(join(dir, type.name)).filter((f) => f.endsWith('.json'))) {
      const doc = JSON.parse(readFileSync(join(dir, type.name, file), 'utf8'));
      if (Array.isArray(doc.processes)) plans.push([`${type.name}/${file}`, doc as RunPlan]);
    }
  }
  return plans;
}

const PLANS = goldenPlans();
/** A local executor's bindings (a build directory with a blank in it) and an image's. */
const EXECUTORS: Array<[string, Bindings]> = [
  ['local', { APP_HOME: '/srv/builds/app 1', RUN_DIR: '/tmp/runplan-run-0/abc', RUBY_BIN: '/opt/ruby/bin', NGINX_BIN: '/usr/sbin' }],
  ['image', IMAGE_BINDINGS],
];
const TOKEN = new RegExp(`\\$\\{(${PLACEHOLDERS.join('|')})\\}`);
const CASES = PLANS.flatMap(([name, plan]) => EXECUTORS.map(([executor, bindings]) => [`${name} for the ${executor} executor`, plan, bindings] as const));

describe('lowerPlan over every golden plan', () => {
  it('has golden plans of every type to lower', () => {
    expect(new Set(PLANS.map(([name]) => name.split('/')[0]))).toEqual(new Set(['node', 'ruby', 'play1']));
  });

  it.each(CASES)('%s: every step, hook and process is bound: no placeholder left, cwd and PATH additions absolute and normal', (_, plan, bindings) => {
    const lowered = lowerPlan(plan, bindings);
    const steps = [...lowered.build.steps.map((s) => s.step), ...lowered.runHooks.preRun, ...lowered.runHooks.succeeded, ...lowered.runHooks.failed];
    for (const unit of [...steps, ...lowered.processes]) {
      const argv = 'run' in unit ? (unit.run.kind === 'exec' ? unit.run.argv : []) : unit.command.kind === 'exec' ? unit.command.argv : [];
      // Shell scripts keep their text: `${APP_HOME}` there is the shell's variable, which the environment sets.
      for (const word of [...argv, unit.cwd, ...Object.values(unit.env), ...unit.pathPrepend]) expect(word).not.toMatch(TOKEN);
      for (const dir of [unit.cwd, ...unit.pathPrepend]) {
        expect(isAbsolute(dir)).toBe(true);
        expect(posix.normalize(dir)).toBe(dir.length > 1 ? dir.replace(/\/$/, '') : dir);
      }
    }
    for (const proc of lowered.processes) for (const c of proc.startAfter ?? []) if (c.kind !== 'tcp-port') expect(c.socket).not.toMatch(TOKEN);
  });

  it.each(CASES)('%s: files hold their text with the placeholders filled, at their path in the application', (_, plan, bindings) => {
    const lowered = lowerPlan(plan, bindings);
    expect(lowered.files.map((f) => f.path)).toEqual(plan.files.map((f) => f.path));
    plan.files.forEach((file, i) => {
      const low = lowered.files[i];
      expect(low?.target).toBe(posix.join(bindings.APP_HOME as string, file.path));
      // The same text once variables are given a mark, whichever way the placeholders were cut.
      const mark = (chunks: readonly FileChunk[]) => chunks.map((c) => ('text' in c ? c.text : 'env' in c ? `<${c.env}>` : `\${${c.placeholder}}`)).join('');
      expect(mark(low?.content ?? [])).toBe(fillPlaceholders(mark(file.content), bindings));
      expect(low?.content.some((c) => 'placeholder' in c)).toBe(false);
    });
  });

  it.each(CASES)('%s: groups, layers, warm starts, environment and resources keep the plan’s rules', (_, plan, bindings) => {
    const lowered = lowerPlan(plan, bindings);
    const names = (ps: readonly { name: string }[]) => ps.map((p) => p.name);
    expect(lowered.groups.map((g) => [g.name, names(g.processes), g.main.name, names(g.helpers)])).toEqual(processGroups(plan).map((g) => [g.name, names(g.processes), g.main.name, names(g.helpers)]));
    // Each lowered group holds the lowered processes themselves.
    for (const g of lowered.groups) for (const p of g.processes) expect(lowered.processes).toContain(p);
    expect(lowered.web?.name).toBe((plan.processes.find((p) => p.role === 'web') ?? plan.processes[0])?.name);
    expect(lowered.layers.map((l) => [l.name, l.dir])).toEqual(plan.layers.map((l) => [l.name, posix.join(bindings.APP_HOME as string, l.path)]));
    expect(lowered.build.steps.map((s) => s.layer?.name ?? null)).toEqual(plan.build.steps.map((s) => s.layer));
    expect(lowered.build.warmStart.map((l) => l.name)).toEqual(
      plan.layers.filter((l) => l.reuse === 'warm-start' && l.cacheKey !== null && !plan.build.steps.some((s) => s.layer === l.name)).map((l) => l.name),
    );
    for (const v of lowered.environment) {
      if (v.secret) expect(v.value).toBeUndefined();
      else expect(v.value).not.toMatch(TOKEN);
    }
    expect(lowered.resources).toEqual(plan.instance && { cpus: plan.instance.cpus, memoryMb: plan.instance.memoryMb });
    // The web process's PATH additions come first in the program path, each once.
    expect(lowered.programPath.slice(0, lowered.web?.pathPrepend.length)).toEqual([...new Set(lowered.web?.pathPrepend)]);
    expect(new Set(lowered.programPath).size).toBe(lowered.programPath.length);
  });

  it.each(CASES)('%s: is pure: the plan is left as it was, and lowering again gives the same', (_, plan, bindings) => {
    const before = structuredClone(plan);
    const once = lowerPlan(plan, bindings);
    expect(plan).toEqual(before);
    expect(lowerPlan(before, bindings)).toEqual(once);
  });
});

describe('lowering rules', () => {
  const express = PLANS.find(([name]) => name === 'node/express.json')?.[1] as RunPlan;
  const web = express.processes[0] as RunPlan['processes'][number];

  it.each([
    ['.', '/srv/app'],
    ['sub/dir', '/srv/app/sub/dir'],
    ['sub/./dir/', '/srv/app/sub/dir'],
    ['/opt/ruby/bin', '/opt/ruby/bin'],
    ['${RUN_DIR}/x', '/run/r/x'],
  ])('a cwd or PATH addition %j is %j', (given, expected) => {
    const plan = { ...express, processes: [{ ...web, cwd: given, pathPrepend: [given] }] };
    const [proc] = lowerPlan(plan, { APP_HOME: '/srv/app', RUN_DIR: '/run/r' }).processes;
    expect([proc?.cwd, proc?.pathPrepend]).toEqual([expected, [expected]]);
  });

  it('a placeholder the executor does not bind is RUNPLAN_E_PLAN_INVALID naming it', () => {
    const plan = { ...express, processes: [{ ...web, env: { SOCK: '${RUN_DIR}/puma.sock' } }] };
    expect(() => lowerPlan(plan, { APP_HOME: '/srv/app' })).toThrowError(expect.objectContaining({ code: CoreErrors.PLAN_INVALID.code, message: expect.stringContaining('${RUN_DIR}') }));
  });

  it.each([
    ['the deployment over what is inherited, the plan’s own over both', { A: 'i', B: 'i' }, { B: 'd', C: 'd' }, { C: 'o' }, [], { A: 'i', B: 'd', C: 'o' }],
    ['PATH additions before the PATH that results', { PATH: '/usr/bin' }, {}, {}, ['/a', '/b'], { PATH: '/a:/b:/usr/bin' }],
    ['PATH additions before a PATH the deployment sets', { PATH: '/usr/bin' }, { PATH: '/d' }, {}, ['/a'], { PATH: '/a:/d' }],
    ['no empty entry (the current directory) when nothing is inherited', {}, {}, {}, ['/a'], { PATH: '/a' }],
    ['PATH left alone without additions', { PATH: '/usr/bin' }, {}, { X: '1' }, [], { PATH: '/usr/bin', X: '1' }],
  ] as const)('mergeEnvironment: %s', (_, inherited, deployment, env, pathPrepend, expected) => {
    expect(mergeEnvironment(inherited, deployment, { env, pathPrepend })).toEqual(expected);
  });

  it('assemblePath: the directories, in order, then what is inherited, never an empty entry', () => {
    const dir = fc.stringMatching(/^\/[a-z0-9/ .-]{0,12}$/);
    fc.assert(
      fc.property(fc.array(dir, { maxLength: 4 }), fc.option(fc.array(dir, { maxLength: 3 }).map((d) => d.join(':'))), (dirs, inherited) => {
        const path = assemblePath(dirs, inherited ?? undefined);
        expect(path.split(':').slice(0, dirs.length)).toEqual(dirs);
        if (inherited) expect(path.endsWith(inherited)).toBe(true);
        if (path !== '') expect(path.split(':')).not.toContain('');
      }),
    );
  });
});
