import type { PlanContribution } from '../../src/buildpack/contract.js';
import { DEFAULT_RESTART } from '../../src/plan/restart-policy.js';

/** The smallest valid part of a plan a buildpack can return: one web process running `argv`, nothing to build. */
export function webOnlyContribution(argv: readonly string[], port: number): PlanContribution {
  return {
    runtimes: [],
    decisions: [],
    steps: [],
    layers: [],
    processes: [{ name: 'web', role: 'web', command: { kind: 'exec', argv: [...argv] }, cwd: '.', env: {}, pathPrepend: [], port, restart: DEFAULT_RESTART, stopGraceMs: 1000 }],
    files: [],
    warnings: [],
  };
}
