import { describe, expect, it } from 'vitest';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { MemorySource } from '../../src/files/memory-source.js';
import type { BuildStep } from '../../src/plan/schema.js';
import { diffPlans } from '../../src/plan/diff.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { resolveHooks } from '../../src/planning/resolve-hooks.js';
import { resolveWorkers } from '../../src/planning/resolve-workers.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';

const step = (name: string): BuildStep => ({ name, description: name, run: { kind: 'exec', argv: [name] }, cwd: '.', env: {}, pathPrepend: [], layer: null });
const STEPS = ['runtime', 'install', 'build', 'check'].map(step);
const COMMANDS = { env: { GEM_HOME: '${APP_HOME}/gems' }, pathPrepend: ['.runplan/bin'] };
const vars = (o: Record<string, string>) => new Map(Object.entries(o));
const names = (steps: readonly BuildStep[]) => steps.map((s) => s.name);

describe('build and run hooks (resolveHooks)', () => {
  it('puts CC_PRE_BUILD_HOOK before the dependencies and CC_POST_BUILD_HOOK before the checks, as shell steps with the commands environment', () => {
    const r = resolveHooks(vars({ CC_PRE_BUILD_HOOK: './fetch.sh', CC_POST_BUILD_HOOK: 'npm run build' }), STEPS, { dependencies: 'install', checks: 'check' }, COMMANDS);
    expect(names(r.steps)).toEqual(['runtime', 'pre-build-hook', 'install', 'build', 'post-build-hook', 'check']);
    const pre = r.steps[1] as BuildStep;
    expect(pre.run).toEqual({ kind: 'shell', script: './fetch.sh' });
    expect(pre.env).toEqual(COMMANDS.env);
    expect(pre.pathPrepend).toEqual(COMMANDS.pathPrepend);
    expect(pre.onFailure?.[0]).toMatchObject({ when: { kind: 'any' }, error: { code: CoreErrors.HOOK_FAILED.code, kind: 'deployment', variable: 'CC_PRE_BUILD_HOOK' } });
    expect(r.runHooks).toBeUndefined();
    expect(r.decisions.map((d) => [d.id, d.source, d.requested])).toEqual([
      ['hooks.pre-build', 'env CC_PRE_BUILD_HOOK', './fetch.sh'],
      ['hooks.post-build', 'env CC_POST_BUILD_HOOK', 'npm run build'],
    ]);
    expect(r.decisions[0]?.resolved).toBe('build step "pre-build-hook", before step "install"');
  });

  it('without hook points: pre-build first, post-build last; empty values count as unset', () => {
    const r = resolveHooks(vars({ CC_PRE_BUILD_HOOK: 'a', CC_POST_BUILD_HOOK: 'b', CC_PRE_RUN_HOOK: '  ' }), STEPS, {}, COMMANDS);
    expect(names(r.steps)).toEqual(['pre-build-hook', 'runtime', 'install', 'build', 'check', 'post-build-hook']);
    expect(r.runHooks).toBeUndefined();
    expect(names(resolveHooks(vars({}), STEPS, {}, COMMANDS).steps)).toEqual(names(STEPS));
  });

  it('puts the run-phase hooks in runHooks, never among the build steps', () => {
    const r = resolveHooks(vars({ CC_PRE_RUN_HOOK: 'migrate', CC_RUN_SUCCEEDED_HOOK: 'notify ok', CC_RUN_FAILED_HOOK: 'notify ko' }), STEPS, {}, COMMANDS);
    expect(names(r.steps)).toEqual(names(STEPS));
    expect(r.runHooks?.preRun.map((s) => [s.name, s.run])).toEqual([['pre-run-hook', { kind: 'shell', script: 'migrate' }]]);
    expect(r.runHooks?.succeeded.map((s) => s.onFailure?.[0]?.error.variable)).toEqual(['CC_RUN_SUCCEEDED_HOOK']);
    expect(r.runHooks?.failed.map((s) => s.name)).toEqual(['run-failed-hook']);
    expect(r.decisions.map((d) => d.id)).toEqual(['hooks.pre-run', 'hooks.run-succeeded', 'hooks.run-failed']);
  });

  it('refuses a hook point that names no step (a buildpack bug)', () => {
    expect(() => resolveHooks(vars({ CC_PRE_BUILD_HOOK: 'a' }), STEPS, { dependencies: 'nope' }, COMMANDS)).toThrowError(expect.objectContaining({ code: CoreErrors.PLAN_INVALID.code }));
  });
});

