import { existsSync } from 'node:fs';
import { lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeBuildCredentials } from '../../src/building/build-credentials.js';
import { runplanItself } from '../../src/process/app-user.js';
import { UserFiles } from '../../src/process/user-files.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { Logger, type LogLine } from '../../src/log/logger.js';
import type { PlannedFile, RunPlan } from '../../src/plan/schema.js';
import { tempDir } from '../helpers/temp.js';

const TOKEN = 'npm_build_only_token_5150';

function secretFile(path: string, afterBuild: PlannedFile['afterBuild']): PlannedFile {
  return { path, phase: 'build', mode: 0o600, secret: true, content: [{ text: 'x=' }, { env: 'NPM_TOKEN' }], reason: 'test', ...(afterBuild ? { afterBuild } : {}) };
}

/** Only the plan's files matter to what is removed: the rest of a plan is not read. */
const planOf = (files: PlannedFile[]) => ({ files }) as unknown as RunPlan;

async function buildDir(files: Record<string, string>) {
  const root = await tempDir('runplan-credentials-');
  const app = join(root, 'app');
  await mkdir(app);
  for (const [path, text] of Object.entries(files)) await writeFile(join(app, path), text, { mode: 0o600 });
  const lines: LogLine[] = [];
  return { root, app, logger: new Logger((l) => lines.push(l)), lines };
}

// Issue 21: NPM_TOKEN stayed in the built application's .npmrc and .yarnrc.yml.
describe('build credentials leave the built application', () => {
  it('removes or rewrites each file the plan says, and says so', async () => {
    const { app, logger, lines } = await buildDir({ '.npmrc': `//r/:_authToken=${TOKEN}\n`, '.yarnrc.yml': `npmAuthToken: "${TOKEN}"\n`, 'keep.conf': TOKEN });
    const plan = planOf([
      secretFile('.npmrc', { action: 'remove', reason: 'gone' }),
      secretFile('.yarnrc.yml', { action: 'replace', text: 'nodeLinker: node-modules\n', reason: 'rewritten' }),
      // No afterBuild: the application committed the credential itself.
      secretFile('keep.conf', undefined),
    ]);
    expect(await removeBuildCredentials(plan, app, new UserFiles(runplanItself()), logger)).toEqual(['.npmrc', '.yarnrc.yml']);
    expect(existsSync(join(app, '.npmrc'))).toBe(false);
    expect(await readFile(join(app, '.yarnrc.yml'), 'utf8')).toBe('nodeLinker: node-modules\n');
    expect((await lstat(join(app, '.yarnrc.yml'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(app, 'keep.conf'), 'utf8')).toBe(TOKEN);
    expect(lines.map((l) => l.text)).toEqual(['removed .npmrc: gone', 'rewrote .yarnrc.yml: rewritten']);
  });

  it('removes a link or a folder the build put in the place of the file, and nothing it leads to', async () => {
    const { root, app, logger } = await buildDir({});
    const host = join(root, 'host-file');
    await writeFile(host, 'host content\n');
    await symlink(host, join(app, '.npmrc'));
    await mkdir(join(app, '.yarnrc.yml'));
    await writeFile(join(app, '.yarnrc.yml', 'inner'), TOKEN);
    const plan = planOf([secretFile('.npmrc', { action: 'remove', reason: 'gone' }), secretFile('.yarnrc.yml', { action: 'replace', text: 'a: 1\n', reason: 'rewritten' })]);
    await removeBuildCredentials(plan, app, new UserFiles(runplanItself()), logger);
    expect(existsSync(join(app, '.npmrc'))).toBe(false);
    expect(await readFile(host, 'utf8')).toBe('host content\n');
    expect(await readFile(join(app, '.yarnrc.yml'), 'utf8')).toBe('a: 1\n');
  });

  it('refuses a folder above the file that now leads outside the application, touching nothing there', async () => {
    const { root, app, logger } = await buildDir({});
    const outside = join(root, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, '.npmrc'), 'host npmrc\n');
    await symlink(outside, join(app, 'web'));
    const plan = planOf([secretFile('web/.npmrc', { action: 'remove', reason: 'gone' })]);
    await expect(removeBuildCredentials(plan, app, new UserFiles(runplanItself()), logger)).rejects.toMatchObject({ code: CoreErrors.BUILD_FILE_ESCAPES_APP.code });
    expect(await readFile(join(outside, '.npmrc'), 'utf8')).toBe('host npmrc\n');
  });
});
