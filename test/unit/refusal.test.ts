import { lowerPlan } from '../../src/lowering/lower.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMAGE_BINDINGS, renderEntrypoint } from '../../src/engines/image/scripts.js';
import { REFUSAL_PREFIX, refusalError, refusalIn } from '../../src/executor/refusal.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { parsePlan } from '../../src/planning/create-plan.js';
import { ROOT } from '../helpers/cli.js';

const golden = (path: string): RunPlan => parsePlan(JSON.parse(readFileSync(join(ROOT, 'test', 'golden', path), 'utf8')));

/**
 * An image's entrypoint refuses to start a process when a pre-run hook fails or
 * outlives the step timeout; the engine reads the refusal back from the
 * container's last lines and fails the deployment with the local runner's error.
 */
describe("an entrypoint's refusal", () => {
  it('is the last refusal line among the last lines, and nothing when there is none', () => {
    expect(refusalIn(['starting', `${REFUSAL_PREFIX}RUNPLAN_E_HOOK_FAILED: the pre-run hook failed`, 'npm notice'])).toEqual({
      code: 'RUNPLAN_E_HOOK_FAILED',
      message: 'the pre-run hook failed',
    });
    expect(refusalIn(['runplan: RUNPLAN_E_HOOK_FAILED: said by the application, not a refusal'])).toBeUndefined();
    expect(refusalIn([])).toBeUndefined();
  });

  it("becomes the hook's own coded error (its variable and fix), or the core error of its code", () => {
    const plan = golden('node/hook-run-failed--pre-run-timeout.json');
    const failed = refusalError({ code: 'RUNPLAN_E_HOOK_FAILED', message: 'the pre-run hook failed.' }, plan);
    expect(failed).toMatchObject({ code: 'RUNPLAN_E_HOOK_FAILED', variable: 'CC_PRE_RUN_HOOK', kind: 'deployment' });
    const timedOut = refusalError({ code: 'RUNPLAN_E_BUILD_STEP_TIMEOUT', message: 'step "pre-run-hook" did not finish within 15 s.' }, plan);
    expect(timedOut).toMatchObject({ code: 'RUNPLAN_E_BUILD_STEP_TIMEOUT', message: 'RUNPLAN_E_BUILD_STEP_TIMEOUT: step "pre-run-hook" did not finish within 15 s.' });
  });

  it('is what the entrypoint prints: the refuse function writes the prefix the engine reads', () => {
    const script = renderEntrypoint(lowerPlan(golden('node/hook-run-failed--pre-run-timeout.json'), IMAGE_BINDINGS), 'sha256:x', { hookTimeoutMs: 15_000 });
    expect(script).toContain(`refuse() { echo "${REFUSAL_PREFIX}$1: $2" >&2; exit 1; }`);
    expect(script).toContain('timeout -k 5 15 /bin/sh -c');
  });
});
