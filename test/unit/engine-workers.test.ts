import { lowerPlan } from '../../src/lowering/lower.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerRestart } from '../../src/engines/docker-runner.js';
import { IMAGE_BINDINGS, renderEntrypoint } from '../../src/engines/image/scripts.js';
import { kubernetesManifests } from '../../src/engines/entries/kubernetes.js';
import { createArgs, processServices } from '../../src/engines/swarm/services.js';
import { SwarmExecutor } from '../../src/engines/swarm.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { parsePlan } from '../../src/planning/create-plan.js';
import { resolveHooks } from '../../src/planning/resolve-hooks.js';
import { resolveWorkers } from '../../src/planning/resolve-workers.js';
import { ROOT } from '../helpers/cli.js';

const express = parsePlan(JSON.parse(readFileSync(join(ROOT, 'test', 'golden', 'node', 'default-lts.json'), 'utf8')));
const web = express.processes[0]!;

/** The golden express plan with the workers (and hooks) these variables ask for, as createPlan adds them. */
function withWorkers(variables: Record<string, string>): RunPlan {
  const vars = new Map(Object.entries(variables));
  const commands = { env: web.env, pathPrepend: web.pathPrepend };
  const { processes } = resolveWorkers(vars, commands, new Set(['web']));
  const { runHooks } = resolveHooks(vars, express.build.steps, {}, commands);
  return { ...express, processes: [...express.processes, ...processes], ...(runHooks ? { runHooks } : {}) };
}

const instance = { cpus: 1, memoryMb: 2048 };

describe('worker restart policies in the engines', () => {
  it('Docker: --restart with the same condition (always, on-failure, no)', () => {
    const policies = ['always', 'on-failure', 'no'].map((v) => withWorkers({ CC_WORKER_COMMAND: 'x', CC_WORKER_RESTART: v }).processes[1]!.restart);
    expect(policies.map(dockerRestart)).toEqual(['always', 'on-failure', 'no']);
  });

  it('Swarm: each worker is a service whose restart condition and delay are the plan’s', () => {
    for (const [value, condition] of [
      ['always', 'any'],
      ['on-failure', 'on-failure'],
      ['no', 'none'],
    ] as const) {
      const plan = withWorkers({ CC_WORKER_COMMAND: 'x', CC_WORKER_COMMAND_2: 'y', CC_WORKER_RESTART: value, CC_WORKER_RESTART_DELAY: '3' });
      const services = processServices({ app: 'shop', lowered: lowerPlan(plan, IMAGE_BINDINGS), image: 'runplan/shop:1', imageId: 'sha256:1', replicas: 2, secrets: {} });
      expect(services.map((s) => [s.name, s.args, s.replicas, s.restart])).toEqual([
        ['shop-web', ['web'], 2, { condition: 'any', delayMs: web.restart.initialDelayMs }],
        ['shop-worker', ['worker'], 1, { condition, delayMs: 3000 }],
        ['shop-worker-2', ['worker-2'], 1, { condition, delayMs: 3000 }],
      ]);
      expect(createArgs(services[1]!, 'shop-net', false).join(' ')).toContain(`--restart-condition ${condition} --restart-delay 3000ms`);
      // Swarm waits that delay after every exit, as the plan's fixed delay asks: only the processes apart are declared.
      expect(new SwarmExecutor({ appDir: '/nowhere' } as never).unhonoured(plan).map((w) => w.code)).toEqual(['RUNPLAN_W_ENGINE_PROCESSES_APART']);
    }
  });

  it('Kubernetes: a Deployment per worker (restartPolicy Always), with a warning when the plan asks for on-failure or no, or for a restart delay', () => {
    const plan = withWorkers({ CC_WORKER_COMMAND: 'x', CC_WORKER_COMMAND_1: 'y' });
    const manifests = kubernetesManifests(plan, { image: 'shop:1', appName: 'shop', instance });
    const deployments = manifests.deployments as unknown as {
      metadata: { name: string };
      spec: { replicas: number; template: { spec: { restartPolicy?: string; containers: { args: string[] }[] } } };
    }[];
    expect(deployments.map((d) => [d.metadata.name, d.spec.replicas, d.spec.template.spec.containers.map((c) => c.args)])).toEqual([
      ['shop-web', 2, [['web']]],
      ['shop-worker', 1, [['worker']]],
      ['shop-worker-1', 1, [['worker-1']]],
    ]);
    // A Deployment's Pods allow nothing but Always (the default): nothing else is written.
    expect(deployments.every((d) => d.spec.template.spec.restartPolicy === undefined)).toBe(true);
    expect(manifests.warnings.map((w) => [w.code, w.variable])).toEqual([
      ['RUNPLAN_W_K8S_WORKER_RESTART', 'CC_WORKER_RESTART'],
      ['RUNPLAN_W_K8S_WORKER_RESTART', 'CC_WORKER_RESTART'],
    ]);
    expect(manifests.warnings[0]!.message).toContain('process "worker" has restart policy on-failure (1 s)');
    expect(kubernetesManifests(withWorkers({ CC_WORKER_COMMAND: 'x', CC_WORKER_RESTART: 'no' }), { image: 'shop:1', appName: 'shop', instance }).warnings[0]!.message).toContain('restart policy no');
    // Always is honoured, its delay is not: Kubernetes' own back-off.
    const always = kubernetesManifests(withWorkers({ CC_WORKER_COMMAND: 'x', CC_WORKER_RESTART: 'always' }), { image: 'shop:1', appName: 'shop', instance }).warnings;
    expect(always.map((w) => [w.code, w.variable])).toEqual([['RUNPLAN_W_ENGINE_RESTART_DELAY', 'CC_WORKER_RESTART_DELAY']]);
    expect(always[0]?.message).toContain('Kubernetes restarts a worker that exits with its own back-off (10 s, doubling up to 5 min)');
  });
});

