import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as kit from '../../src/kit/index.js';
import { decide, defineErrors, defineWarnings, ensureCached, runProgram, type Buildpack } from '../../src/kit/index.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { TEST_PLAN_INVENTORY } from '../helpers/inventory.js';
import { tempDir } from '../helpers/temp.js';

describe('decide()', () => {
  it('takes the first source that asks, and reports every later one that asked as overridden', () => {
    const d = decide({
      id: 'x.version',
      subject: 'X version',
      requests: [
        { source: 'env CC_X_VERSION', value: undefined },
        { source: '.x-version', value: '2' },
        { source: 'x.json engines', value: '1' },
      ],
      resolved: (w) => `${w?.value}.0.0`,
      reason: (w) => `the highest ${w?.value}.x`,
      lost: [{ source: '.x-version-old', value: null, reason: 'not read: renamed in X 2' }],
    });
    expect(d).toEqual({
      id: 'x.version',
      subject: 'X version',
      requested: '2',
      source: '.x-version',
      resolved: '2.0.0',
      reason: 'the highest 2.x',
      overridden: [
        { source: 'x.json engines', value: '1', reason: '.x-version takes precedence' },
        { source: '.x-version-old', value: null, reason: 'not read: renamed in X 2' },
      ],
    });
  });

  it('says "default" when nothing asks', () => {
    const d = decide({ id: 'x.port', subject: 'Port', requests: [{ source: 'env X_PORT', value: undefined }], resolved: '8080', reason: 'the default port' });
    expect(d).toMatchObject({ requested: null, source: 'default', resolved: '8080', overridden: [] });
  });

  it('words the losers as the buildpack says', () => {
    const d = decide({
      id: 'x.y',
      subject: 'Y',
      requests: [
        { source: 'a', value: '1' },
        { source: 'b', value: '2' },
      ],
      resolved: '1',
      reason: 'r',
      outranked: (l, w) => `${l.source} is read only without ${w.source}`,
    });
    expect(d.overridden).toEqual([{ source: 'b', value: '2', reason: 'b is read only without a' }]);
  });
});

describe('ensureCached()', () => {
  it('fills an entry once, then finds it', async () => {
    const root = await tempDir();
    const entry = join(root, 'downloads', 'thing-1.0');
    let fills = 0;
    const fill = async (work: string) => {
      fills++;
      await writeFile(join(work, 'payload'), 'data');
      return undefined;
    };
    expect(await ensureCached(entry, fill)).toEqual({ dir: entry, cached: false });
    expect(await ensureCached(entry, fill)).toEqual({ dir: entry, cached: true });
    expect(fills).toBe(1);
    expect(await readFile(join(entry, 'payload'), 'utf8')).toBe('data');
    expect(await readdir(join(root, 'downloads'))).toEqual(['thing-1.0']);
  });

  it('leaves nothing when filling fails, so a failed download never becomes an entry', async () => {
    const root = await tempDir();
    const entry = join(root, 'c', 'e');
    await expect(
      ensureCached(entry, async (work) => {
        await writeFile(join(work, 'half'), 'x');
        throw new Error('network down');
      }),
    ).rejects.toThrow('network down');
    expect(await readdir(join(root, 'c'))).toEqual([]);
  });

  it('keeps the first of two concurrent fills, and replaces an entry when asked', async () => {
    const root = await tempDir();
    const entry = join(root, 'c', 'e');
    const fillWith = (text: string) => async (work: string) => {
      const dir = join(work, 'tree');
      await mkdir(dir);
      await writeFile(join(dir, 'who'), text);
      return dir;
    };
    const results = await Promise.all([ensureCached(entry, fillWith('a')), ensureCached(entry, fillWith('b'))]);
    expect(results.every((r) => r.dir === entry)).toBe(true);
    expect(['a', 'b']).toContain(await readFile(join(entry, 'who'), 'utf8'));
    await ensureCached(entry, fillWith('c'), { replace: true });
    expect(await readFile(join(entry, 'who'), 'utf8')).toBe('c');
    expect(await readdir(join(root, 'c'))).toEqual(['e']);
  });

  it('removes the work directory a killed process left, once it is a day old', async () => {
    const root = await tempDir();
    const stale = join(root, 'c', '.tmp-killed');
    const fresh = join(root, 'c', '.tmp-running');
    await mkdir(stale, { recursive: true });
    await mkdir(fresh);
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    await utimes(stale, twoDaysAgo, twoDaysAgo);
    await ensureCached(join(root, 'c', 'e'), async () => undefined);
    expect((await readdir(join(root, 'c'))).sort()).toEqual(['.tmp-running', 'e']);
    expect((await stat(fresh)).isDirectory()).toBe(true);
  });
});

describe('runProgram()', () => {
  it('reads what a program prints and how it ended', async () => {
    expect(await runProgram('node', ['-e', 'process.stdout.write("out"); process.stderr.write("err"); process.exitCode = 3'])).toEqual({
      stdout: 'out',
      stderr: 'err',
      exitCode: 3,
      signal: null,
      ok: false,
    });
    expect(await runProgram('node', ['-e', 'console.log(process.env.RUNPLAN_KIT_PROBE ?? "unset")'], { env: { PATH: process.env.PATH } })).toMatchObject({ stdout: 'unset\n', ok: true });
  });

  it('tells a missing program from a failing one', async () => {
    expect(await runProgram('runplan-no-such-program', [])).toBeUndefined();
  });

  it('ends a program that outlives its time, with the coded error for the caller to throw', async () => {
    const ran = await runProgram('node', ['-e', 'setTimeout(() => {}, 60_000)'], { timeoutMs: 200 });
    expect(ran).toMatchObject({ ok: false, exitCode: null, signal: 'SIGTERM' });
    expect(ran?.timeout?.code).toBe('RUNPLAN_E_HOST_PROGRAM_TIMEOUT');
    expect(ran?.timeout?.message).toContain('node did not finish within 0.2 s');
  });
});

