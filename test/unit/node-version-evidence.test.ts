import { describe, expect, it } from 'vitest';
import { devEnginesEvidence, ignoredVersionFiles, miseNode, toolVersionsNode } from '../../buildpacks/node/version-evidence.js';
import { createNodeBuildpack } from '../../buildpacks/node/index.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { TEST_PLAN_INVENTORY } from '../helpers/inventory.js';
import { TEST_INVENTORY } from '../helpers/node-inventory.js';

describe('version managers’ files: read, ignored and reported', () => {
  it('reads the nodejs (or node) line of .tool-versions, comments and other tools aside', () => {
    expect(toolVersionsNode('ruby 3.3.0\n# nodejs 18\nnodejs 20.11.1 system\n')).toBe('20.11.1 system');
    expect(toolVersionsNode('node lts\n')).toBe('lts');
    expect(toolVersionsNode('nodejs\n')).toBeNull();
    expect(toolVersionsNode('python 3.12\n')).toBeUndefined();
  });

  it('reads [tools] node of mise.toml as a string, a list or a table', () => {
    expect(miseNode({ tools: { node: '22' } })).toBe('22');
    expect(miseNode({ tools: { node: ['22', '20'] } })).toBe('22 20');
    expect(miseNode({ tools: { node: { version: 'lts' } } })).toBe('lts');
    expect(miseNode({ tools: { node: { postinstall: 'x' } } })).toBeNull();
    expect(miseNode({ tools: { python: '3' } })).toBeUndefined();
    expect(miseNode({ env: {} })).toBeUndefined();
  });

  it('lists each file that names a version as an ignored source, a bounded excerpt of its value', () => {
    const out = ignoredVersionFiles({ nodeVersion: 'v20.1.0\n', toolVersions: 'nodejs 21\n', mise: { tools: { node: '19' } } });
    expect(out.map((o) => [o.source, o.value])).toEqual([
      ['.node-version', 'v20.1.0'],
      ['.tool-versions nodejs', '21'],
      ['mise.toml [tools] node', '19'],
    ]);
    expect(out.every((o) => o.reason.includes('ignored, as on the service'))).toBe(true);
    expect(ignoredVersionFiles({ mise: 'invalid' })[0]).toMatchObject({ value: null, reason: expect.stringContaining('not valid TOML') });
    expect(ignoredVersionFiles({ toolVersions: 'ruby 3\n', mise: { tools: {} } })).toEqual([]);
    expect(ignoredVersionFiles({ nodeVersion: `${'9'.repeat(5000)}\n` })[0]?.value?.length).toBeLessThan(300);
  });
});

describe('package.json devEngines against what is deployed', () => {
  const chosen = { node: '24.11.1', manager: 'npm', managerVersion: '11.6.2' };

  it('says nothing when devEngines agrees, or is absent', () => {
    expect(devEnginesEvidence(undefined, chosen)).toEqual({ node: [], tool: [], warnings: [] });
    const agreeing = { runtime: { name: 'node', version: '>=22' }, packageManager: [{ name: 'pnpm' }, { name: 'npm', version: '^11.0.0' }] };
    expect(devEnginesEvidence(agreeing, chosen)).toEqual({ node: [], tool: [], warnings: [] });
  });

  it('reports a runtime range the deployed Node.js misses, or another runtime, and warns', () => {
    const out = devEnginesEvidence({ runtime: { name: 'node', version: '18.x' } }, chosen);
    expect(out.node).toEqual([expect.objectContaining({ source: 'package.json devEngines.runtime', value: '18.x' })]);
    expect(out.warnings).toEqual([expect.objectContaining({ code: 'RUNPLAN_W_NODE_DEV_ENGINES_MISMATCH', file: 'package.json' })]);
    expect(devEnginesEvidence({ runtime: [{ name: 'bun' }] }, chosen).node[0]?.value).toBe('bun');
  });

  it('reports another package manager, or a version range it misses', () => {
    expect(devEnginesEvidence({ packageManager: { name: 'pnpm', version: '^10' } }, chosen).tool[0]?.value).toBe('pnpm@^10');
    expect(devEnginesEvidence({ packageManager: { name: 'npm', version: '^10' } }, chosen).warnings).toHaveLength(1);
  });

  it('takes malformed entries as absent, never as a crash', () => {
    for (const bad of [null, 3, 'x', [], { runtime: 'node' }, { runtime: [null, 4] }, { packageManager: { name: 5 } }]) {
      expect(() => devEnginesEvidence(bad, chosen)).not.toThrow();
    }
  });
});

describe('in the plan', () => {
  it('the node.version decision lists the ignored files and devEngines; the build tool decision lists devEngines.packageManager', async () => {
    const { plan } = await createPlan({
      registry: new BuildpackRegistry([createNodeBuildpack({ inventory: TEST_INVENTORY })]),
      inventory: TEST_PLAN_INVENTORY,
      files: new MemorySource({
        'package.json': JSON.stringify({ main: 'a.js', devEngines: { runtime: { name: 'node', version: '16.x' }, packageManager: { name: 'yarn' } } }),
        '.node-version': '20\n',
        'mise.toml': '[tools]\nnode = "22"\n',
        '.gitignore': 'node_modules\n',
      }),
      appDir: '/srv/app',
      env: { application: {} },
    });
    const sources = plan.runtimes[0]?.decision.overridden.map((o) => o.source);
    expect(sources).toEqual(['.node-version', 'mise.toml [tools] node', 'package.json devEngines.runtime']);
    expect(plan.decisions.find((d) => d.id === 'node.build-tool')?.overridden.map((o) => o.source)).toContain('package.json devEngines.packageManager');
    expect(plan.warnings.filter((w) => w.code === 'RUNPLAN_W_NODE_DEV_ENGINES_MISMATCH')).toHaveLength(2);
    expect(plan.build.steps.find((s) => s.name === 'install')?.onFailure?.[0]?.error.code).toBe('RUNPLAN_E_NODE_DEV_ENGINES_REFUSED');
  });
});