describe('workers and the pre-run hook in the image entrypoint', () => {
  it('starts every worker by name, with the environment and PATH of the application’s commands', () => {
    const script = renderEntrypoint(lowerPlan(withWorkers({ CC_WORKER_COMMAND: 'node worker.js', CC_WORKER_COMMAND_2: 'exec ./other' }), IMAGE_BINDINGS), 'sha256:x');
    expect(script).toContain(`  worker)\n    write_files\n    pre_run\n    cd /app\n    export NODE_OPTIONS=`);
    expect(script).toContain('exec $(init) /bin/sh -c \'node worker.js\' "$@"');
    expect(script).toContain('  worker-2)\n');
    expect(script).toContain('exec $(init) /bin/sh -c \'exec ./other\' "$@"');
    expect(script).toContain('export PATH=/app/.runplan/bin:"$PATH"');
  });

  it("runs the pre-run hook before each process (once for a group) within the step timeout, and refuses the start with the local runner's code when it fails", () => {
    const script = renderEntrypoint(lowerPlan(withWorkers({ CC_WORKER_COMMAND: 'x', CC_PRE_RUN_HOOK: 'node migrate.js' }), IMAGE_BINDINGS), 'sha256:x', { hookTimeoutMs: 15_000 });
    const preRun = script.slice(script.indexOf('pre_run() {'), script.indexOf('\n}\n', script.indexOf('pre_run() {')));
    expect(preRun).toContain("timeout -k 5 15 /bin/sh -c 'cd /app; export NODE_OPTIONS=");
    expect(preRun).toContain("/bin/sh -c '\\''node migrate.js'\\''' || status=$?");
    expect(preRun).toContain('124|137) refuse RUNPLAN_E_BUILD_STEP_TIMEOUT \'step "pre-run-hook" (node migrate.js) did not finish within 15 s');
    expect(preRun).toContain("*) refuse RUNPLAN_E_HOOK_FAILED 'the pre-run hook (CC_PRE_RUN_HOOK, run before the processes start) failed");
    expect(script).toContain('refuse() { echo "runplan: refused: $1: $2" >&2; exit 1; }');
    expect(script.match(/\n {4}pre_run\n/g)).toHaveLength(2);
    expect(script).toContain('  pre_run\n  for helper in "$@"; do RUNPLAN_PRE_RUN_DONE=1 "$0" "$helper" & done');
    // Without a pre-run hook the function does nothing.
    const none = renderEntrypoint(lowerPlan(express, IMAGE_BINDINGS), 'sha256:x');
    expect(none).toContain('pre_run() {\n  if [ -n "${RUNPLAN_PRE_RUN_DONE:-}" ]; then unset RUNPLAN_PRE_RUN_DONE; return 0; fi\n  :\n}');
  });

  it('runs a run-succeeded or run-failed hook by name (`entrypoint --hook NAME`), as an engine does once the outcome is known', () => {
    const script = renderEntrypoint(lowerPlan(withWorkers({ CC_RUN_SUCCEEDED_HOOK: 'curl -fsS "$NOTIFY_URL"', CC_RUN_FAILED_HOOK: 'echo failed' }), IMAGE_BINDINGS), 'sha256:x');
    expect(script).toContain('if [ "${1:-}" = --hook ]; then\n  case "${2:-}" in\n    run-succeeded-hook) ( cd /app;');
    expect(script).toContain(`/bin/sh -c 'curl -fsS "$NOTIFY_URL"' ) || { echo 'runplan: RUNPLAN_E_HOOK_FAILED: the run-succeeded hook (CC_RUN_SUCCEEDED_HOOK`);
    expect(script).toContain('    run-failed-hook) ( cd /app;');
    expect(script).toContain('*) echo "runplan: the plan has no run hook named ${2:-}" >&2; exit 2 ;;');
  });
});