describe('codes with a prefix of the host', () => {
  it('defines errors and warnings under the prefix the buildpack chooses', () => {
    const E = defineErrors({ FILE_INVALID: { title: 't', kind: 'input', fix: 'f' } }, { prefix: 'ACME' });
    expect(E.FILE_INVALID.code).toBe('ACME_E_FILE_INVALID');
    expect(E.FILE_INVALID.create({ message: 'm' }).message).toBe('ACME_E_FILE_INVALID: m');
    const W = defineWarnings({ FILE_OLD: { title: 't', fix: 'f' } }, { prefix: 'ACME' });
    expect(W.FILE_OLD.create({ message: 'm' }).code).toBe('ACME_W_FILE_OLD');
  });

  it('refuses a prefix or a key that would make a code hard to recognise', () => {
    expect(() => defineErrors({ FILE_INVALID: { title: 't', kind: 'input', fix: 'f' } }, { prefix: 'acme' })).toThrow(/invalid code prefix/);
    expect(() => defineErrors({ FILE_INVALID: { title: 't', kind: 'input', fix: 'f' } }, { prefix: 'ACME_E' })).toThrow(/invalid code prefix/);
    expect(() => defineErrors({ FILE_INVALID: { title: 't', kind: 'input', fix: 'f' } }, { prefix: 'ACME_' })).toThrow(/invalid code prefix/);
    // A host's words joined by "_": runplan-host's RUNPLAN_HOST_E_….
    expect(defineErrors({ APP_UNKNOWN: { title: 't', kind: 'input', fix: 'f' } }, { prefix: 'RUNPLAN_HOST' }).APP_UNKNOWN.code).toBe('RUNPLAN_HOST_E_APP_UNKNOWN');
    expect(() => defineWarnings({ INVALID: { title: 't', fix: 'f' } }, { prefix: 'ACME' })).toThrow(/invalid warning code ACME_W_INVALID/);
  });

  it("accepts a host's warning codes in a plan", async () => {
    const W = defineWarnings({ FILE_OLD: { title: 't', fix: 'f' } }, { prefix: 'ACME' });
    const bp = hostBuildpack({ warnings: [W.FILE_OLD.create({ message: 'old' })] });
    const { plan } = await createPlan({ registry: new BuildpackRegistry([bp]), files: new kit.MemorySource({ 'app.acme': '' }), inventory: TEST_PLAN_INVENTORY });
    expect(plan.warnings).toEqual([{ code: 'ACME_W_FILE_OLD', message: 'old', fix: 'f' }]);
  });
});

describe('secret variables a buildpack declares', () => {
  it('are kept out of the plan and out of errors, like runplan own secrets', async () => {
    const bp: Buildpack = { ...hostBuildpack(), secretVariables: ['ACME_DSN'] };
    const registry = new BuildpackRegistry([bp]);
    expect(registry.secretVariables()).toEqual(['ACME_DSN']);
    const value = 'https://k3y-of-the-project@errors.acme.test/42';
    const { plan, environment } = await createPlan({ registry, files: new kit.MemorySource({ 'app.acme': '' }), inventory: TEST_PLAN_INVENTORY, env: { application: { ACME_DSN: value } } });
    const variable = plan.environment.variables.find((v) => v.name === 'ACME_DSN');
    expect(variable).toMatchObject({ secret: true });
    expect(JSON.stringify(plan)).not.toContain('k3y-of-the-project');
    expect(environment.redactor.redact(`sending to ${value}`)).toBe('sending to ***');
    // Without the declaration, nothing in the name or value says it is a secret.
    const { plan: plain } = await createPlan({
      registry: new BuildpackRegistry([hostBuildpack()]),
      files: new kit.MemorySource({ 'app.acme': '' }),
      inventory: TEST_PLAN_INVENTORY,
      env: { application: { ACME_DSN: value } },
    });
    expect(plain.environment.variables.find((v) => v.name === 'ACME_DSN')).toMatchObject({ secret: false, value });
  });
});

describe('the kit (runplan/buildpack)', () => {
  it('holds what the built-in buildpacks use, and nothing of how a plan is carried out', () => {
    const names = Object.keys(kit);
    for (const name of ['decide', 'defineErrors', 'defineWarnings', 'ensureCached', 'writeFileAtomic', 'childEnvironment', 'runProgram', 'MemorySource', 'RunPlanSchema'])
      expect(names).toContain(name);
    for (const name of ['StepBuilder', 'LocalProcessRunner', 'buildImage', 'defaultRegistry', 'createPlan']) expect(names).not.toContain(name);
  });
});

function hostBuildpack(extra: Partial<kit.PlanContribution> = {}): Buildpack {
  return {
    id: 'acme',
    name: 'Acme',
    priority: 0,
    defaultHealthCheck: { kind: 'port', reason: 'the port accepts connections' },
    detector: { detect: async (files) => ((await files.exists('app.acme')) ? { status: 'pass', evidence: ['app.acme found'] } : { status: 'skip', evidence: ['no app.acme'] }) },
    planner: {
      plan: async ({ host }) => ({
        runtimes: [],
        decisions: [],
        steps: [],
        layers: [],
        processes: [
          {
            name: 'web',
            role: 'web',
            command: { kind: 'exec', argv: ['acme-server'] },
            cwd: '.',
            env: {},
            pathPrepend: [],
            port: host.port,
            restart: kit.DEFAULT_RESTART,
            stopGraceMs: kit.DEFAULT_STOP_GRACE_MS,
          },
        ],
        files: [],
        warnings: [],
        ...extra,
      }),
    },
  };
}
