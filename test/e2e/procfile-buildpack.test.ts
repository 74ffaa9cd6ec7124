import { cpSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { pathToFileURL } from 'node:url';
import { ROOT, runCli } from '../helpers/cli.js';
import { checkFixture, type Fixture, type FixtureExpectation } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

const EXAMPLE = join(ROOT, 'examples', 'procfile-buildpack');

/**
 * The proof that a host adds its own buildpack without forking runplan (issue
 * 13, item 3): examples/procfile-buildpack, installed beside runplan the way a
 * host installs it (its own node_modules, runplan as a dependency it resolves by
 * name), is given to the CLI with --buildpack and deploys a Procfile application,
 * checked over HTTP like the built-in types.
 */
type Example = typeof import('../../examples/procfile-buildpack/index.mjs');
let module: string;
let example: Example;

// As a host installs it: its own node_modules, where runplan is a dependency it resolves by name.
beforeAll(async () => {
  const host = await tempDir('runplan-host-');
  mkdirSync(join(host, 'node_modules'));
  // runplan as the host's dependency: its published entry points, nothing else.
  symlinkSync(ROOT, join(host, 'node_modules', 'runplan'));
  cpSync(EXAMPLE, join(host, 'node_modules', 'runplan-procfile-buildpack'), { recursive: true, filter: (src) => !src.includes(`${EXAMPLE}/fixture`) });
  module = join(host, 'node_modules', 'runplan-procfile-buildpack', 'index.mjs');
  example = (await import(pathToFileURL(module).href)) as Example;
});

describe('a host buildpack through --buildpack (examples/procfile-buildpack)', () => {
  it("imports nothing but runplan's buildpack kit by name", () => {
    const imports = [...readFileSync(join(EXAMPLE, 'index.mjs'), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    expect(imports).toEqual(['runplan/buildpack']);
  });

  it('deploys a Procfile application from a clone: the directory is loaded as its package, and its `runplan/buildpack` is the running runplan', async () => {
    // By name, the example would find the clone's own package (npm links it into node_modules for the
    // runplan-host workspace), or nothing: whichever, the CLI gives it the running runplan (checked by the fixture).
    const byName = (() => {
      try {
        return realpathSync(createRequire(join(EXAMPLE, 'index.mjs')).resolve('runplan/buildpack'));
      } catch {
        return undefined;
      }
    })();
    expect(byName === undefined || byName.startsWith(join(realpathSync(ROOT), 'dist', 'buildpack.')), byName).toBe(true);
    const expectation = JSON.parse(readFileSync(join(EXAMPLE, 'fixture', 'expect.json'), 'utf8')) as FixtureExpectation;
    const fixture: Fixture = { type: 'procfile', name: 'web-and-worker', dir: join(EXAMPLE, 'fixture'), expect: expectation };
    // The CLI runs in the clone's root: the path is the one its documentation gives.
    await checkFixture(fixture, { extraArgs: ['--buildpack', './examples/procfile-buildpack'] });
  });

  it('is named by detection, --type and the registry in errors; its own errors keep their code', async () => {
    const app = await tempDir('runplan-procfile-');
    const nothing = await runCli(['plan', app, '--buildpack', module]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('procfile: no Procfile');
    expect(nothing.stderr).toContain('registered buildpacks (play1, ruby, node, procfile)');
    const unknown = await runCli(['plan', app, '--type', 'python', '--buildpack', module]);
    expect(unknown.stderr).toContain('registered types: play1, ruby, node, procfile');
    cpSync(join(EXAMPLE, 'fixture', 'server.js'), join(app, 'server.js'));
    cpSync(join(EXAMPLE, 'fixture', 'server.js'), join(app, 'Procfile'));
    const broken = await runCli(['plan', app, '--buildpack', module, '--json']);
    expect(broken.code).toBe(2);
    expect(JSON.parse(broken.stdout)).toMatchObject({ ok: false, error: { code: 'PROCFILE_E_FILE_INVALID', file: 'Procfile' } });
  });

  it('refuses a module that is not a buildpack, or cannot be found, with a coded error', async () => {
    const dir = await tempDir('runplan-not-a-buildpack-');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir, 'bad.mjs'), 'export default { id: "Bad Id" };\n');
    for (const spec of [join(dir, 'bad.mjs'), 'no-such-buildpack-package', join(dir, 'missing.mjs')]) {
      const r = await runCli(['plan', join(ROOT, 'fixtures', 'node', 'express'), '--buildpack', spec]);
      expect(r.code, r.output).toBe(2);
      expect(r.stderr).toContain('RUNPLAN_E_BUILDPACK_MODULE_INVALID');
    }
    const again = await runCli(['plan', join(ROOT, 'fixtures', 'node', 'express'), '--buildpack', module, '--buildpack', module]);
    expect(again.stderr).toContain('RUNPLAN_E_PLAN_DUPLICATE_BUILDPACK');
  });
});

/**
 * A buildpack that says, in its plan's decision, which file `runplan/buildpack`
 * and `runplan` resolve to from it, and proves the kit works (defineErrors, decide).
 * Beside it, a node_modules/runplan that throws when loaded: the CLI must give
 * the buildpack the runplan it runs from, not a copy found near the buildpack.
 */
function reportingBuildpack(kind: 'esm' | 'cjs'): string {
  const body = [
    "  id: 'reporter', name: 'Reporter', priority: 100, defaultHealthCheck: { kind: 'port', reason: 'test' },",
    "  detector: { detect: async () => ({ status: 'pass', evidence: ['always'] }) },",
    '  planner: { plan: async ({ host }) => ({',
    '    runtimes: [], steps: [], layers: [], files: [], warnings: [],',
    "    decisions: [kit.decide({ id: 'reporter.kit', subject: 'Kit', requests: [], resolved: `${kitFile} ${rootFile} ${typeof root.createPlan} ${Errors.TEST_X.code}`, reason: 'test' })],",
    "    processes: [{ name: 'web', role: 'web', command: { kind: 'exec', argv: ['node', 'server.js'] }, cwd: '.', env: {}, pathPrepend: [], port: host.port, restart: kit.DEFAULT_RESTART, stopGraceMs: 1000 }],",
    '  }) },',
  ];
  const errors = "const Errors = kit.defineErrors({ TEST_X: { title: 't', kind: 'input', fix: 'f' } }, { prefix: 'REPORTER' });";
  if (kind === 'esm') {
    return [
      "import * as kit from 'runplan/buildpack';",
      "import * as root from 'runplan';",
      "import { fileURLToPath } from 'node:url';",
      "const kitFile = fileURLToPath(import.meta.resolve('runplan/buildpack'));",
      "const rootFile = fileURLToPath(import.meta.resolve('runplan'));",
      errors,
      'export default {',
      ...body,
      '};',
      '',
    ].join('\n');
  }
  return [
    "const kit = require('runplan/buildpack');",
    "const root = require('runplan');",
    "const kitFile = require.resolve('runplan/buildpack');",
    "const rootFile = require.resolve('runplan');",
    errors,
    'module.exports = {',
    ...body,
    '};',
    '',
  ].join('\n');
}

describe('a buildpack that imports runplan gets the running runplan', () => {
  it.each([
    ['an ES module', 'esm', 'index.mjs', ['buildpack.js', 'index.js']],
    ['CommonJS', 'cjs', 'index.cjs', ['buildpack.cjs', 'index.cjs']],
  ] as const)('%s, in a directory of its own with a decoy runplan beside it', async (_, kind, file, [kitFile, rootFile]) => {
    const dir = await tempDir('runplan-reporter-');
    mkdirSync(join(dir, 'node_modules', 'runplan'), { recursive: true });
    writeFileSync(
      join(dir, 'node_modules', 'runplan', 'package.json'),
      JSON.stringify({ name: 'runplan', version: '0.0.0', main: 'decoy.js', exports: { '.': './decoy.js', './buildpack': './decoy.js' } }),
    );
    writeFileSync(join(dir, 'node_modules', 'runplan', 'decoy.js'), "throw new Error('the decoy runplan was loaded');\n");
    // Both ways a package names its entry: conditional exports, and main.
    const manifest = kind === 'esm' ? { exports: { '.': { types: './index.d.ts', import: `./${file}` } } } : { main: file };
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'reporter', private: true, ...manifest }));
    writeFileSync(join(dir, file), reportingBuildpack(kind));
    const r = await runCli(['plan', join(EXAMPLE, 'fixture'), '--buildpack', dir, '--json']);
    expect(r.code, r.output).toBe(0);
    const plan = JSON.parse(r.stdout) as { app: { type: string }; decisions: { id: string; resolved: string }[] };
    expect(plan.app.type).toBe('reporter');
    expect(plan.decisions.find((d) => d.id === 'reporter.kit')?.resolved).toBe(`${join(ROOT, 'dist', kitFile)} ${join(ROOT, 'dist', rootFile)} function REPORTER_E_TEST_X`);
  });
});

describe('parseProcfile', () => {
  it('reads process types in order, skipping blank lines and comments', () => {
    expect(example.parseProcfile('# comment\n\nweb: node server.js\r\nworker_1: ./work --fast\n')).toEqual([
      { name: 'web', command: 'node server.js' },
      { name: 'worker_1', command: './work --fast' },
    ]);
  });

  it.each(['worker: x', 'web node', 'web:', 'web: a\nweb: b', 'we b: x'])('refuses %j with its coded error', (text) => {
    expect(() => example.parseProcfile(text)).toThrowError(expect.objectContaining({ code: example.ProcfileErrors.FILE_INVALID.code, file: 'Procfile' }));
  });
});
