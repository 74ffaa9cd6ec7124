import { execFile } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DockerCli } from '../../src/engines/docker-cli.js';
import { ensureStackImage, forgetStackImageIfGone, rootfsImageTag, STACKS, stackImageTag } from '../../src/engines/stack-images.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Stack images are tagged only once completely built (issue 23): a missing
 * mmdebstrap is named before anything is made, a failed or empty root is never
 * tagged, and a broken root left tagged by an older runplan is not built on.
 * The images here are tagged under a repository of this test's own, so that the
 * machine's stack images are never touched.
 */
const dockerHost = inject('dockerHost');
const execFileP = promisify(execFile);
const docker = async (...args: string[]) => (await execFileP('/usr/bin/docker', args, { env: { ...process.env, DOCKER_HOST: dockerHost } })).stdout.trim();
const repository = `runplan-test-stack-${process.pid}`;
const NODE = STACKS.node!;
let cli: DockerCli;
let rootfs: string;

/** The images an import made for the test's root, tagged or not (each carries the tag it was made for). */
const importsOfRoot = () => docker('image', 'ls', '--all', '--quiet', '--filter', `label=io.runplan.stack-rootfs=${rootfs}`);
const tagged = async (ref: string) =>
  await execFileP('/usr/bin/docker', ['image', 'inspect', ref], { env: { ...process.env, DOCKER_HOST: dockerHost } }).then(
    () => true,
    () => false,
  );

/** A directory holding an `mmdebstrap` that writes `tar` (a root with nothing in it) and exits with `status`: a build that fails, or that makes an unusable root. */
async function mmdebstrapStandIn(status: number): Promise<NodeJS.ProcessEnv> {
  const dir = await tempDir('runplan-mmdebstrap-');
  await writeFile(join(dir, 'mmdebstrap'), `#!/bin/sh\n[ "$1" = --version ] && { echo 'mmdebstrap stand-in'; exit 0; }\ntar -cf - --files-from /dev/null\nexit ${status}\n`);
  await chmod(join(dir, 'mmdebstrap'), 0o755);
  return { ...process.env, PATH: `${dir}:/usr/bin:/bin` };
}

beforeAll(async () => {
  expect(dockerHost, 'the test setup starts a Docker engine').not.toBe('');
  cli = await DockerCli.connect({ host: dockerHost });
  rootfs = await rootfsImageTag({ repository });
});

afterAll(async () => {
  const images = (await docker('image', 'ls', '--all', '--quiet', `${repository}/*`)).split('\n').filter(Boolean);
  if (images.length > 0) await docker('image', 'rm', '--force', ...new Set(images));
});

describe('stack images', () => {
  it('without mmdebstrap: RUNPLAN_E_STACK_TOOL_MISSING names the package, and no stack image changes', async () => {
    // The images this command would make, and only those: other test files build application images on this engine meanwhile.
    const touched = [await stackImageTag(NODE), await rootfsImageTag()];
    const ids = () => Promise.all(touched.map((tag) => docker('image', 'ls', '--all', '--no-trunc', '--format', '{{.ID}}', tag)));
    const before = await ids();
    const result = await runCli(['stack', '--type', 'node', '--rebuild'], { DOCKER_HOST: dockerHost, PATH: '/nonexistent' });
    expect(result.code, result.output).toBe(1);
    expect(result.stderr).toContain('RUNPLAN_E_STACK_TOOL_MISSING: mmdebstrap is not installed');
    expect(result.stderr).toContain('apt-get install mmdebstrap');
    expect(await ids()).toEqual(before);
  });

  it('a broken root left tagged (an empty import) is untagged, not built on', async () => {
    // What an older runplan left when mmdebstrap was missing: `docker import` of nothing, tagged.
    await execFileP('/bin/sh', ['-c', `: | /usr/bin/docker import --change 'CMD ["/bin/sh"]' - '${rootfs}'`], { env: { ...process.env, DOCKER_HOST: dockerHost } });
    expect(await tagged(rootfs)).toBe(true);
    const lines: string[] = [];
    await expect(ensureStackImage(cli, NODE, { repository, env: { PATH: '/nonexistent' }, log: (l) => lines.push(l) })).rejects.toMatchObject({
      code: 'RUNPLAN_E_STACK_TOOL_MISSING',
      details: { program: 'mmdebstrap', package: 'mmdebstrap' },
    });
    expect(lines.join('\n')).toContain('is tagged but no shell runs in it');
    expect(await tagged(rootfs)).toBe(false);
  });

  it('is asked of the engine once per client; one removed since is noticed when a build fails on it, and made again', async () => {
    const tag = await stackImageTag(NODE, { repository });
    // What the engine holds once the stack is built, as far as ensureStackImage looks: an image with the stack's label under its tag.
    await execFileP('/bin/sh', ['-c', `: | /usr/bin/docker import --change 'LABEL io.runplan.stack=node' - '${tag}'`], { env: { ...process.env, DOCKER_HOST: dockerHost } });
    // No mmdebstrap: whatever would build the stack fails, with the code that says so.
    const noTools = { repository, env: { PATH: '/nonexistent' } };
    expect(await ensureStackImage(cli, NODE, noTools)).toBe(tag);
    await docker('image', 'rm', tag);
    expect(await ensureStackImage(cli, NODE, noTools)).toBe(tag);
    // A client of its own asks the engine.
    await expect(ensureStackImage(await DockerCli.connect({ host: dockerHost }), NODE, noTools)).rejects.toMatchObject({ code: 'RUNPLAN_E_STACK_TOOL_MISSING' });
    // What buildImage asks when a build fails: the image is gone, so the client asks the engine again and makes it.
    expect(await forgetStackImageIfGone(cli, tag)).toBe(true);
    await expect(ensureStackImage(cli, NODE, noTools)).rejects.toMatchObject({ code: 'RUNPLAN_E_STACK_TOOL_MISSING' });
  });

  it.each([
    ['mmdebstrap fails after writing part of a root', 3, 'mmdebstrap 3, docker import 0'],
    ['mmdebstrap succeeds but the root runs no shell', 0, 'no shell runs in the root it made'],
  ])('%s: RUNPLAN_E_STACK_BUILD_FAILED, nothing tagged, the import removed', async (_, status, why) => {
    const env = await mmdebstrapStandIn(status);
    await expect(ensureStackImage(cli, NODE, { repository, env, rebuild: true })).rejects.toMatchObject({
      code: 'RUNPLAN_E_STACK_BUILD_FAILED',
      message: expect.stringContaining(why),
    });
    expect(await tagged(rootfs)).toBe(false);
    expect(await importsOfRoot()).toBe('');
  });
});
