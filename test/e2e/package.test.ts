import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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

  it('ships type declarations for both formats and an executable CLI', () => {
    for (const file of ['index.d.ts', 'index.d.cts', 'cli.js']) expect(existsSync(join(ROOT, 'dist', file)), file).toBe(true);
    expect(execFileSync(process.execPath, [join(ROOT, 'dist', 'cli.js'), '--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('API documentation', () => {
  it('builds with typedoc without warnings', () => {
    execFileSync(join(ROOT, 'node_modules', '.bin', 'typedoc'), ['--emit', 'none', '--treatWarningsAsErrors'], { cwd: ROOT, encoding: 'utf8' });
  });
});
