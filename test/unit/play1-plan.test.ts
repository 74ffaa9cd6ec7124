import { describe, expect, it } from 'vitest';
import { createNodeBuildpack } from '../../buildpacks/node/index.js';
import { Play1Errors } from '../../buildpacks/play1/errors.js';
import { javaMajor, pythonVersion } from '../../buildpacks/play1/host-programs.js';
import { createPlay1Buildpack, type Play1Options } from '../../buildpacks/play1/index.js';
import { DEFAULT_JVM_SIZING, heapSize } from '../../buildpacks/play1/jvm-memory.js';
import { downloadUrl, parseChecksums } from '../../buildpacks/play1/mirror.js';
import { hostConfiguration, play1InventoryProvider, Play1InventorySchema, type Play1InventoryData } from '../../buildpacks/play1/options.js';
import { Play1Warnings } from '../../buildpacks/play1/warnings.js';
import { selectBuildpack } from '../../src/buildpack/detect.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { MemorySource } from '../../src/files/memory-source.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { play1InventoryPart, TEST_PLAN_INVENTORY, testInventory } from '../helpers/inventory.js';
import { TEST_INVENTORY } from '../helpers/node-inventory.js';

const SHA = 'a'.repeat(64);
const HOST: Play1Options = { hostEnv: {}, mirror: 'https://mirror.example/play/{version}/play-{version}.zip', checksums: { '1.11.0': SHA, '1.5.3': 'b'.repeat(64) } };
const APP = { 'conf/application.conf': 'application.name=demo\n%platform.application.mode=prod\n%platform.XForwardedSupport=all\n', 'conf/routes': 'GET / Application.index\n' };
type Programs = Partial<Pick<Play1InventoryData, 'java' | 'python'>>;
/** A host that can run the Python 2 series up to 1.5: python2 and a Java 8 (what those programs would answer). */
const OLD_HOST: Programs = { java: { major: 8, banner: 'openjdk version "1.8.0_292"' }, python: { python2: 'Python 2.7.18', python3: null } };

function registry(options: Play1Options = HOST) {
  return new BuildpackRegistry([createNodeBuildpack({ inventory: TEST_INVENTORY }), createPlay1Buildpack(options)]);
}
/** Plans with the Play 1.x part of the inventory gathered for `options`, the host's programs as `programs` say. */
const plan = (
  files: Record<string, string> = APP,
  application: Record<string, string> = {},
  options: Play1Options = HOST,
  extra: Partial<Parameters<typeof createPlan>[0]> = {},
  programs: Programs = {},
) =>
  createPlan({
    registry: registry(options),
    inventory: testInventory({ play1: play1InventoryPart(options, programs) }),
    files: new MemorySource(files),
    appDir: '/srv/app',
    env: { application },
    ...extra,
  });

describe('Play 1.x detection', () => {
  const detect = (files: Record<string, string>) => selectBuildpack(registry(), new MemorySource(files));

  it('recognises conf/application.conf with conf/routes, even next to a package.json', async () => {
    const { buildpack, detection } = await detect({ ...APP, 'package.json': '{"main":"a.js"}' });
    expect(buildpack.id).toBe('play1');
    expect(detection.evidence).toEqual(['conf/application.conf found', 'conf/routes found']);
    expect(detection.candidates.map((c) => [c.buildpack, c.status])).toEqual([
      ['play1', 'pass'],
      ['node', 'pass'],
    ]);
  });

  it.each([['build.sbt'], ['project/Build.scala'], ['project/plugins.sbt'], ['project/build.properties']])('skips an sbt project (%s), with the evidence', async (marker) => {
    await expect(detect({ ...APP, [marker]: 'x' })).rejects.toMatchObject({
      code: CoreErrors.DETECT_NO_MATCH.code,
      message: expect.stringContaining(`${marker} found: an sbt project (Play 2 or later), not Play 1.x`),
    });
  });

  it('names conf/routes when only application.conf is there', async () => {
    await expect(detect({ 'conf/application.conf': '' })).rejects.toMatchObject({ code: Play1Errors.PLAY1_ROUTES_MISSING.code, file: 'conf/routes' });
  });

  it('skips an application without conf/application.conf', async () => {
    const { buildpack } = await detect({ 'package.json': '{"main":"a.js"}' });
    expect(buildpack.id).toBe('node');
  });
});

