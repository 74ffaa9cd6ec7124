import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPlanJsonSchema } from '../../src/plan/json-schema.js';
import { RunPlanSchema } from '../../src/plan/schema.js';
import { createPlan, parsePlan } from '../../src/planning/create-plan.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { PLAN_SCHEMA_VERSION } from '../../src/plan/schema.js';
import { RUNPLAN_VERSION } from '../../src/version.js';
import { ROOT } from '../helpers/cli.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';

/** One application of each built-in buildpack, with what makes its plan interesting. */
const APPS: Record<string, { files: Record<string, string>; env: Record<string, string> }> = {
  node: {
    files: { 'package.json': JSON.stringify({ main: 'server.js', packageManager: 'yarn@4.9.2', dependencies: { express: '4.21.2' } }), 'yarn.lock': '', '.gitignore': 'node_modules\n' },
    env: { NPM_TOKEN: 'npm_secret_token_1234', CC_HEALTH_CHECK_PATH: '/health' },
  },
  ruby: {
    files: {
      Gemfile: "ruby '3.3.6'\ngem 'puma'\n",
      'Gemfile.lock': 'GEM\n  specs:\n    puma (6.6.0)\n\nDEPENDENCIES\n  puma\n',
      'config.ru': 'run ->(e) { [200, {}, []] }\n',
      'public/robots.txt': '',
    },
    env: { CC_HTTP_BASIC_AUTH: 'admin:s3cr3t-Admin', STATIC_FILES_PATH: '/public/', STATIC_URL_PREFIX: '/static/' },
  },
  play1: {
    files: { 'conf/application.conf': 'application.name=demo\n%platform.db.pass=${PG_PASSWORD}\n', 'conf/routes': 'GET / Application.index\n' },
    env: { PG_PASSWORD: 'pg-secret-9912', PLAY1_VERSION: '1.11' },
  },
};
const planApp = (type: string, appDir = '/srv/app') =>
  createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: new MemorySource(APPS[type]!.files), appDir, env: { application: APPS[type]!.env } });

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
    const { plan } = await createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: expressTree(), appDir: '/srv/app', host: { port: 8080, cacheDir: '/tmp/c' } });
    expect(RunPlanSchema.safeParse(plan).success).toBe(true);
    expect(plan.schemaVersion).toBe(2);
    expect(parsePlan(JSON.parse(JSON.stringify(plan)))).toEqual(plan);
  });

  it.each(Object.keys(APPS))('describes a %s plan, which survives a JSON round trip unchanged', async (type) => {
    const { plan } = await planApp(type);
    expect(plan.app.type).toBe(type);
    expect(parsePlan(JSON.parse(JSON.stringify(plan)), 'plan.json')).toEqual(plan);
  });

  it('refuses a document that is not a plan with a coded error', () => {
    expect(() => parsePlan({ schemaVersion: PLAN_SCHEMA_VERSION })).toThrowError(expect.objectContaining({ code: CoreErrors.PLAN_DOCUMENT_INVALID.code, kind: 'input', file: 'the plan' }));
    expect(() => parsePlan({ schemaVersion: PLAN_SCHEMA_VERSION, runplanVersion: '0.1.0' }, 'plan.json')).toThrowError(
      expect.objectContaining({ code: CoreErrors.PLAN_DOCUMENT_INVALID.code, file: 'plan.json', message: expect.stringContaining('plan.json is not a valid run plan: app: ') }),
    );
  });

  it('refuses a plan of another schema version, naming the runplan that made it', () => {
    expect(() => parsePlan({ schemaVersion: 1, runplanVersion: '0.0.9', app: { root: '/srv/app' } }, 'old-plan.json')).toThrowError(
      expect.objectContaining({
        code: CoreErrors.PLAN_SCHEMA_UNSUPPORTED.code,
        kind: 'input',
        file: 'old-plan.json',
        reason: `old-plan.json has schema version 1 (made by runplan 0.0.9); runplan ${RUNPLAN_VERSION} carries out schema version 2.`,
      }),
    );
    expect(() => parsePlan({ schemaVersion: 3 })).toThrowError(
      expect.objectContaining({ code: CoreErrors.PLAN_SCHEMA_UNSUPPORTED.code, reason: expect.stringMatching(/^the plan has schema version 3; /) }),
    );
    expect(() => parsePlan({ schemaVersion: '2' })).toThrowError(expect.objectContaining({ code: CoreErrors.PLAN_SCHEMA_UNSUPPORTED.code, reason: expect.stringContaining('schema version "2"') }));
    for (const notAPlan of [{}, null, 'plan', []]) {
      expect(() => parsePlan(notAPlan)).toThrowError(expect.objectContaining({ code: CoreErrors.PLAN_SCHEMA_UNSUPPORTED.code, reason: expect.stringContaining('has schema version null') }));
    }
  });

  it.each(Object.keys(APPS))('gives the same %s plan, byte for byte, from the same inputs', async (type) => {
    const [a, b] = [await planApp(type), await planApp(type)];
    expect(JSON.stringify(b.plan)).toBe(JSON.stringify(a.plan));
  });

  it.each(Object.keys(APPS))('holds no absolute path of the application and no secret value in a %s plan', async (type) => {
    const { plan, environment } = await planApp(type, '/srv/app');
    const json = JSON.stringify(plan);
    expect(json).not.toContain('/srv/app');
    for (const e of environment.list().filter((v) => v.secret)) expect(json, e.name).not.toContain(e.value);
    // The same application elsewhere gives the same plan.
    expect(JSON.stringify((await planApp(type, '/home/someone/work/app')).plan)).toBe(json);
  });

  it('records requested, source, resolved, reason and overridden sources for each decision', async () => {
    const { plan } = await createPlan({
      registry: testRegistry(),
      inventory: TEST_PLAN_INVENTORY,
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

  it("needs no redaction: a secret value that occurs in the application's path does not reach the plan", async () => {
    const { plan } = await createPlan({
      registry: testRegistry(),
      inventory: TEST_PLAN_INVENTORY,
      files: expressTree(),
      appDir: '/srv/shop-2026',
      env: { application: { CC_HTTP_BASIC_AUTH: 'admin:2026' } },
    });
    expect(JSON.stringify(plan)).not.toContain('shop');
    expect(JSON.stringify(plan)).not.toContain('***');
    expect(plan.environment.variables.find((v) => v.name === 'CC_HTTP_BASIC_AUTH')).toEqual({ name: 'CC_HTTP_BASIC_AUTH', source: 'application', origin: 'application variables', secret: true });
  });
});
