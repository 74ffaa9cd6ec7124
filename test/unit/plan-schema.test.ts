import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPlanJsonSchema } from '../../src/plan/json-schema.js';
import { RunPlanSchema } from '../../src/plan/schema.js';
import { createPlan, parsePlan } from '../../src/planning/create-plan.js';
import { offlineRegistry } from '../helpers/node-inventory.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { ROOT } from '../helpers/cli.js';

const expressTree = () =>
  new MemorySource({
    'package.json': JSON.stringify({ name: 'x', scripts: { start: 'node server.js' }, dependencies: { express: '4.21.2' } }),
    'server.js': '',
  });

describe('run plan schema', () => {
  it('matches the committed JSON Schema (run `npm run schema` after changing the zod schema)', () => {
    const committed = JSON.parse(readFileSync(join(ROOT, 'docs', 'plan.schema.json'), 'utf8'));
    expect(committed).toEqual(runPlanJsonSchema());
  });

  it('describes a real plan, which survives a JSON round trip unchanged', async () => {
    const { plan } = await createPlan({ registry: offlineRegistry(), files: expressTree(), appDir: '/srv/app', host: { port: 8080, cacheDir: '/tmp/c', instance: { cpus: 2, memoryMb: 2048 } } });
    expect(RunPlanSchema.safeParse(plan).success).toBe(true);
    expect(parsePlan(JSON.parse(JSON.stringify(plan)))).toEqual(plan);
  });

  it('refuses a document that is not a plan with a coded error', () => {
    expect(() => parsePlan({ schemaVersion: 1 })).toThrowError(expect.objectContaining({ code: CoreErrors.PLAN_DOCUMENT_INVALID.code }));
  });

  it('records requested, source, resolved, reason and overridden sources for each decision', async () => {
    const { plan } = await createPlan({
      registry: offlineRegistry(),
      files: new MemorySource({ 'package.json': JSON.stringify({ main: 'server.js', scripts: { start: 'node server.js' } }) }),
      appDir: '/srv/app',
    });
    const start = plan.decisions.find((d) => d.id === 'node.start');
    expect(start).toEqual({
      id: 'node.start',
      subject: 'Start command',
      requested: 'node server.js',
      source: 'package.json scripts.start',
      resolved: 'npm start',
      reason: expect.stringContaining('scripts.start is defined'),
      overridden: [{ source: 'package.json main', value: 'server.js', reason: expect.stringContaining('only when scripts.start is undefined') }],
    });
  });

  it('redacts a secret that occurs in a path from the plan shown, but carries out the plan as made', async () => {
    const { plan, executablePlan } = await createPlan({
      registry: offlineRegistry(),
      files: expressTree(),
      appDir: '/srv/shop-2026',
      env: { application: { CC_HTTP_BASIC_AUTH: 'admin:2026' } },
    });
    expect(plan.app.root).toBe('/srv/shop-***');
    expect(executablePlan.app.root).toBe('/srv/shop-2026');
    expect({ ...executablePlan, app: plan.app, environment: plan.environment }).toEqual(plan);
  });
});

