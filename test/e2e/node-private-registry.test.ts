import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { checkFixture, fillPlaceholders, listFixtures, prepareFixture, type Fixture } from '../helpers/fixtures.js';
import { secretsInTree } from '../helpers/secret-scan.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { PRIVATE_GREETING, PRIVATE_PACKAGE, startPrivateRegistry, type PrivateRegistry } from '../helpers/verdaccio.js';

/**
 * NPM_TOKEN (rule 9) against a real private registry on 127.0.0.1 (verdaccio)
 * serving a scoped package that only it has: the right token installs it, a
 * wrong or missing one fails the build with a coded error, and the token is
 * nowhere in the output, the log, the plan or the errors.
 */
describe('private registry with NPM_TOKEN', () => {
  let registry: PrivateRegistry;
  const fixture = (name: string) => listFixtures('node').find((f) => f.name === name) as Fixture;
  const placeholders = () => ({ VERDACCIO_TOKEN: registry.token, VERDACCIO_HOST: registry.host, VERDACCIO_INTEGRITY: registry.integrity });

  beforeAll(async () => {
    registry = await startPrivateRegistry();
  }, 300_000);
  afterAll(() => registry?.stop());

  it("installs the private package with CC_NPM_REGISTRY, keeping the app's .npmrc lines", async () => {
    const { all } = await checkFixture(fixture('npm-token-cc-registry'), { placeholders: placeholders() });
    expect(all).not.toContain(registry.token);
  });

  it('uses the registry npm is configured with when CC_NPM_REGISTRY is unset', async () => {
    await checkFixture(fixture('npm-token-default-registry'), { placeholders: placeholders(), hostEnv: { npm_config_registry: registry.url } });
  });

  it('fails with a coded error for a wrong token, and for a missing one', async () => {
    await checkFixture(fixture('npm-token-wrong'), { placeholders: placeholders() });
    const wrong = fixture('npm-token-wrong');
    const { NPM_TOKEN: _dropped, ...withoutToken } = wrong.expect.env ?? {};
    await checkFixture({ ...wrong, expect: { ...wrong.expect, env: withoutToken } }, { placeholders: placeholders() });
  });

  // Issue 21: the token stayed in the built application's .npmrc, readable by the running application.
  it("keeps the token out of the plan, and in the build's .npmrc (mode 0600) only while the build steps run: the built application keeps its own .npmrc", async () => {
    const prepared = await prepareFixture(fixture('npm-token-cc-registry'));
    const args = ['--env', `NPM_TOKEN=${registry.token}`, '--env', `CC_NPM_REGISTRY=${registry.host}`];
    for (const json of [[], ['--json']]) {
      const plan = await runCli(['plan', prepared.dir, ...args, ...json]);
      expect(plan.code, plan.output).toBe(0);
      expect(plan.output).not.toContain(registry.token);
      expect(plan.output).toContain(json.length ? '"env": "NPM_TOKEN"' : '.npmrc (mode 0600, build phase, holds a secret)');
    }
    const dirs = await deploymentDirs();
    const built = await runCli(['build', prepared.dir, ...args], dirs.env);
    expect(built.code, built.output).toBe(0);
    expect(built.output).not.toContain(registry.token);
    // The build installed the private package, so npm had the token; then the file became the application's own again.
    expect(built.output).toContain('==> rewrote .npmrc: NPM_TOKEN is for the build steps only');
    const [app] = readdirSync(dirs.workDir);
    const npmrc = join(dirs.workDir, app as string, 'current', '.npmrc');
    expect(statSync(npmrc).mode & 0o777).toBe(0o600);
    expect(await readFile(npmrc, 'utf8')).toBe(await readFile(join(prepared.dir, '.npmrc'), 'utf8'));
    expect(await secretsInTree(dirs.workDir, [registry.token])).toEqual([]);
  });

  // Issue 12, item 6: the same token and registry for every package manager, each with a lockfile it wrote against verdaccio.
  describe.each(['yarn-berry', 'pnpm', 'bun'])('with %s', (tool) => {
    it('installs the private package from CC_NPM_REGISTRY', async () => {
      const { all, planJson } = await checkFixture(fixture(`npm-token-${tool}/cc-registry`), { placeholders: placeholders() });
      expect(all).not.toContain(registry.token);
      const files = (JSON.parse(planJson) as RunPlan).files;
      if (tool === 'yarn-berry') {
        const yarnrc = files.find((f) => f.path === '.yarnrc.yml');
        expect(yarnrc).toMatchObject({ mode: 0o600, secret: true, phase: 'build' });
        expect(yarnrc?.content).toContainEqual({ env: 'NPM_TOKEN', escape: 'yaml-double-quoted' });
        // The application's own scoped registry is kept as written.
        expect(yarnrc?.content.map((c) => ('text' in c ? c.text : '')).join('')).toContain('runplan-other:\n    npmRegistryServer: "https://npm.example.invalid"');
      }
      expect(files.find((f) => f.path === '.npmrc')).toMatchObject({ mode: 0o600, secret: true });
    });

    it('uses the registry npm is configured with when CC_NPM_REGISTRY is unset', async () => {
      await checkFixture(fixture(`npm-token-${tool}/default-registry`), { placeholders: placeholders() });
    });

    it('fails with the coded error for a wrong token', async () => {
      await checkFixture(fixture(`npm-token-${tool}/wrong-token`), { placeholders: placeholders() });
    });
  });

  it("writes Yarn's token only into the build's .yarnrc.yml, mode 0600, never into the application's own, and only while the build steps run", async () => {
    const given = fixture('npm-token-yarn-berry/cc-registry');
    const prepared = await prepareFixture(given, placeholders());
    const committed = await readFile(join(prepared.dir, '.yarnrc.yml'), 'utf8');
    const args = ['--env', `NPM_TOKEN=${registry.token}`, '--env', `CC_NPM_REGISTRY=http://${registry.host}`];
    const plan = await runCli(['plan', prepared.dir, ...args, '--json']);
    expect(plan.code, plan.output).toBe(0);
    expect(plan.output).not.toContain(registry.token);
    const dirs = await deploymentDirs();
    const built = await runCli(['build', prepared.dir, ...args], dirs.env);
    expect(built.code, built.output).toBe(0);
    expect(built.output).not.toContain(registry.token);
    const [app] = readdirSync(dirs.workDir);
    const yarnrc = join(dirs.workDir, app as string, 'current', '.yarnrc.yml');
    expect(statSync(yarnrc).mode & 0o777).toBe(0o600);
    // Once the steps are done, the file is what it is without NPM_TOKEN: the committed settings, yarnPath and nodeLinker.
    const left = await readFile(yarnrc, 'utf8');
    const planned = (JSON.parse(plan.stdout) as RunPlan).files.find((f) => f.path === '.yarnrc.yml');
    expect(planned?.afterBuild).toMatchObject({ action: 'replace', text: left });
    expect(left).toContain(committed.trim());
    expect(left).toContain('nodeLinker: node-modules');
    expect(left).not.toContain('npmAuthToken');
    expect(existsSync(join(dirs.workDir, app as string, 'current', '.npmrc'))).toBe(false);
    expect(await secretsInTree(dirs.workDir, [registry.token])).toEqual([]);
    expect(await readFile(join(prepared.dir, '.yarnrc.yml'), 'utf8')).toBe(committed);
  });

  it("gives an image build Yarn's .yarnrc.yml as a BuildKit secret, like .npmrc: the build context holds what a local build leaves of them (--out, no engine)", async () => {
    const prepared = await prepareFixture(fixture('npm-token-yarn-berry/cc-registry'), placeholders());
    const out = join(await tempDir('runplan-context-'), 'context');
    const args = ['--env', `NPM_TOKEN=${registry.token}`, '--env', `CC_NPM_REGISTRY=http://${registry.host}`];
    const result = await runCli(['image', prepared.dir, ...args, '--out', out], { DOCKER_HOST: 'unix:///nonexistent.sock' });
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toContain(registry.token);
    const dockerfile = await readFile(join(out, 'Dockerfile'), 'utf8');
    for (const path of ['.yarnrc.yml', '.npmrc']) expect(dockerfile).toMatch(new RegExp(`--mount=type=secret,id=file-\\d,target=/app/${path.replace('.', '\\.')},uid=1000,gid=1000,mode=0600`));
    // The layers get the files as the plan says they are after the build: .yarnrc.yml without the token, no .npmrc (the application has none).
    const plan = await runCli(['plan', prepared.dir, ...args, '--json']);
    const after = (JSON.parse(plan.stdout) as RunPlan).files.find((f) => f.path === '.yarnrc.yml')?.afterBuild;
    expect(after?.action).toBe('replace');
    expect(await readFile(join(out, 'app', '.yarnrc.yml'), 'utf8')).toBe(after?.action === 'replace' ? after.text : '');
    expect(existsSync(join(out, 'app', '.npmrc'))).toBe(false);
    expect(await secretsInTree(out, [registry.token])).toEqual([]);
  });

  // Needs the Docker engine the test setup starts (none with RUNPLAN_TEST_ENGINE=off, as in test/engines/).
  // npm reads the token from .npmrc, Yarn 4 from .yarnrc.yml: both are build-time secret files.
  for (const name of ['npm-token-cc-registry', 'npm-token-yarn-berry/cc-registry']) {
    it.skipIf(process.env.RUNPLAN_TEST_ENGINE === 'off')(
      `builds the image of ${name} with the token as a BuildKit secret: the private package is installed, and no layer, no history and no configuration of the image holds the token`,
      async () => {
        const dockerHost = inject('dockerHost');
        expect(dockerHost, 'the test setup starts a Docker engine').not.toBe('');
        const given = fixture(name);
        const prepared = await prepareFixture(given, placeholders());
        const dirs = await deploymentDirs();
        const env = fillPlaceholders(given.expect.env ?? {}, placeholders());
        const args = Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
        const built = await runCli(['image', prepared.dir, ...args], { ...dirs.env, DOCKER_HOST: dockerHost });
        expect(built.code, built.output).toBe(0);
        expect(built.output).not.toContain(registry.token);
        const tag = /==> built image (\S+)/.exec(built.output)?.[1] as string;
        const docker = (...a: string[]) => execFileSync('/usr/bin/docker', a, { env: { ...process.env, DOCKER_HOST: dockerHost }, maxBuffer: 1024 * 1024 * 1024 });
        // The package came from the private registry, with the token, during the build.
        expect(
          docker('run', '--rm', tag, 'node', '-e', `console.log(require(${JSON.stringify(PRIVATE_PACKAGE)}))`)
            .toString()
            .trim(),
        ).toBe(PRIVATE_GREETING);
        // Every byte of the saved image: each layer's files, the configuration, the history.
        const archive = join(dirs.workDir, 'image.tar');
        docker('save', '-o', archive, tag);
        const bytes = await readFile(archive);
        expect(bytes.length).toBeGreaterThan(1_000_000);
        expect(bytes.includes(Buffer.from(registry.token)), 'the token is in the saved image').toBe(false);
        expect(docker('history', '--no-trunc', tag).toString()).not.toContain(registry.token);
        docker('image', 'rm', tag);
      },
    );
  }
});
