import { defineConfig } from 'vitest/config';

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
  },
});
