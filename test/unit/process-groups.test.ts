import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processesApart } from '../../src/executor/process-groups.js';
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
