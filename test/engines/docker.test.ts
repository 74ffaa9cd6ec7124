import { execFile } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { planDigest } from '../../src/plan/digest.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { runCli } from '../helpers/cli.js';
import { checkFixture, listFixtures, prepareFixture, type Fixture } from '../helpers/fixtures.js';
import { standInDistributions, startPlay1Mirror, type Play1Mirror } from '../helpers/play1.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';

/**
 * The plan carried out by Docker: `runplan image` turns the saved plan into an
 * image, `runplan run --runner docker` runs one container per process, and the
 * fixture's HTTP check passes as it does locally. The engine is the one the
 * test setup started (its own data root, socket and bridge).
 */
const dockerHost = inject('dockerHost');
const execFileP = promisify(execFile);
const docker = async (...args: string[]) => (await execFileP('/usr/bin/docker', args, { env: { ...process.env, DOCKER_HOST: dockerHost }, maxBuffer: 64 * 1024 * 1024 })).stdout;
const fixture = (type: string, name: string) => listFixtures(type).find((f) => f.name === name) as Fixture;
const builtTag = (output: string) => /==> built image (\S+)/.exec(output)?.[1] as string;
/** The containers left of the deployment whose output this is (other test files use the engine at the same time). */
const leftOf = async (output: string) => {
  const id = /\(container (rp-[0-9a-f]+)-/.exec(output)?.[1];
  expect(id, 'the run names its containers').toBeDefined();
  return (await docker('ps', '-aq', '--filter', `label=io.runplan.deployment=${id}`)).trim();
};

/**
 * What `argv` prints when run with `docker exec` in a container of `image` started as an engine starts it
 * (its web process, through the entrypoint), or, where this engine's exec does not run inside
 * containers, as the container's command without the entrypoint: either way with the image's own PATH.
 */
async function execInContainer(image: string, argv: string[]): Promise<string> {
  if (inject('containerExecProblem') !== '') return (await docker('run', '--rm', '--network', 'none', '--entrypoint', argv[0] as string, image, ...argv.slice(1))).trim();
  const container = (await docker('run', '--detach', '--network', 'none', image)).trim();
  try {
    return (await docker('exec', container, ...argv)).trim();
  } finally {
    await docker('rm', '--force', container);
  }
}

beforeAll(() => {
  expect(dockerHost, 'the test setup starts a Docker engine (docker.io is one of the test prerequisites)').not.toBe('');
});

// The pre-run hook, a web process that exits before or after its health check, and the other rules every
// executor honours alike are the conformance suite's (test/conformance/): here, what only an image has.
describe('run --runner docker', () => {
  it("Express: the image runs exactly the plan's Node.js, carries the plan's digest, serves, and leaves no container", async () => {
    const result = await checkFixture(fixture('node', 'express'), { docker: dockerHost });
    const plan = JSON.parse(result.planJson) as RunPlan;
    const tag = builtTag(result.build);
    expect((await docker('run', '--rm', tag, 'node', '-v')).trim()).toBe(`v${plan.runtimes[0]?.version}`);
    const labels = JSON.parse(await docker('image', 'inspect', '--format', '{{json .Config.Labels}}', tag)) as Record<string, string>;
    expect(labels).toMatchObject({ 'io.runplan.plan-digest': planDigest(plan), 'io.runplan.app-type': 'node', 'io.runplan.processes': 'web' });
    expect((await docker('image', 'inspect', '--format', '{{.Config.User}} {{json .Config.ExposedPorts}} {{json .Config.Healthcheck.Test}}', tag)).trim()).toBe(
      `1000:1000 {"${plan.healthCheck.port}/tcp":{}} ["CMD","/opt/runplan/healthcheck"]`,
    );
    expect(result.run).toContain('Port ');
    expect(await leftOf(result.run)).toBe('');
    // The image's configuration has the runtime on PATH: what runs without the entrypoint finds it too.
    expect(await execInContainer(tag, ['node', '-v'])).toBe(`v${plan.runtimes[0]?.version}`);
  });

  it('Rails: Puma and nginx in two containers sharing the run directory; the health-check path goes through nginx', async () => {
    const result = await checkFixture(fixture('ruby', 'rails-puma-config'), { docker: dockerHost, hostEnv: { RUNPLAN_RUBY_GEM_SOURCE: 'local' } });
    expect(result.run).toMatch(/started puma \(container rp-[0-9a-f]+-puma\)/);
    expect(await leftOf(result.run)).toBe('');
    expect(await execInContainer(builtTag(result.build), ['ruby', '-v'])).toMatch(/^ruby \d+\.\d+/);
  });

  it('an npm workspace member (APP_FOLDER): the repository is in the image, /app is the folder, and the install fills the root node_modules', async () => {
    const result = await checkFixture(fixture('node', 'app-folder-workspace'), { docker: dockerHost });
    const tag = builtTag(result.build);
    expect((await docker('run', '--rm', '--entrypoint', '/bin/sh', tag, '-c', 'readlink /app; pwd -P; ls /repo/node_modules')).split('\n')).toEqual(expect.arrayContaining(['/repo/apps/web', 'ms']));
    expect(await leftOf(result.run)).toBe('');
  });

  describe('Play 1.x (stand-in framework from the test mirror)', () => {
    let mirror: Play1Mirror;
    beforeAll(async () => {
      mirror = await startPlay1Mirror(await standInDistributions());
    });
    afterAll(() => mirror?.close());

    it('the framework is installed from the mirror into the image, and / answers', async () => {
      const result = await checkFixture(fixture('play1', 'health-root'), { docker: dockerHost, hostEnv: mirror.hostEnv() });
      expect(await leftOf(result.run)).toBe('');
    });
  });
});

describe('runplan image', () => {
  it('rebuilds an unchanged application from cache, and writes an OCI layout with --oci', async () => {
    const { env } = await deploymentDirs();
    const app = join(fixture('node', 'express').dir);
    const first = await runCli(['image', app], { ...env, DOCKER_HOST: dockerHost });
    expect(first.code, first.output).toBe(0);
    const oci = join(await tempDir('runplan-oci-'), 'layout');
    const again = await runCli(['image', app, '--oci', oci], { ...env, DOCKER_HOST: dockerHost });
    expect(again.code, again.output).toBe(0);
    // Every step of the Dockerfile after FROM comes from the build cache.
    // (BuildKit's own internal steps, such as cache-mount permissions, may show up too: only the Dockerfile's count.)
    const steps = [...again.output.matchAll(/^\[image\] #(\d+) \[stage-0 (\d+)\/\d+\]/gm)].filter((m) => m[2] !== '1').map((m) => m[1]);
    const cached = new Set([...again.output.matchAll(/^\[image\] #(\d+) CACHED$/gm)].map((m) => m[1]));
    expect(steps.length).toBeGreaterThan(3);
    expect(
      steps.filter((id) => !cached.has(id)),
      again.output,
    ).toEqual([]);
    expect(builtTag(again.output)).toBe(builtTag(first.output));
    expect((await readdir(oci)).sort()).toEqual(['blobs', 'index.json', 'oci-layout']);
  });

  it('calls every tool the plan chose by its usual name: Yarn 4 as yarn in the build hooks and as a command of the image', async () => {
    const { env } = await deploymentDirs();
    const app = fixture('node', 'tool-names-yarn-berry').dir;
    const hooks = ['--env', 'CC_PRE_BUILD_HOOK=yarn --version > pre-build.txt', '--env', 'CC_POST_BUILD_HOOK=yarn run build'];
    const built = await runCli(['image', app, ...hooks], { ...env, DOCKER_HOST: dockerHost });
    expect(built.code, built.output).toBe(0);
    const shown = await docker('run', '--rm', builtTag(built.output), 'sh', '-c', 'cat pre-build.txt; cat post-build.txt; echo; yarn --version; command -v yarn');
    expect(shown).toBe('4.9.2\nbuilt by yarn/4.9.2\n4.9.2\n/app/.runplan/bin/yarn\n');
  });

  it('honours warm-start layers as a local build does: the next build that runs the custom command finds node_modules the last one left', async () => {
    const { env } = await deploymentDirs();
    const given = await prepareFixture(fixture('node', 'tool-custom-cached'));
    const args = Object.entries(given.expect.env ?? {}).flatMap(([name, value]) => ['--env', `${name}=${value}`]);
    const first = await runCli(['image', given.dir, ...args], { ...env, DOCKER_HOST: dockerHost });
    expect(first.code, first.output).toBe(0);
    expect((await docker('run', '--rm', '--entrypoint', 'cat', builtTag(first.output), 'custom.txt')).trim()).toBe('cold');
    // A change of the source: BuildKit runs the steps again, and the command meets the last build's node_modules.
    await writeFile(join(given.dir, 'changed.txt'), 'x');
    const second = await runCli(['image', given.dir, ...args], { ...env, DOCKER_HOST: dockerHost });
    expect(second.code, second.output).toBe(0);
    expect(second.output).toContain('restored node_modules from the build cache');
    expect((await docker('run', '--rm', '--entrypoint', 'cat', builtTag(second.output), 'custom.txt')).trim()).toBe('warm');
  });

  it('writes the build context and Dockerfile for another builder with --out, without an engine', async () => {
    const out = join(await tempDir('runplan-context-'), 'context');
    const result = await runCli(['image', fixture('node', 'express').dir, '--out', out], { DOCKER_HOST: 'unix:///nonexistent.sock' });
    expect(result.code, result.output).toBe(0);
    expect((await readdir(out)).sort()).toEqual(['Dockerfile', 'app', 'runplan', 'runtime', 'runtime.json']);
    expect(await readdir(join(out, 'runtime', '.runplan'))).toEqual(expect.arrayContaining(['bin', 'node']));
  });

  it('refuses to run without an engine, with a coded error naming DOCKER_HOST', async () => {
    const result = await runCli(['image', fixture('node', 'express').dir], { DOCKER_HOST: 'unix:///nonexistent.sock' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('RUNPLAN_E_ENGINE_UNAVAILABLE');
    expect(result.stderr).toContain('variable: DOCKER_HOST');
  });

  it('reports a step that fails in the build as a local build does: its onFailure rule, else the step and its status', async () => {
    const { env } = await deploymentDirs();
    const app = await tempDir('runplan-image-fails-');
    const image = (pkg: object) => writeFile(join(app, 'package.json'), JSON.stringify(pkg)).then(() => runCli(['image', app], { ...env, DOCKER_HOST: dockerHost }));
    const missingMain = await image({ name: 'broken', version: '1.0.0', main: 'dist/server.js' });
    expect(missingMain.code, missingMain.output).toBe(1);
    expect(missingMain.stderr).toContain('RUNPLAN_E_NODE_MAIN_NOT_FOUND: package.json main is "dist/server.js"');
    const failingScript = await image({ name: 'broken', version: '1.0.0', main: 'index.js', scripts: { install: 'exit 3' } });
    expect(failingScript.code, failingScript.output).toBe(1);
    expect(failingScript.stderr).toContain('RUNPLAN_E_IMAGE_BUILD_FAILED: step "install" (npm install --include=dev) failed in the build');
    expect(failingScript.stderr).toContain('with exit status 3');
  });
});

describe('engine errors', () => {
  it("a command the engine refuses is a coded error with the engine's reason", async () => {
    const { DockerCli } = await import('../../src/engines/docker-cli.js');
    const cli = await DockerCli.connect({ host: dockerHost });
    await expect(cli.ok(['image', 'inspect', 'runplan-test/no-such-image:0'])).rejects.toMatchObject({ code: 'RUNPLAN_E_ENGINE_COMMAND_FAILED', message: expect.stringContaining('No such image') });
  });
});
