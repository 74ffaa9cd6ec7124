import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest test files first (their seconds in test/durations.json, from a full
 * run: node scripts/test-durations.mjs), so that the two workers finish together
 * instead of one running the last long file alone; files not listed come after, in
 * vitest's own order. On a machine that ran the suite before, vitest's cached
 * durations win.
 */
class LongestFirst extends BaseSequencer {
  private readonly seconds = JSON.parse(readFileSync(new URL('test/durations.json', import.meta.url), 'utf8')) as Record<string, number>;

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const cost = (spec: TestSpecification) => {
      const key = relative(this.ctx.config.root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${key}`)?.duration;
      return cached === undefined ? (this.seconds[key] ?? 0) : cached / 1000;
    };
    // Stable: files of equal cost keep vitest's order.
    return ordered
      .map((spec, index) => ({ spec, index, cost: cost(spec) }))
      .sort((a, b) => b.cost - a.cost || a.index - b.index)
      .map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    // test/cluster/ needs a Kubernetes cluster: it runs when KUBECONFIG names one (the global
    // setup reports it as not run otherwise); `npm run test:cluster` runs it alone.
    include: process.env.RUNPLAN_TEST_CLUSTER === '1' ? ['test/cluster/**/*.test.ts'] : ['test/**/*.test.ts', 'host/test/**/*.test.ts'],
    // RUNPLAN_TEST_ENGINE=off: a focused run without a Docker engine (the setup starts none, test/engines/ is left out).
    exclude: [
      'node_modules/**',
      ...(process.env.RUNPLAN_TEST_CLUSTER === '1' || process.env.KUBECONFIG ? [] : ['test/cluster/**']),
      ...(process.env.RUNPLAN_TEST_ENGINE === 'off' ? ['test/engines/**'] : []),
    ],
    globalSetup: ['test/global-setup.ts'],
    // Removes each test file's temporaries after its own hooks have run.
    setupFiles: ['test/setup/remove-temporaries.ts'],
    // Builds and deployments run real package managers and processes.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Two cores: more parallel builds only make each slower.
    maxWorkers: 2,
    reporters: ['default'],
    sequence: { sequencer: LongestFirst },
  },
});
