import { describe, it } from 'vitest';
import { checkFixture, listFixtures, type Fixture } from '../helpers/fixtures.js';

/**
 * Rule 8 for every build tool: each tool's fixture is deployed under the four
 * cases of the NOTES table, and the running app says whether its devDependency
 * (is-number) really resolves. The case with neither variable is the fixture's
 * own expect.json, deployed by node-fixtures.test.ts.
 */
const CASES: readonly { name: string; env: Record<string, string>; installed: boolean }[] = [
  { name: 'CC_NODE_DEV_DEPENDENCIES=install with NODE_ENV=production', env: { CC_NODE_DEV_DEPENDENCIES: 'install', NODE_ENV: 'production' }, installed: true },
  { name: 'CC_NODE_DEV_DEPENDENCIES=ignore without NODE_ENV', env: { CC_NODE_DEV_DEPENDENCIES: 'ignore' }, installed: false },
  { name: 'NODE_ENV=production alone', env: { NODE_ENV: 'production' }, installed: false },
];
const TOOLS = ['tool-npm', 'tool-npm-ci', 'tool-yarn', 'tool-yarn2', 'tool-yarn-berry', 'tool-pnpm', 'tool-bun'];

describe('development dependencies with every build tool (rule 8)', () => {
  const fixtures = listFixtures('node').filter((f) => TOOLS.includes(f.name));
  for (const fixture of fixtures) {
    for (const c of CASES) {
      it(`${fixture.name}: ${c.name} → devDependencies ${c.installed ? 'installed' : 'not installed'}`, async () => {
        const variant: Fixture = {
          ...fixture,
          expect: {
            ...fixture.expect,
            env: { ...fixture.expect.env, ...c.env },
            output: [],
            requests: [{ path: '/', status: 200, json: { devDependency: c.installed, prodDependency: true, installedBy: fixture.expect.requests?.[0]?.json?.installedBy } }],
          },
        };
        await checkFixture(variant);
      });
    }
  }
});
