import { describe, expect, it } from 'vitest';
import type { Buildpack } from '../../src/buildpack/contract.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { selectBuildpack } from '../../src/buildpack/detect.js';
import { defaultRegistry } from '../../src/compose/default-registry.js';
import { offlineRegistry } from '../helpers/node-inventory.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { DEFAULT_RESTART } from '../../src/plan/restart-policy.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';
import { NodeErrors } from '../../buildpacks/node/errors.js';
import { RubyErrors } from '../../buildpacks/ruby/errors.js';

/** A host's own buildpack, defined here without touching runplan. */
const procfileBuildpack: Buildpack = {
  id: 'procfile',
  name: 'Procfile',
  priority: 100,
  defaultHealthCheck: { kind: 'port', reason: 'port check' },
  detector: {
    async detect(files) {
      return (await files.exists('Procfile')) ? { status: 'pass', evidence: ['Procfile found'] } : { status: 'skip', evidence: ['no Procfile'] };
    },
  },
  planner: {
    async plan({ files, host }) {
      const web = /^web:\s*(.+)$/m.exec((await files.readText('Procfile')) ?? '')?.[1] ?? 'false';
      return {
        runtimes: [],
        decisions: [{ id: 'procfile.web', subject: 'Web command', requested: web, source: 'Procfile', resolved: web, reason: 'the web: line of the Procfile', overridden: [] }],
        steps: [],
        layers: [],
        processes: [{ name: 'web', role: 'web', command: { kind: 'shell', script: web }, cwd: '.', env: {}, pathPrepend: [], port: host.port, restart: DEFAULT_RESTART, stopGraceMs: 1000 }],
        files: [],
        warnings: [],
      };
    },
  },
};