describe('workers (resolveWorkers)', () => {
  it('CC_WORKER_COMMAND first, then CC_WORKER_COMMAND_<n> by n numerically, as shell processes beside web', () => {
    const r = resolveWorkers(vars({ CC_WORKER_COMMAND_10: 'ten', CC_WORKER_COMMAND_2: 'two', CC_WORKER_COMMAND: 'plain', CC_WORKER_COMMAND_3: '' }), COMMANDS, new Set(['web']));
    expect(r.processes.map((p) => [p.name, p.role, p.command, p.port])).toEqual([
      ['worker', 'worker', { kind: 'shell', script: 'plain' }, null],
      ['worker-2', 'worker', { kind: 'shell', script: 'two' }, null],
      ['worker-10', 'worker', { kind: 'shell', script: 'ten' }, null],
    ]);
    expect(r.processes[0]?.env).toEqual(COMMANDS.env);
    expect(r.processes[0]?.pathPrepend).toEqual(COMMANDS.pathPrepend);
    expect(r.decisions.map((d) => d.id)).toEqual(['workers', 'workers.restart']);
  });

  it('restarts on failure after 1 s by default, as a fixed delay', () => {
    const [w] = resolveWorkers(vars({ CC_WORKER_COMMAND: 'x' }), COMMANDS, new Set()).processes;
    expect(w?.restart).toEqual({ policy: 'on-failure', initialDelayMs: 1000, maxDelayMs: 1000, resetAfterMs: 30000 });
  });

  it.each([
    ['always', 'always'],
    ['on-failure', 'on-failure'],
    ['no', 'never'],
  ])('CC_WORKER_RESTART=%s is the policy %s; CC_WORKER_RESTART_DELAY sets the delay', (value, policy) => {
    const r = resolveWorkers(vars({ CC_WORKER_COMMAND: 'x', CC_WORKER_RESTART: value, CC_WORKER_RESTART_DELAY: '7' }), COMMANDS, new Set());
    expect(r.processes[0]?.restart).toMatchObject({ policy, initialDelayMs: 7000, maxDelayMs: 7000 });
    expect(r.decisions[1]).toMatchObject({ source: 'env CC_WORKER_RESTART, env CC_WORKER_RESTART_DELAY', resolved: `${policy} after 7 s` });
  });

  it('says when a restart setting applies to no worker', () => {
    const r = resolveWorkers(vars({ CC_WORKER_RESTART: 'always' }), COMMANDS, new Set());
    expect(r.processes).toEqual([]);
    expect(r.decisions.map((d) => d.reason)).toEqual([expect.stringContaining('applies to no process')]);
    expect(resolveWorkers(vars({}), COMMANDS, new Set()).decisions).toEqual([]);
  });

  it.each(['CC_WORKER_COMMAND_abc', 'CC_WORKER_COMMAND_1_OLD', 'CC_WORKER_COMMAND_'])('refuses %s (even empty) rather than ignoring it', (name) => {
    for (const value of ['run.sh', '']) {
      expect(() => resolveWorkers(vars({ [name]: value }), COMMANDS, new Set())).toThrowError(
        expect.objectContaining({ code: CoreErrors.WORKER_COMMAND_NAME_INVALID.code, kind: 'input', variable: name }),
      );
    }
  });

  it.each(['sometimes', 'never', 'Always', 'on_failure'])('refuses CC_WORKER_RESTART=%s naming the accepted values', (value) => {
    expect(() => resolveWorkers(vars({ CC_WORKER_COMMAND: 'x', CC_WORKER_RESTART: value }), COMMANDS, new Set())).toThrowError(
      expect.objectContaining({ code: CoreErrors.WORKER_RESTART_INVALID.code, variable: 'CC_WORKER_RESTART', reason: expect.stringContaining('always, on-failure (the default) or no') }),
    );
  });

  it.each(['1s', '-1', '1.5', '3601', 'abc', '999999'])('refuses CC_WORKER_RESTART_DELAY=%s', (value) => {
    expect(() => resolveWorkers(vars({ CC_WORKER_COMMAND: 'x', CC_WORKER_RESTART_DELAY: value }), COMMANDS, new Set())).toThrowError(
      expect.objectContaining({ code: CoreErrors.WORKER_RESTART_DELAY_INVALID.code, variable: 'CC_WORKER_RESTART_DELAY' }),
    );
  });

  it('accepts a delay of 0 and of 3600 s', () => {
    expect(resolveWorkers(vars({ CC_WORKER_COMMAND: 'x', CC_WORKER_RESTART_DELAY: '0' }), COMMANDS, new Set()).processes[0]?.restart.initialDelayMs).toBe(0);
    expect(resolveWorkers(vars({ CC_WORKER_COMMAND: 'x', CC_WORKER_RESTART_DELAY: '3600' }), COMMANDS, new Set()).processes[0]?.restart.initialDelayMs).toBe(3_600_000);
  });
});

