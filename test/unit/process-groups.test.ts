import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unhonouredRestartDelays } from '../../src/engines/restart-delays.js';
import { processesApart } from '../../src/lowering/process-groups.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { parsePlan } from '../../src/planning/create-plan.js';
import { ROOT } from '../helpers/cli.js';

const golden = (path: string): RunPlan => parsePlan(JSON.parse(readFileSync(join(ROOT, 'test', 'golden', path), 'utf8')));

describe('processes an engine runs apart (RUNPLAN_W_ENGINE_PROCESSES_APART)', () => {
  it('names the containers of each process group, or of each process, and says nothing of a plan that runs in one', () => {
    const sidekiq = golden('ruby/rails-sidekiq.json');
    const [groups] = processesApart(sidekiq, 'Swarm', 'groups');
    expect(groups).toMatchObject({ code: 'RUNPLAN_W_ENGINE_PROCESSES_APART' });
    expect(groups?.message).toContain('Swarm runs puma+web, sidekiq in containers of their own');
    expect(processesApart(sidekiq, 'Docker', 'processes')[0]?.message).toContain('Docker runs puma, web, sidekiq in containers of their own');
    expect(processesApart(golden('node/default-lts.json'), 'Docker', 'processes')).toEqual([]);
  });
});

describe("a worker's restart delay an engine does not wait (RUNPLAN_W_ENGINE_RESTART_DELAY)", () => {
  it('names each worker restarted with its planned delay, and leaves out workers never restarted and those another warning names', () => {
    const restart = golden('node/worker-restart.json');
    const [delay] = unhonouredRestartDelays(restart, 'Docker', 'its own back-off');
    expect(delay).toMatchObject({ code: 'RUNPLAN_W_ENGINE_RESTART_DELAY', variable: 'CC_WORKER_RESTART_DELAY' });
    expect(delay?.message).toBe("Docker restarts a worker that exits with its own back-off, not after the plan's restart delay: worker (1 s).");
    // The workers fixture's are on-failure: a Kubernetes engine names them in RUNPLAN_W_K8S_WORKER_RESTART instead.
    expect(unhonouredRestartDelays(golden('node/workers.json'), 'podman', 'no wait', ['always'])).toEqual([]);
    expect(unhonouredRestartDelays(golden('node/workers.json'), 'Docker', 'its own back-off')[0]?.message).toContain('worker (1 s), worker-2 (1 s), worker-10 (1 s)');
    expect(unhonouredRestartDelays(golden('node/default-lts.json'), 'Docker', 'its own back-off')).toEqual([]);
  });
});
