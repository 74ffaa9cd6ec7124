import { IMAGE_BINDINGS } from '../../src/engines/image/scripts.js';
import { lowerPlan } from '../../src/lowering/lower.js';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRootEvidence, resolveWorkspaceRoot, type RootEvidence } from '../../buildpacks/node/workspace-root.js';
import { renderDockerfile } from '../../src/engines/image/dockerfile.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { SubdirectorySource } from '../../src/files/sub-source.js';
import { checkAppFolderOnDisk, normaliseAppFolder } from '../../src/planning/app-folder.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';

const code = (c: { code: string }) => expect.objectContaining({ code: c.code, variable: 'APP_FOLDER' });

describe('APP_FOLDER as a path (normaliseAppFolder)', () => {
  it.each([
    ['apps/web', 'apps/web'],
    ['./apps//web/', 'apps/web'],
    ['apps/x/../web', 'apps/web'],
    ['.', ''],
    ['  apps/web  ', 'apps/web'],
  ])('%j is %j', (value, folder) => expect(normaliseAppFolder(value)).toBe(folder));

  it.each(['/etc', '..', 'a/../..', 'C:\\app', 'a\0b'])('refuses %j as outside the repository', (value) => {
    expect(() => normaliseAppFolder(value)).toThrowError(code(CoreErrors.APP_FOLDER_OUTSIDE));
  });
});

describe('APP_FOLDER on disk (checkAppFolderOnDisk)', () => {
  const root = mkdtempSync(join(tmpdir(), 'runplan-app-folder-'));
  const outside = mkdtempSync(join(tmpdir(), 'runplan-app-folder-outside-'));
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  mkdirSync(join(root, 'apps', 'web'), { recursive: true });
  writeFileSync(join(root, 'apps', 'file'), '');
  symlinkSync(outside, join(root, 'out'));
  symlinkSync(join(root, 'apps'), join(root, 'inside'));

  it('accepts a folder, also through a link that stays inside', () => {
    expect(checkAppFolderOnDisk(root, 'apps/web')).toBe(join(root, 'apps', 'web'));
    expect(checkAppFolderOnDisk(root, 'inside/web')).toBe(join(root, 'inside', 'web'));
    expect(checkAppFolderOnDisk(root, '')).toBe(root);
  });

  it('refuses a missing folder and a file', () => {
    expect(() => checkAppFolderOnDisk(root, 'apps/api')).toThrowError(code(CoreErrors.APP_FOLDER_NOT_FOUND));
    expect(() => checkAppFolderOnDisk(root, 'apps/file')).toThrowError(code(CoreErrors.APP_FOLDER_NOT_FOUND));
  });

  it('refuses a link out of the repository without saying where it points', () => {
    let message = '';
    try {
      checkAppFolderOnDisk(root, 'out');
    } catch (error) {
      expect(error).toMatchObject({ code: CoreErrors.APP_FOLDER_OUTSIDE.code });
      message = (error as Error).message;
    }
    expect(message).toContain('out');
    expect(message).not.toContain(outside);
  });
});

const FOLDER_APP = {
  'README.md': 'a monorepo\n',
  'apps/web/package.json': JSON.stringify({ name: 'web', scripts: { start: 'node server.js' } }),
  'apps/web/package-lock.json': '{"lockfileVersion":3,"packages":{}}',
  'apps/web/.gitignore': 'node_modules\n',
};

describe('APP_FOLDER in the plan', () => {
  const plan = (files: Record<string, string>, env: Record<string, string>) =>
    createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: new MemorySource(files), appDir: '/srv/repo', env: { application: env } });

  it('detects and plans the folder, and says so in the plan', async () => {
    const { plan: p } = await plan(FOLDER_APP, { APP_FOLDER: './apps/web/' });
    expect(p.app).toMatchObject({ type: 'node', folder: 'apps/web' });
    expect(p.decisions[0]).toMatchObject({ id: 'app.folder', requested: './apps/web/', source: 'env APP_FOLDER (application variables)', resolved: 'apps/web' });
    expect(p.layers[0]?.cacheKey).not.toBeNull();
    expect(p.decisions.some((d) => d.id === 'node.workspace')).toBe(false);
  });

  it('leaves the plan as it was without APP_FOLDER, or with an empty one', async () => {
    const root = { 'package.json': JSON.stringify({ name: 'root', main: 'x.js' }), 'x.js': '' };
    for (const env of [{}, { APP_FOLDER: '' }] as Record<string, string>[]) {
      const { plan: p } = await plan(root, env);
      expect('folder' in p.app).toBe(false);
      expect(p.decisions.some((d) => d.id === 'app.folder')).toBe(false);
    }
    const { plan: dot } = await plan(root, { APP_FOLDER: '.' });
    expect('folder' in dot.app).toBe(false);
    expect(dot.decisions[0]).toMatchObject({ id: 'app.folder', resolved: '.' });
  });

  it('refuses a folder that is not there rather than planning the root', async () => {
    await expect(plan({ ...FOLDER_APP, 'package.json': '{}' }, { APP_FOLDER: 'apps/api' })).rejects.toMatchObject({ code: CoreErrors.APP_FOLDER_NOT_FOUND.code });
    await expect(plan(FOLDER_APP, { APP_FOLDER: 'README.md' })).rejects.toMatchObject({ code: CoreErrors.APP_FOLDER_NOT_FOUND.code });
  });

  it("uses a workspace root's lock file and .npmrc when the folder has no lock file, without caching node_modules", async () => {
    const { 'apps/web/package-lock.json': _lock, ...member } = FOLDER_APP;
    const files = { ...member, 'package.json': JSON.stringify({ private: true, workspaces: ['apps/*'] }), 'yarn.lock': '', '.npmrc': 'fund=false\n' };
    const { plan: p } = await plan(files, { APP_FOLDER: 'apps/web', NPM_TOKEN: 'npm_0123456789abcdef' });
    expect(p.decisions.find((d) => d.id === 'node.workspace')).toMatchObject({ source: 'repository root package.json workspaces', resolved: 'the repository root, using its yarn.lock, .npmrc' });
    expect(p.decisions.find((d) => d.id === 'node.build-tool' || d.id === 'node.tool')?.resolved ?? '').toMatch(/yarn/);
    expect(p.layers[0]).toMatchObject({ name: 'node_modules', cacheKey: null });
    expect(p.build.steps.find((s) => s.name === 'install')?.env.npm_config_userconfig).toBe('${APP_HOME}/.npmrc');
  });
});

