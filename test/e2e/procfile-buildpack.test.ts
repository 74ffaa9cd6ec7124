import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
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

  it('deploys a Procfile application: web serves on $PORT, the worker runs beside it', async () => {
    const expectation = JSON.parse(readFileSync(join(EXAMPLE, 'fixture', 'expect.json'), 'utf8')) as FixtureExpectation;
    const fixture: Fixture = { type: 'procfile', name: 'web-and-worker', dir: join(EXAMPLE, 'fixture'), expect: expectation };
    await checkFixture(fixture, { extraArgs: ['--buildpack', module] });
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