describe('Play 1.x plan', () => {
  it('shows the Java, installs the release as data, runs deps and precompile with the framework id, checks precompiled/, then play run on the web port', async () => {
    const { plan: p } = await plan();
    expect(p.build.steps.map((s) => [s.name, s.run])).toEqual([
      ['java', { kind: 'exec', argv: ['java', '-version'] }],
      ['python', { kind: 'exec', argv: ['python3', '--version'] }],
      [
        'framework',
        { kind: 'install', source: { type: 'archive', url: 'https://mirror.example/play/1.11.0/play-1.11.0.zip', sha256: SHA }, target: '.runplan/play-1.11.0', executables: ['play'], links: [] },
      ],
      ['deps', { kind: 'exec', argv: ['play', 'deps', '--sync', '--%platform'] }],
      ['precompile', { kind: 'exec', argv: ['play', 'precompile', '--%platform'] }],
      ['precompile-check', { kind: 'exec', argv: ['test', '-d', 'precompiled'] }],
    ]);
    expect(p.build.steps.map((s) => s.pathPrepend)).toEqual([['.runplan/play-1.11.0'], ['.runplan/play-1.11.0'], [], ['.runplan/play-1.11.0'], ['.runplan/play-1.11.0'], ['.runplan/play-1.11.0']]);
    expect(p.processes).toEqual([
      expect.objectContaining({
        name: 'web',
        port: 8080,
        pathPrepend: ['.runplan/play-1.11.0'],
        command: { kind: 'exec', argv: ['play', 'run', '--%platform', '--http.port=8080', '-Dprecompiled=true', '-Xmx1536m', '-Xms384m'] },
      }),
    ]);
    expect(p.runtimes.map((r) => [r.name, r.version, r.distribution])).toEqual([
      ['play', '1.11.0', 'mirror https://mirror.example/play/1.11.0/play-1.11.0.zip'],
      ['java', '17', 'host (java on PATH: openjdk version "17.0.15" 2025-04-15)'],
      ['python', '3.11.2', 'host (python3 on PATH)'],
    ]);
    // What the series needs of the host, as data.
    expect(p.runtimes.map((r) => r.needs)).toEqual([undefined, { command: 'java', min: 17, max: 21, above: 'untested' }, { command: 'python3', min: 3, max: 3, above: 'refused' }]);
    expect(p.runtimes[1]?.decision).toMatchObject({ id: 'play1.java', source: 'host', resolved: '17', reason: expect.stringContaining('Play 1.11.0 needs Java 17–21 (newer ones are untested)') });
    expect(p.runtimes[2]?.decision).toMatchObject({
      id: 'play1.python',
      source: 'Play 1.11 launcher',
      resolved: 'python3 (Python 3.11.2)',
      reason: expect.stringContaining('is a Python 3 script (since 1.7)'),
    });
    expect(p.decisions.map((d) => d.id)).toEqual(['play1.framework-id', 'play1.config', 'play1.port', 'play1.jvm-memory', 'play1.start']);
    expect(p.warnings).toEqual([]);
  });

  it('reports a java that cannot be started during the build as PLAY1_JAVA_NOT_FOUND', async () => {
    const { plan: p } = await plan();
    expect(p.build.steps[0]?.onFailure).toEqual([
      {
        when: { kind: 'not-found' },
        error: { code: Play1Errors.PLAY1_JAVA_NOT_FOUND.code, kind: 'deployment', message: "java cannot be run; Play's launcher needs it.", fix: Play1Errors.PLAY1_JAVA_NOT_FOUND.fix },
      },
    ]);
  });

  it('refuses to plan on a host without Java, before any build', async () => {
    await expect(plan(APP, {}, HOST, {}, { java: null })).rejects.toMatchObject({
      code: Play1Errors.PLAY1_JAVA_NOT_FOUND.code,
      message: expect.stringContaining('this host has no java on PATH, and Play 1.11.0 (made for Java 17–21) needs one'),
    });
  });

  it('warns about a Java newer than the range a series was only not tested with', async () => {
    const { plan: p } = await plan(APP, {}, HOST, {}, { java: { major: 25, banner: 'openjdk version "25"' } });
    expect(p.warnings).toEqual([expect.objectContaining({ code: Play1Warnings.PLAY1_JAVA_UNTESTED.code, message: "Play 1.11.0 was made for Java 17–21; this host's java is 25." })]);
    expect(p.runtimes[1]?.decision).toMatchObject({ resolved: '25', reason: expect.stringContaining('so this one is untested') });
    const old = await plan(APP, { PLAY1_VERSION: '1.5' }, HOST, {}, OLD_HOST);
    expect(old.plan.warnings).toEqual([]);
    expect(old.plan.runtimes.map((r) => [r.name, r.version, r.needs])).toEqual([
      ['play', '1.5.3', undefined],
      ['java', '8', { command: 'java', min: 8, max: 9, above: 'refused' }],
      ['python', '2.7.18', { command: 'python2', min: 2, max: 2, above: 'refused' }],
    ]);
    expect(old.plan.build.steps[1]).toMatchObject({ run: { argv: ['python2', '--version'] }, onFailure: [{ when: { kind: 'any' }, error: { code: Play1Errors.PLAY1_PYTHON_MISSING.code } }] });
    const unknown = await plan(APP, {}, HOST, {}, { java: { major: null, banner: 'some java' } });
    expect(unknown.plan.warnings).toEqual([]);
    expect(unknown.plan.runtimes[1]).toMatchObject({ version: 'unknown' });
  });

  it('refuses, before the build, a Java older than the series needs, naming the series, the need, what was found and the fix', async () => {
    await expect(plan(APP, {}, HOST, {}, { java: { major: 11, banner: 'openjdk version "11.0.2"' } })).rejects.toMatchObject({
      code: Play1Errors.PLAY1_JAVA_UNSUPPORTED.code,
      message: expect.stringContaining('Play 1.11.0 (series 1.11) needs Java 17–21; the java on PATH is 11 (openjdk version "11.0.2"), and it is older than 17, which the framework\'s classes need.'),
      fix: expect.stringMatching(/^Install a JDK 17–21 and point JAVA_HOME at it .* Series this host can run as it is: 1\.7, 1\.8, 1\.9\.$/),
      variable: 'JAVA_HOME',
    });
  });

  it('refuses, before the build, a Java newer than 1.2–1.5 accept, since their launchers add options it refuses', async () => {
    await expect(plan(APP, { PLAY1_VERSION: '1.5' }, HOST, {}, { ...OLD_HOST, java: { major: 17, banner: 'openjdk version "17.0.15"' } })).rejects.toMatchObject({
      code: Play1Errors.PLAY1_JAVA_UNSUPPORTED.code,
      message: expect.stringContaining(
        'Play 1.5.3 (series 1.5) needs Java 8–9; the java on PATH is 17 (openjdk version "17.0.15"), and the launcher of series 1.5 adds JVM options that Java 9 and later refuse.',
      ),
    });
  });

  it('refuses, before the build, a series whose launcher needs a Python the host lacks, naming the series, the need, what was found and the fix', async () => {
    await expect(plan(APP, { PLAY1_VERSION: '16' })).rejects.toMatchObject({
      code: Play1Errors.PLAY1_PYTHON_MISSING.code,
      message: expect.stringContaining('Play 1.6.0 (series 1.6) needs Python 2: its play launcher is a Python 2 script, and this host has no working python2 on PATH (only Python 3.11.2).'),
      fix: expect.stringContaining('Choose Play 1.7 or newer (e.g. PLAY1_VERSION=1.11), whose launcher runs on Python 3, or install a Python 2 as python2'),
    });
    await expect(plan(APP, {}, HOST, {}, { python: { python2: 'Python 2.7.18', python3: null } })).rejects.toMatchObject({
      code: Play1Errors.PLAY1_PYTHON_MISSING.code,
      message: expect.stringContaining('Play 1.11.0 (series 1.11) needs Python 3: its play launcher is a Python 3 script, and this host has no working python3 on PATH (only Python 2.7.18).'),
      fix: expect.stringContaining('Install Python 3 on the host'),
    });
    // A python2 command that answers with a Python 3 does not count.
    await expect(plan(APP, { PLAY1_VERSION: '1.5' }, HOST, {}, { ...OLD_HOST, python: { python2: 'Python 3.11.2', python3: null } })).rejects.toMatchObject({
      code: Play1Errors.PLAY1_PYTHON_MISSING.code,
    });
  });

  it('tells a working Python from a version manager that has none to offer', () => {
    expect(pythonVersion({ ok: true, output: 'Python 2.7.18' })).toBe('Python 2.7.18');
    expect(pythonVersion({ ok: true, output: 'Python 3.11.2\n' })).toBe('Python 3.11.2');
    expect(pythonVersion({ ok: false, output: "pyenv: python2: command not found\n\nThe `python2' command exists in these Python versions:\n  2.7.18" })).toBeNull();
    expect(pythonVersion({ ok: true, output: 'something else' })).toBeNull();
    expect(pythonVersion(undefined)).toBeNull();
  });

  it("uses JAVA_HOME's java when the deployment sets it, and shows its version in the build", async () => {
    const { plan: p } = await plan(APP, { JAVA_HOME: '/usr/lib/jvm/java-21/' }, HOST, {}, { java: null });
    expect(p.build.steps[0]).toMatchObject({
      run: { kind: 'exec', argv: ['/usr/lib/jvm/java-21/bin/java', '-version'] },
      onFailure: [{ when: { kind: 'not-found' }, error: { code: Play1Errors.PLAY1_JAVA_NOT_FOUND.code, variable: 'JAVA_HOME' } }],
    });
    expect(p.runtimes[1]).toMatchObject({ version: 'JAVA_HOME', distribution: 'JAVA_HOME (/usr/lib/jvm/java-21/bin/java)', decision: { source: 'env JAVA_HOME', requested: '/usr/lib/jvm/java-21/' } });
  });

  it('checks GET / by default, with time for a JVM to start', async () => {
    const { plan: p } = await plan();
    expect(p.healthCheck).toMatchObject({ kind: 'http', paths: [{ path: '/', source: 'default' }], readyTimeoutMs: 180_000, requestTimeoutMs: 30_000 });
    const configured = await plan(APP, { CC_HEALTH_CHECK_PATH: '/health' });
    expect(configured.plan.healthCheck.paths).toEqual([{ path: '/health', source: 'CC_HEALTH_CHECK_PATH' }]);
  });

  it('listens on the port the host gives, over http.port of application.conf', async () => {
    const { plan: p } = await plan({ ...APP, 'conf/application.conf': `${APP['conf/application.conf']}http.port=9000\n` }, {}, HOST, { host: { port: 9123, instance: { cpus: 1, memoryMb: 512 } } });
    expect(p.processes[0]?.command).toMatchObject({ argv: expect.arrayContaining(['--http.port=9123']) });
    expect(p.decisions.find((d) => d.id === 'play1.port')?.overridden).toEqual([{ source: 'conf/application.conf http.port (line 4)', value: '9000', reason: 'the command-line --http.port wins' }]);
  });

  it("sizes the heap from the inventory's machine unless the host declares its instance", async () => {
    const small = await plan(APP, {}, HOST, { inventory: testInventory({ instance: { cpus: 1, memoryMb: 1024 } }) });
    expect(small.plan.processes[0]?.command).toMatchObject({ argv: expect.arrayContaining(['-Xmx768m', '-Xms192m']) });
    const declared = await plan(APP, {}, HOST, { inventory: testInventory({ instance: { cpus: 1, memoryMb: 1024 } }), host: { instance: { cpus: 4, memoryMb: 4096 } } });
    expect(declared.plan.processes[0]?.command).toMatchObject({ argv: expect.arrayContaining(['-Xmx3072m', '-Xms768m']) });
  });

  it('leaves memory to application.conf when it sets jvm.memory for the id', async () => {
    const { plan: p } = await plan({ ...APP, 'conf/application.conf': `${APP['conf/application.conf']}%platform.jvm.memory=-Xmx300m\n` });
    expect(p.processes[0]?.command).toEqual({ kind: 'exec', argv: ['play', 'run', '--%platform', '--http.port=8080', '-Dprecompiled=true'] });
    expect(p.decisions.find((d) => d.id === 'play1.jvm-memory')).toMatchObject({ resolved: '-Xmx300m', source: 'conf/application.conf %platform.jvm.memory (line 4)' });
  });

  it('puts neither secret values nor application.conf values into the plan', async () => {
    const files = { ...APP, 'conf/application.conf': `${APP['conf/application.conf']}db.pass=literal-in-file\n%platform.db.pass=\${PG_PASSWORD}\n` };
    const { plan: p } = await plan(files, {}, HOST, { env: { links: [{ name: 'pg', variables: { PG_PASSWORD: 'pg-secret-9912' } }] } });
    const json = JSON.stringify(p);
    expect(json).not.toContain('pg-secret-9912');
    expect(json).not.toContain('literal-in-file');
    expect(p.decisions.find((d) => d.id === 'play1.config')?.reason).toContain('${PG_PASSWORD} in %platform.db.pass comes from addon pg');
  });

  it('warns, naming key and variable but never the value, when a variable application.conf inserts holds a $ (Play misreads it)', async () => {
    const conf = `${APP['conf/application.conf']}%platform.db.pass=\${PG_PASSWORD}\ndb.user=\${PG_USER}\nplain=\${HOME_DIR}\n`;
    const { plan: p } = await plan({ ...APP, 'conf/application.conf': conf }, {}, HOST, {
      env: { application: { HOME_DIR: 'C:\\no-dollar' }, links: [{ name: 'pg', variables: { PG_PASSWORD: 'pw$rd-4410', PG_USER: 'admin' } }] },
    });
    expect(p.warnings).toEqual([
      expect.objectContaining({
        code: Play1Warnings.PLAY1_DOLLAR_IN_VALUE.code,
        message: expect.stringContaining('%platform.db.pass (line 4) inserts ${PG_PASSWORD}, whose value holds a $: Play 1.x (every series) escapes only backslashes'),
        file: 'conf/application.conf',
        variable: 'PG_PASSWORD',
      }),
    ]);
    expect(JSON.stringify(p)).not.toContain('pw$rd-4410');
  });

  it('refuses a malformed application.conf with the line at fault', async () => {
    await expect(plan({ ...APP, 'conf/application.conf': 'a=1\nb=\\uZZ\n' })).rejects.toMatchObject({
      code: Play1Errors.PLAY1_CONF_INVALID.code,
      file: 'conf/application.conf',
      message: expect.stringContaining('line 2'),
    });
  });
});