describe('workspace roots (resolveWorkspaceRoot)', () => {
  const root = (o: Partial<RootEvidence>): RootEvidence => ({ packageJson: undefined, pnpmWorkspace: false, lockfiles: ['package-lock.json'], npmrc: false, ...o });
  it('needs declared workspaces and a root lock file, and no lock file in the folder', () => {
    const declared = JSON.stringify({ workspaces: { packages: ['apps/*'] } });
    expect(resolveWorkspaceRoot('apps/web', [], root({ packageJson: declared }))?.lockfiles).toEqual(['package-lock.json']);
    expect(resolveWorkspaceRoot('apps/web', [], root({ pnpmWorkspace: true, lockfiles: ['pnpm-lock.yaml'] }))?.decision.source).toBe('repository root pnpm-workspace.yaml');
    expect(resolveWorkspaceRoot('apps/web', ['package-lock.json'], root({ packageJson: declared }))).toBeUndefined();
    expect(resolveWorkspaceRoot('apps/web', [], root({ packageJson: declared, lockfiles: [] }))).toBeUndefined();
    expect(resolveWorkspaceRoot('apps/web', [], root({ packageJson: '{"workspaces": []}' }))).toBeUndefined();
    expect(resolveWorkspaceRoot('apps/web', [], root({ packageJson: '{not json' }))).toBeUndefined();
  });

  it('reads the evidence through a file source', async () => {
    const repo = new MemorySource({ 'package.json': '{}', 'pnpm-lock.yaml': '', 'pnpm-workspace.yaml': 'packages: []\n', 'apps/web/package.json': '{}' });
    expect(await readRootEvidence(repo)).toEqual({ packageJson: '{}', pnpmWorkspace: true, lockfiles: ['pnpm-lock.yaml'], npmrc: false });
    expect(await new SubdirectorySource(repo, 'apps/web').list('')).toEqual(['package.json']);
  });
});

describe('APP_FOLDER in an image', () => {
  it('puts the repository in /repo and makes /app the folder, so every path of the plan stays the same', async () => {
    const { plan: p } = await createPlan({
      registry: testRegistry(),
      inventory: TEST_PLAN_INVENTORY,
      files: new MemorySource(FOLDER_APP),
      appDir: '/srv/repo',
      env: { application: { APP_FOLDER: 'apps/web' } },
    });
    const dockerfile = renderDockerfile({
      lowered: lowerPlan(p, IMAGE_BINDINGS),
      digest: 'sha256:0',
      base: 'base',
      secretFiles: [{ id: 'file-0', path: '.npmrc' }],
      hostCa: false,
      hostNpmrc: false,
      appScope: 'app',
    });
    expect(dockerfile).toContain('ln -s /repo/apps/web /app');
    expect(dockerfile).toContain('COPY --chown=1000:1000 app/ /repo/');
    expect(dockerfile).toContain('COPY --chown=1000:1000 runtime/ /repo/apps/web/');
    expect(dockerfile).toContain('target=/repo/apps/web/.npmrc');
    expect(dockerfile).toContain('WORKDIR /app');
    const odd = { ...p, app: { ...p.app, folder: 'my app' } };
    expect(() => renderDockerfile({ lowered: lowerPlan(odd, IMAGE_BINDINGS), digest: 'sha256:0', base: 'base', secretFiles: [], hostCa: false, hostNpmrc: false, appScope: 'app' })).toThrowError(
      expect.objectContaining({ code: CoreErrors.IMAGE_BUILD_FAILED.code, variable: 'APP_FOLDER' }),
    );
  });
});
