import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

// Plans read the registry's inventory, cached under the run's shared cache.
const env = () => ({ ...process.env, RUNPLAN_CACHE_DIR: inject('sharedCacheDir') });

const express = join(ROOT, 'fixtures', 'node', 'express');
const script = (load: string) => `
${load}
r.createPlan({ registry: r.defaultRegistry(), appDir: ${JSON.stringify(express)} })
  .then(({ plan }) => console.log(JSON.stringify({ type: plan.app.type, start: plan.processes[0].command, valid: r.RunPlanSchema.safeParse(plan).success })));
`;

describe('the published package', () => {
  it.each([
    ['CommonJS require', `const r = require(${JSON.stringify(join(ROOT, 'dist', 'index.cjs'))});`, []],
    // Node 20 before 20.19 cannot require ES modules: the CommonJS build must not need to.
    ['CommonJS require without require(esm)', `const r = require(${JSON.stringify(join(ROOT, 'dist', 'index.cjs'))});`, ['--no-experimental-require-module']],
  ])('%s gives a working createPlan', (_name, load, flags) => {
    const out = execFileSync(process.execPath, [...flags, '-e', script(load)], { encoding: 'utf8', env: env() });
    expect(JSON.parse(out)).toEqual({ type: 'node', start: { kind: 'exec', argv: ['npm', 'start'] }, valid: true });
  });

  it('ES module import gives a working createPlan', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script(`const r = await import(${JSON.stringify(join(ROOT, 'dist', 'index.js'))});`)], { encoding: 'utf8', env: env() });
    expect(JSON.parse(out)).toMatchObject({ type: 'node', valid: true });
  });

  it.each([
    ['ES module', `const load = (p) => import(p);`, ['--input-type=module']],
    ['CommonJS', `const load = async (p) => require(p);`, ['--no-experimental-require-module']],
  ])('%s: the kit, running programs, each built-in buildpack and each engine are entry points of their own, sharing one copy of the core', (_name, loader, flags) => {
    const code = `${loader}
(async () => {
  const names = ['runplan', 'runplan/buildpack', 'runplan/process', 'runplan/buildpacks/node', 'runplan/buildpacks/ruby', 'runplan/buildpacks/play1', 'runplan/engines/docker', 'runplan/engines/swarm', 'runplan/engines/kubernetes', 'runplan/engines'];
  const [core, kit, proc, node, ruby, play1, docker, swarm, kubernetes] = await Promise.all(names.map(load));
  const internals = await load('runplan/internals').then(() => 'loaded', (e) => e.code);
  console.log(JSON.stringify({
    sameClass: core.RunplanError === kit.RunplanError,
    kit: ['decide', 'ensureCached', 'runProgram', 'defineErrors'].every((n) => typeof kit[n] === 'function'),
    process: proc.runProgram === kit.runProgram && typeof proc.writeFileAtomic === 'function',
    rootHoldsNoKitFunction: ['decide', 'runProgram', 'defineErrors', 'writeFileAtomic'].filter((n) => n in core),
    buildpacks: [node.createNodeBuildpack().id, ruby.createRubyBuildpack().id, play1.createPlay1Buildpack().id],
    engines: [docker.DockerExecutor, docker.buildImage, swarm.deployToSwarm, kubernetes.exportToKubernetes].map((f) => typeof f),
    deployFlow: [core.deploy, core.healthGate, core.LocalExecutor, core.deployApp].map((f) => typeof f),
    rootHoldsNoEngine: ['DockerCli', 'buildImage', 'deployToDocker', 'DockerExecutor'].filter((n) => n in core),
    internals,
  }));
})();`;
    // By the package's name, as a host resolves it: Node resolves a package's own name from inside it.
    const out = execFileSync(process.execPath, [...flags, '-e', code], { cwd: ROOT, encoding: 'utf8', env: env() });
    expect(JSON.parse(out)).toEqual({
      sameClass: true,
      kit: true,
      process: true,
      rootHoldsNoKitFunction: [],
      buildpacks: ['node', 'ruby', 'play1'],
      engines: ['function', 'function', 'function', 'function'],
      deployFlow: ['function', 'function', 'function', 'function'],
      rootHoldsNoEngine: [],
      // dist/internals.js (for bench/) is no entry point of the package.
      internals: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
    });
  });

  it('ships both formats with type declarations for every entry point, and an executable CLI', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, string | Record<string, Record<string, string>>> };
    const files = Object.values(pkg.exports).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target).flatMap((c) => [c.types, c.default])));
    expect(files).toContain('./dist/engines/kubernetes.d.cts');
    for (const file of [...files, './dist/cli.js']) expect(existsSync(join(ROOT, file as string)), file).toBe(true);
    expect(execFileSync(process.execPath, [join(ROOT, 'dist', 'cli.js'), '--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('API documentation', () => {
  it('builds with typedoc without warnings', () => {
    execFileSync(join(ROOT, 'node_modules', '.bin', 'typedoc'), ['--emit', 'none', '--treatWarningsAsErrors'], { cwd: ROOT, encoding: 'utf8' });
  });
});