describe('Play 1.x plan with a previous plan (plan --previous)', () => {
  /** A previous plan whose Play release came from runplan's default, when that default was `release`. */
  const previousWith = async (release: string): Promise<RunPlan> => {
    const { plan: p } = await plan();
    const decision = p.runtimes[0]!.decision;
    return { ...p, runtimes: [{ ...p.runtimes[0]!, version: release, decision: { ...decision, resolved: release } }, ...p.runtimes.slice(1)] };
  };

  it('keeps the release a default chose while the host can still install it, saying what the default gives now', async () => {
    const { plan: p } = await plan(APP, {}, HOST, { previous: await previousWith('1.5.3') }, OLD_HOST);
    expect(p.runtimes[0]).toMatchObject({ version: '1.5.3', decision: { source: 'previous plan', resolved: '1.5.3', reason: expect.stringContaining('the default now gives 1.11.0') } });
    expect(p.build.steps[2]?.run).toMatchObject({ source: { url: 'https://mirror.example/play/1.5.3/play-1.5.3.zip', sha256: 'b'.repeat(64) }, target: '.runplan/play-1.5.3' });
    // Kept only while this host can run it: without python2 the kept release is refused before the build.
    await expect(plan(APP, {}, HOST, { previous: await previousWith('1.5.3') })).rejects.toMatchObject({ code: Play1Errors.PLAY1_PYTHON_MISSING.code });
  });

  it("takes the default when the previous release has no checksum here, and follows the application and the host's default", async () => {
    const previous = await previousWith('1.4.6');
    expect((await plan(APP, {}, HOST, { previous })).plan.runtimes[0]?.decision).toMatchObject({ source: 'default', resolved: '1.11.0' });
    const kept = await previousWith('1.5.3');
    expect((await plan(APP, { PLAY1_VERSION: '1.11' }, HOST, { previous: kept })).plan.runtimes[0]?.decision).toMatchObject({
      source: 'env PLAY1_VERSION (application variables)',
      resolved: '1.11.0',
    });
    expect((await plan(APP, {}, { ...HOST, defaultVersion: '1.11' }, { previous: kept })).plan.runtimes[0]?.decision).toMatchObject({
      source: 'host default (option defaultVersion)',
      resolved: '1.11.0',
    });
  });
});

