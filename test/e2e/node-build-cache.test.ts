import { describe, expect, it } from 'vitest';
import { checkFixture, listFixtures, prepareFixture, type Fixture } from '../helpers/fixtures.js';

const REUSED = '[install] reused cached layer node_modules';

/**
 * The node_modules layer: a rebuild of the unchanged app reuses it (and runs
 * scripts.install again for what it builds outside node_modules); a change to
 * any input of its key rebuilds it.
 */
describe('node build cache', () => {
  it('reuses node_modules for an unchanged app and rebuilds when a key input changes', async () => {
    const fixture = await prepareFixture(listFixtures('node').find((f) => f.name === 'build-cache') as Fixture);
    const variant = (env: Record<string, string>, json: Record<string, unknown>): Fixture => ({
      ...fixture,
      expect: {
        ...fixture.expect,
        env: { ...fixture.expect.env, ...env },
        requests: [
          { path: '/', status: 200, json },
          { path: '/asset', status: 200, json: { asset: 'built by scripts.install' } },
        ],
      },
    });

    // Each fixture is built twice (build --plan, then run --plan): the first build fills the layer.
    const first = await checkFixture(variant({}, { installScript: 'install by npm', devDependency: true }));
    expect(first.build).not.toContain(REUSED);
    expect(first.build).toContain('[install] added');

    // Unchanged: the layer is linked from the cache and the install script runs on its own.
    expect(first.run).toContain(REUSED);
    expect(first.run).toContain('==> step install-script: npm run install');

    // Each input of the key rebuilds: the development-dependency mode, the Node version, the build tool.
    for (const [env, json] of [
      [{ CC_NODE_DEV_DEPENDENCIES: 'ignore' }, { devDependency: false }],
      [{ CC_NODE_VERSION: '22.23.3' }, { node: 'v22.23.3' }],
      [{ CC_NODE_BUILD_TOOL: 'npm-ci' }, { installedBy: 'npm' }],
    ] as const) {
      const { build } = await checkFixture(variant(env, { ...json, installScript: 'install by npm' }));
      expect(build, JSON.stringify(env)).not.toContain(REUSED);
    }
  });
});