/** One application of each type, with every hook and two workers: where the core puts them among each buildpack's steps. */
const APPS: Record<string, Record<string, string>> = {
  node: { 'package.json': JSON.stringify({ name: 'x', main: 'server.js', dependencies: { ms: '2.1.3' } }), 'server.js': '', '.gitignore': 'node_modules\n' },
  ruby: { Gemfile: "ruby '3.3.6'\ngem 'puma'\n", 'Gemfile.lock': 'GEM\n  specs:\n    puma (6.6.0)\n\nDEPENDENCIES\n  puma\n', 'config.ru': 'run ->(e) { [200, {}, []] }\n', 'public/robots.txt': '' },
  play1: { 'conf/application.conf': 'application.name=demo\n', 'conf/routes': 'GET / Application.index\n' },
};
const HOOK_ENV = {
  CC_PRE_BUILD_HOOK: 'echo pre',
  CC_POST_BUILD_HOOK: 'echo post',
  CC_PRE_RUN_HOOK: 'echo run',
  CC_RUN_SUCCEEDED_HOOK: 'echo ok',
  CC_RUN_FAILED_HOOK: 'echo ko',
  CC_WORKER_COMMAND: 'bundle exec rake jobs:work',
  CC_WORKER_COMMAND_1: './worker.sh',
  CC_WORKER_RESTART: 'always',
};

describe('hooks and workers in the plan of every type', () => {
  it.each([
    ['node', ['runtime', 'npm', 'pre-build-hook', 'install', 'native-modules', 'post-build-hook', 'verify-main']],
    ['ruby', ['pre-build-hook', 'bundle-install', 'post-build-hook', 'served-files-check', 'nginx-check']],
    ['play1', ['java', 'python', 'framework', 'pre-build-hook', 'deps', 'precompile', 'post-build-hook', 'precompile-check']],
  ])('%s', async (type, steps) => {
    const env = type === 'ruby' ? { ...HOOK_ENV, STATIC_FILES_PATH: '/public/', STATIC_URL_PREFIX: '/static/' } : HOOK_ENV;
    const { plan } = await createPlan({
      registry: testRegistry(),
      inventory: TEST_PLAN_INVENTORY,
      files: new MemorySource(APPS[type] as Record<string, string>),
      appDir: '/srv/app',
      env: { application: env },
    });
    expect(names(plan.build.steps)).toEqual(steps);
    expect(plan.runHooks && Object.fromEntries(Object.entries(plan.runHooks).map(([k, v]) => [k, names(v)]))).toEqual({
      preRun: ['pre-run-hook'],
      succeeded: ['run-succeeded-hook'],
      failed: ['run-failed-hook'],
    });
    const workers = plan.processes.filter((p) => p.name.startsWith('worker'));
    expect(workers.map((p) => [p.name, p.restart.policy])).toEqual([
      ['worker', 'always'],
      ['worker-1', 'always'],
    ]);
    // Workers and hooks run with the environment the application's own commands get.
    const reference = type === 'ruby' ? plan.processes.find((p) => p.name === 'puma') : plan.processes.find((p) => p.role === 'web');
    for (const p of [...workers, ...plan.runHooks!.preRun]) {
      expect(p.env).toEqual(reference?.env);
      expect(p.pathPrepend).toEqual(reference?.pathPrepend);
    }
    expect(plan.decisions.filter((d) => d.id.startsWith('hooks.') || d.id.startsWith('workers')).map((d) => d.id)).toEqual([
      'hooks.pre-build',
      'hooks.post-build',
      'hooks.pre-run',
      'hooks.run-succeeded',
      'hooks.run-failed',
      'workers',
      'workers.restart',
    ]);
  });

  it('leaves a plan without hooks or workers as it was (no runHooks)', async () => {
    const { plan } = await createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: new MemorySource(APPS.node as Record<string, string>), appDir: '/srv/app' });
    expect(plan.runHooks).toBeUndefined();
    expect('runHooks' in plan).toBe(false);
    expect(plan.processes.map((p) => p.name)).toEqual(['web']);
  });
});

describe('plan differences of hooks and workers', () => {
  it('shows an added or changed run hook and an added worker (runplan diff)', async () => {
    const plan = async (application: Record<string, string>) =>
      (await createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: new MemorySource(APPS.node as Record<string, string>), appDir: '/srv/app', env: { application } })).plan;
    const before = await plan({ CC_PRE_RUN_HOOK: 'echo one' });
    const after = await plan({ CC_PRE_RUN_HOOK: 'echo two', CC_RUN_FAILED_HOOK: 'echo ko', CC_WORKER_COMMAND: 'node worker.js' });
    const changes = diffPlans(before, after);
    expect(changes).toContainEqual(
      expect.objectContaining({
        area: 'run-hook',
        subject: 'pre-run-hook',
        change: 'changed',
        before: 'echo one; env NODE_OPTIONS, npm_config_update_notifier, npm_package_config_node_gyp_nodedir',
        after: 'echo two; env NODE_OPTIONS, npm_config_update_notifier, npm_package_config_node_gyp_nodedir',
      }),
    );
    expect(changes).toContainEqual(expect.objectContaining({ area: 'run-hook', subject: 'run-failed-hook', change: 'added' }));
    expect(changes).toContainEqual(
      expect.objectContaining({
        area: 'process',
        subject: 'worker',
        change: 'added',
        after: 'node worker.js; restart on-failure; env NODE_OPTIONS, npm_config_update_notifier, npm_package_config_node_gyp_nodedir',
      }),
    );
  });
});