describe('Play 1.x mirror and checksums (host settings)', () => {
  it('refuses to plan without a mirror, naming the variable', async () => {
    await expect(plan(APP, {}, { hostEnv: {} })).rejects.toMatchObject({ code: Play1Errors.PLAY1_MIRROR_UNSET.code, variable: 'RUNPLAN_PLAY1_MIRROR' });
  });

  it.each([
    ['https://mirror.example/play.zip', /does not contain \{version\}/],
    ['https://mirror.example/{release}/{version}.zip', /unknown placeholder \{release\}/],
    ['ftp://mirror.example/{version}.zip', /uses ftp:/],
    ['https://user:pw@mirror.example/{version}.zip', /user name or password/],
    ['mirror/{version}.zip', /not an absolute URL/],
  ])('refuses the template %s', async (mirror, message) => {
    await expect(plan(APP, {}, { ...HOST, mirror })).rejects.toMatchObject({ code: Play1Errors.PLAY1_MIRROR_INVALID.code, message });
  });

  it('refuses a release whose checksum it does not know', async () => {
    await expect(plan(APP, { PLAY1_VERSION: '1.4' }, HOST, {}, OLD_HOST)).rejects.toMatchObject({
      code: Play1Errors.PLAY1_CHECKSUM_UNKNOWN.code,
      message: expect.stringContaining('no SHA-256 is known for Play 1.4.6 (option checksums lists 1.11.0, 1.5.3)'),
    });
  });

  it('reads the host settings from the runplan process environment; options win', async () => {
    const hostEnv = { RUNPLAN_PLAY1_MIRROR: 'file:///srv/mirror/{series}/play-{version}.tar.gz', RUNPLAN_PLAY1_CHECKSUMS: `1.5.3=${'C'.repeat(64)}`, RUNPLAN_PLAY1_DEFAULT_VERSION: '15' };
    expect(play1InventoryPart({ hostEnv })).toMatchObject({
      mirror: { template: hostEnv.RUNPLAN_PLAY1_MIRROR, origin: 'RUNPLAN_PLAY1_MIRROR' },
      checksums: { '1.5.3': 'c'.repeat(64) },
      checksumsOrigin: 'RUNPLAN_PLAY1_CHECKSUMS',
    });
    const fromEnv = await plan(APP, {}, { hostEnv }, {}, OLD_HOST);
    expect(fromEnv.plan.build.steps[2]?.run).toMatchObject({ source: { type: 'archive', url: 'file:///srv/mirror/1.5/play-1.5.3.tar.gz', sha256: 'c'.repeat(64) } });
    expect(fromEnv.plan.runtimes[0]?.decision).toMatchObject({ source: 'host default (RUNPLAN_PLAY1_DEFAULT_VERSION)', resolved: '1.5.3' });
    const options = { hostEnv, mirror: 'https://other.example/{version}.zip', checksums: { '1.5.3': 'd'.repeat(64) } };
    expect(play1InventoryPart(options)).toMatchObject({ mirror: { origin: 'option mirror' }, checksumsOrigin: 'RUNPLAN_PLAY1_CHECKSUMS and option checksums' });
    const withOptions = await plan(APP, {}, options, {}, OLD_HOST);
    expect(withOptions.plan.build.steps[2]?.run).toMatchObject({ source: { url: 'https://other.example/1.5.3.zip', sha256: 'd'.repeat(64) } });
  });

  it("gathers the mirror settings, and asks this machine's java and python for their versions", async () => {
    const options = { ...HOST, hostEnv: { RUNPLAN_PLAY1_CHECKSUMS: `1.10.0=${'e'.repeat(64)}` } };
    const gathered = await play1InventoryProvider(hostConfiguration(options)).gather({ cacheDir: '/c' });
    expect(Play1InventorySchema.parse(gathered)).toEqual(gathered);
    // The test helper derives the same part, with stand-ins for the programs.
    expect({ ...gathered, java: null, python: null }).toEqual({ ...play1InventoryPart(options), java: null, python: null });
    expect(Object.keys(gathered.checksums)).toEqual(['1.10.0', '1.11.0', '1.5.3']);
    if (gathered.java) expect(gathered.java.banner).toMatch(/version "/);
  });

  it('never fails a non-Play application because of Play host settings', async () => {
    const garbage: Play1Options = { hostEnv: { RUNPLAN_PLAY1_CHECKSUMS: 'garbage', RUNPLAN_PLAY1_MIRROR: 'ftp://x' } };
    const files = new MemorySource({ 'package.json': '{"main":"a.js"}' });
    // Gathering only the part of the buildpack that plans…
    expect((await createPlan({ registry: registry(garbage), files })).plan.app.type).toBe('node');
    // …or planning from an inventory gathered before.
    expect((await createPlan({ registry: registry(garbage), files, inventory: TEST_PLAN_INVENTORY })).plan.app.type).toBe('node');
  });

  it('parses checksum tables and refuses malformed ones', () => {
    expect(parseChecksums(`# comment line\n1.11.0=${SHA}, 1.5.3=${'B'.repeat(64)}\n\n`, 'X')).toEqual(
      new Map([
        ['1.11.0', SHA],
        ['1.5.3', 'b'.repeat(64)],
      ]),
    );
    expect(() => parseChecksums('1.11.0', 'RUNPLAN_PLAY1_CHECKSUMS')).toThrowError(
      expect.objectContaining({ code: Play1Errors.PLAY1_CHECKSUMS_INVALID.code, message: expect.stringContaining('"1.11.0" is not VERSION=SHA256') }),
    );
    expect(() => parseChecksums('1.11.0=abc', 'X')).toThrow(/the checksum of 1.11.0 is not 64 hexadecimal digits/);
  });

  it('fills {version} and {series} in the URL', () => {
    expect(downloadUrl('https://m.example/{series}/play-{version}.zip', '1.10.0', '1.10')).toBe('https://m.example/1.10/play-1.10.0.zip');
  });
});

describe('JVM heap from the instance size', () => {
  it.each([
    [128, 128, 64, 16],
    [256, 128, 128, 32],
    [512, 128, 384, 96],
    [1024, 256, 768, 192],
    [2048, 512, 1536, 384],
    [4096, 1024, 3072, 768],
    [16384, 1024, 15360, 3840],
  ])('%i MB: %i MB kept aside, -Xmx%im -Xms%im', (memoryMb, reserveMb, maxHeapMb, initialHeapMb) => {
    expect(heapSize(memoryMb)).toEqual({ reserveMb, maxHeapMb, initialHeapMb });
  });

  it("follows the host's sizing rule when it gives one", () => {
    expect(heapSize(1000, { ...DEFAULT_JVM_SIZING, reservePercent: 50, maxReserveMb: 300 })).toEqual({ reserveMb: 300, maxHeapMb: 700, initialHeapMb: 175 });
  });
});

describe('java -version banners', () => {
  it.each([
    ['openjdk version "17.0.15" 2025-04-15', 17],
    ['openjdk version "21" 2023-09-19', 21],
    ['java version "1.8.0_292"', 8],
    ['java version "1.7.0_80"', 7],
    ['openjdk version "11.0.2-internal"', 11],
    ['no version here', undefined],
  ])('%s → %s', (banner, major) => {
    expect(javaMajor(banner)).toBe(major);
  });
});