describe('buildpack registry', () => {
  it('lets a host add its own buildpack, which then wins detection by priority', async () => {
    const registry = offlineRegistry().register(procfileBuildpack);
    const files = new MemorySource({ Procfile: 'web: node server.js\n', 'package.json': '{"main":"server.js"}' });
    const { plan } = await createPlan({ registry, files, appDir: '/srv/app' });
    expect(plan.app.type).toBe('procfile');
    // Only the candidates that pass: the built-in buildpacks that skip vary with what is registered.
    expect(plan.app.detection.candidates.filter((c) => c.status === 'pass').map((c) => c.buildpack)).toEqual(['procfile', 'node']);
    expect(plan.processes[0]?.command).toEqual({ kind: 'shell', script: 'node server.js' });
  });

  it('does not change the default registry when a host extends a copy', () => {
    const base = defaultRegistry();
    base.clone().register(procfileBuildpack);
    expect(base.get('procfile')).toBeUndefined();
  });

  it('refuses a second buildpack with the same id unless replaced explicitly', () => {
    const registry = new BuildpackRegistry([procfileBuildpack]);
    expect(() => registry.register(procfileBuildpack)).toThrowError(expect.objectContaining({ code: CoreErrors.PLAN_DUPLICATE_BUILDPACK.code }));
    const replacement = { ...procfileBuildpack, name: 'Procfile v2' };
    expect(registry.replace(replacement).get('procfile')?.name).toBe('Procfile v2');
  });

  it('explains why nothing matched', async () => {
    await expect(selectBuildpack(defaultRegistry(), new MemorySource({ 'README.md': '' }))).rejects.toMatchObject({
      code: CoreErrors.DETECT_NO_MATCH.code,
      message: expect.stringContaining('no package.json'),
    });
  });

  it('checks that a forced --type applies, and names unknown types', async () => {
    const files = new MemorySource({ 'README.md': '' });
    await expect(selectBuildpack(defaultRegistry(), files, 'node')).rejects.toMatchObject({ code: CoreErrors.DETECT_REJECTED.code });
    await expect(selectBuildpack(defaultRegistry(), files, 'cobol')).rejects.toMatchObject({ code: CoreErrors.DETECT_UNKNOWN_TYPE.code, message: expect.stringContaining('node') });
  });

  // Through detection a missing package.json or Gemfile is DETECT_NO_MATCH or DETECT_REJECTED; a host
  // that keeps a built-in planner but decides the type itself (here: a file of its own) meets the planner's refusal.
  it.each([
    ['node', NodeErrors.NODE_PACKAGE_JSON_MISSING.code, 'package.json'],
    ['ruby', RubyErrors.RUBY_GEMFILE_MISSING.code, 'Gemfile'],
  ])('lets the %s planner refuse an application without its manifest when a host detector chose it', async (id, code, file) => {
    const registry = testRegistry();
    const builtIn = registry.get(id) as Buildpack;
    registry.replace({
      ...builtIn,
      detector: { detect: async (files) => ((await files.exists('deploy.toml')) ? { status: 'pass', evidence: ['deploy.toml found'] } : { status: 'skip', evidence: [] }) },
    });
    const files = new MemorySource({ 'deploy.toml': `type = "${id}"\n`, 'config.ru': 'run ->(env) { [200, {}, ["ok"]] }\n' });
    await expect(createPlan({ registry, files, appDir: '/srv/app', inventory: TEST_PLAN_INVENTORY })).rejects.toMatchObject({ code, kind: 'input', file });
  });

  it('refuses a buildpack plan that breaks the schema, naming the buildpack (a coded failure, not a bug of runplan)', async () => {
    const broken: Buildpack = {
      ...procfileBuildpack,
      id: 'broken',
      planner: { plan: async (ctx) => ({ ...(await procfileBuildpack.planner.plan(ctx)), processes: [{ name: '' } as never] }) },
    };
    const registry = new BuildpackRegistry([broken]);
    await expect(createPlan({ registry, files: new MemorySource({ Procfile: 'web: x' }), appDir: '/a' })).rejects.toMatchObject({
      code: CoreErrors.BUILDPACK_RESULT_INVALID.code,
      kind: 'deployment',
      reason: expect.stringMatching(/^buildpack "broken" returned from plan\(\) something that is not its part of a plan: processes\.0\.name: /),
      details: { buildpack: 'broken', phase: 'plan' },
    });
  });

  // Issue 21: the value may come from the application's own files (a script, an address): a coded input error, never exit 70.
  it('stops a plan that would hold a secret value, as is or lower-cased, naming the variable and where, not the value', async () => {
    const leaky = (copy: (token: string) => string): Buildpack => ({
      ...procfileBuildpack,
      id: 'leaky',
      planner: {
        plan: async (ctx) => {
          const base = await procfileBuildpack.planner.plan(ctx);
          return { ...base, processes: base.processes.map((p) => ({ ...p, command: { kind: 'shell' as const, script: `deploy --token ${copy(ctx.env.get('DEPLOY_TOKEN') ?? '')}` } })) };
        },
      },
    });
    const registry = new BuildpackRegistry([leaky((t) => t)]);
    const files = new MemorySource({ Procfile: 'web: x' });
    for (const [buildpack, token] of [
      [leaky((t) => t), 'tok-12345678'],
      [leaky((t) => t.toLowerCase()), 'Tok-MixedCase-12345678'],
    ] as const) {
      const attempt = createPlan({ registry: new BuildpackRegistry([buildpack]), files, inventory: TEST_PLAN_INVENTORY, env: { application: { DEPLOY_TOKEN: token } } });
      await expect(attempt).rejects.toMatchObject({
        code: CoreErrors.PLAN_SECRET_VALUE.code,
        kind: 'input',
        variable: 'DEPLOY_TOKEN',
        message: expect.stringContaining('the plan of buildpack "leaky" would hold the value of the secret variable DEPLOY_TOKEN, at processes[0].command.script'),
      });
      await expect(attempt).rejects.not.toMatchObject({ message: expect.stringMatching(new RegExp(token, 'i')) });
    }
    // Values shorter than 8 characters could occur in a plan by coincidence: they are not checked.
    const { plan } = await createPlan({ registry, files, inventory: TEST_PLAN_INVENTORY, env: { application: { DEPLOY_TOKEN: 'tok-123' } } });
    expect(plan.processes[0]?.command).toEqual({ kind: 'shell', script: 'deploy --token tok-123' });
  });
});
