import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appUser } from '../../src/process/app-user.js';
import { runCli } from '../helpers/cli.js';
import { checkFixture, listFixtures, prepareFixture, type Fixture } from '../helpers/fixtures.js';
import { leaksIn, secretNeedles, secretsInTree } from '../helpers/secret-scan.js';
import { CAN_RUN_SSHD, startGitSshServer, type GitSshServer } from '../helpers/sshd.js';
import { deploymentDirs } from '../helpers/temp.js';

/**
 * The private SSH key of the specification (Authentication: "added to the
 * application so that private dependencies can be fetched during build"),
 * against a real sshd on 127.0.0.1 serving bare git repositories: an npm
 * git+ssh:// dependency and a bundler git: source install with CC_SSH_PRIVATE_KEY
 * and fail with a coded error naming them without it; the key is in no output,
 * plan or file the deployment leaves (checkFixture scans each of them, line by line).
 */
describe.skipIf(!CAN_RUN_SSHD)('private SSH key (CC_SSH_PRIVATE_KEY) against a real sshd', () => {
  let server: GitSshServer;
  const fixtures = listFixtures().filter((f) => f.expect.setup === 'sshd');
  const fixture = (type: string, name: string) => fixtures.find((f) => f.type === type && f.name === name) as Fixture;
  const hostEnv = (f: Fixture): Record<string, string> => (f.type === 'ruby' ? { RUNPLAN_RUBY_GEM_SOURCE: 'local' } : {});

  beforeAll(async () => {
    server = await startGitSshServer();
  }, 120_000);
  afterAll(() => server?.stop());

  it('has the fixtures of both types', () => {
    expect(fixtures.map((f) => `${f.type}/${f.name}`).sort()).toEqual([
      'node/ssh-key-git-dependency/known-hosts',
      'node/ssh-key-git-dependency/trust-on-first-use',
      'node/ssh-key-git-dependency/without-key',
      'node/ssh-key-git-dependency/wrong-host-key',
      'ruby/ssh-key-git-source/host-known-hosts',
      'ruby/ssh-key-git-source/refused-key',
      'ruby/ssh-key-git-source/without-key',
    ]);
  });

  for (const f of fixtures) {
    it(`${f.type}/${f.name}: ${f.expect.rule}`, async () => {
      const { all, planJson } = await checkFixture(f, { placeholders: server.placeholders(), hostEnv: hostEnv(f) });
      // The plan names the key's variable only, and never lists it among the variables of the run.
      if (planJson !== '' && f.expect.env?.CC_SSH_PRIVATE_KEY) {
        const plan = JSON.parse(planJson);
        expect(plan.build.sshKey.variable).toBe('CC_SSH_PRIVATE_KEY');
        expect(plan.environment.variables.map((v: { name: string }) => v.name)).not.toContain('CC_SSH_PRIVATE_KEY');
        expect(plan.decisions.map((d: { id: string }) => d.id)).toContain('ssh-key');
      }
      for (const key of [server.clientKey, server.otherKey]) expect(leaksIn(all, secretNeedles({ CC_SSH_PRIVATE_KEY: key }))).toEqual([]);
    }, 240_000);
  }

  it("gives the build steps the key in a private directory outside the build, as the steps' user, and removes it", async () => {
    const prepared = await prepareFixture(fixture('node', 'ssh-key-git-dependency/known-hosts'), server.placeholders());
    const dirs = await deploymentDirs();
    // A pre-build hook is a build step: it sees what npm sees, and reports it (never the key) into the build.
    const hook = [
      // The key's path, quoted for sh only when it needs to be.
      'key=$(printf %s "$GIT_SSH_COMMAND" | sed -n "s/^ssh -i \'\\?\\([^\' ]*\\)\'\\? .*/\\1/p")',
      'stat -c "%a %u" "$key" "$(dirname "$key")" > ssh-facts.txt',
      'echo "$key" >> ssh-facts.txt',
    ].join('; ');
    const built = await runCli(
      ['build', prepared.dir, '--env', `CC_SSH_PRIVATE_KEY=${server.clientKey}`, '--env', `CC_SSH_KNOWN_HOSTS=${server.knownHosts}`, '--env', `CC_PRE_BUILD_HOOK=${hook}`],
      dirs.env,
    );
    expect(built.code, built.output).toBe(0);
    const [app] = readdirSync(dirs.workDir);
    const build = join(dirs.workDir, app as string, 'current');
    const [keyFacts, dirFacts, keyPath] = (await readFile(join(build, 'ssh-facts.txt'), 'utf8')).trim().split('\n');
    const uid = process.getuid?.() === 0 ? (await appUser()).uid : process.getuid?.();
    expect(keyFacts).toBe(`600 ${uid}`);
    expect(dirFacts).toBe(`700 ${uid}`);
    expect(keyPath).toMatch(new RegExp(`^${join(dirs.workDir, app as string, 'tmp', 'ssh-')}[^/]+/id$`));
    expect(existsSync(keyPath as string), 'the key is removed once the build ends').toBe(false);
    expect(await secretsInTree(dirs.workDir, secretNeedles({ CC_SSH_PRIVATE_KEY: server.clientKey }))).toEqual([]);

    // What a build killed with SIGKILL left (its key included) is removed by the next build of the application.
    const leftover = join(dirs.workDir, app as string, 'tmp', 'ssh-20260101000000000-dead00');
    await mkdir(leftover, { recursive: true });
    await writeFile(join(leftover, 'id'), server.clientKey, { mode: 0o600 });
    const again = await runCli(['build', prepared.dir, '--env', `CC_SSH_PRIVATE_KEY=${server.clientKey}`, '--env', `CC_SSH_KNOWN_HOSTS=${server.knownHosts}`], dirs.env);
    expect(again.code, again.output).toBe(0);
    expect(existsSync(leftover)).toBe(false);
  }, 240_000);

  it('tells npm 12 refusing git dependencies (no allow-git in .npmrc) with its own code', async () => {
    const prepared = await prepareFixture(fixture('node', 'ssh-key-git-dependency/known-hosts'), server.placeholders());
    await rm(join(prepared.dir, '.npmrc'));
    // Node.js ships npm 11, which fetches git dependencies: the application asks for npm 12.
    const pkg = JSON.parse(await readFile(join(prepared.dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(prepared.dir, 'package.json'), JSON.stringify({ ...pkg, engines: { npm: '^12' } }));
    const dirs = await deploymentDirs();
    const built = await runCli(['build', prepared.dir, '--env', `CC_SSH_PRIVATE_KEY=${server.clientKey}`, '--env', `CC_SSH_KNOWN_HOSTS=${server.knownHosts}`], dirs.env);
    expect(built.code, built.output).toBe(2);
    expect(built.stderr).toContain('RUNPLAN_E_NODE_GIT_DEPENDENCIES_DISALLOWED');
    expect(built.output).not.toContain(server.clientKey.split('\n')[1]);
  }, 240_000);

  it('refuses to build an image with the key (the image engine does not support it yet), before any engine is needed', async () => {
    const prepared = await prepareFixture(fixture('node', 'ssh-key-git-dependency/known-hosts'), server.placeholders());
    const dirs = await deploymentDirs();
    const image = await runCli(['image', prepared.dir, '--env', `CC_SSH_PRIVATE_KEY=${server.clientKey}`], { ...dirs.env, DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
    expect(image.code, image.output).toBe(2);
    expect(image.stderr).toContain('RUNPLAN_E_IMAGE_SSH_KEY_UNSUPPORTED');
    expect(leaksIn(image.output, secretNeedles({ CC_SSH_PRIVATE_KEY: server.clientKey }))).toEqual([]);
  });

  it('carries out a saved plan only with its key, and refuses a key the plan does not use', async () => {
    const prepared = await prepareFixture(fixture('node', 'ssh-key-git-dependency/known-hosts'), server.placeholders());
    const dirs = await deploymentDirs();
    const key = ['--env', `CC_SSH_PRIVATE_KEY=${server.clientKey}`];
    const planned = await runCli(['plan', prepared.dir, '--json', ...key], dirs.env);
    expect(planned.code, planned.output).toBe(0);
    const planFile = join(dirs.workDir, 'plan.json');
    await writeFile(planFile, planned.stdout);
    const missing = await runCli(['build', prepared.dir, '--plan', planFile], dirs.env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('RUNPLAN_E_PLAN_SECRET_MISSING');
    expect(missing.stderr).toContain('CC_SSH_PRIVATE_KEY');

    const withoutKey = await runCli(['plan', prepared.dir, '--json'], dirs.env);
    await writeFile(planFile, withoutKey.stdout);
    const extra = await runCli(['build', prepared.dir, '--plan', planFile, ...key], dirs.env);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('RUNPLAN_E_PLAN_ENV_MISMATCH');
    expect(leaksIn(extra.output, secretNeedles({ CC_SSH_PRIVATE_KEY: server.clientKey }))).toEqual([]);
  });
});
