import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildInUse, useBuild } from '../../src/process/builds-in-use.js';
import { appWorkspace, createBuildDirectory } from '../../src/building/workspace.js';
import { assembleEnvironment } from '../../src/env/assemble.js';
import { Logger, memorySink } from '../../src/log/logger.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { appUser } from '../../src/process/app-user.js';
import { DEFAULT_RESTART } from '../../src/plan/restart-policy.js';
import { LocalProcessRunner } from '../../src/engines/local/local-process-runner.js';
import { InstantClock } from '../../src/time/clock.js';
import { writableTempDir } from '../helpers/temp.js';

/**
 * A host starts the next release while the one it replaced still drains (issue 39):
 * promoting a build must keep every build whose processes still run, not only the
 * current one and the one it replaces.
 */
describe('builds in use', () => {
  async function workspaceWithSource() {
    const root = await writableTempDir();
    const source = join(root, 'app');
    await mkdir(source);
    await writeFile(join(source, 'index.js'), 'console.log(1)\n');
    return { source, workspace: appWorkspace(join(root, 'work'), source), user: await appUser() };
  }

  it('survives the promotion of two later builds while in use, and goes with the first promotion after', async () => {
    const { source, workspace, user } = await workspaceWithSource();
    const draining = await createBuildDirectory(workspace, source, '', user);
    await draining.commit();
    const unuse = useBuild(draining.appDir);
    const serving = await createBuildDirectory(workspace, source, '', user);
    await serving.commit();
    // The next deploy, during the drain: it keeps itself and `serving` (the one it replaces), and `draining` because it runs.
    const next = await createBuildDirectory(workspace, source, '', user);
    await next.commit();
    expect(existsSync(draining.dir)).toBe(true);
    unuse();
    expect(buildInUse(draining.dir)).toBe(false);
    const last = await createBuildDirectory(workspace, source, '', user);
    await last.commit();
    expect(existsSync(draining.dir)).toBe(false);
    expect(existsSync(serving.dir)).toBe(false);
    expect(existsSync(next.dir)).toBe(true);
  });

  it('counts a build in use while the local runner runs processes in it (or in its folder), until they stopped', async () => {
    const { source, workspace, user } = await workspaceWithSource();
    const build = await createBuildDirectory(workspace, source, '', user);
    const folder = join(build.dir, 'web');
    await mkdir(folder);
    const plan = {
      processes: [{ name: 'worker', role: 'worker', command: { kind: 'shell', script: 'sleep 30' }, cwd: '.', env: {}, pathPrepend: [], port: null, restart: DEFAULT_RESTART, stopGraceMs: 1_000 }],
      files: [],
      build: { steps: [] },
      layers: [],
      environment: { variables: [] },
    } as unknown as RunPlan;
    const running = await new LocalProcessRunner({ clock: new InstantClock() }).start({ plan, appDir: folder, env: assembleEnvironment({ application: {} }), logger: new Logger(memorySink()) });
    try {
      expect(buildInUse(build.dir)).toBe(true);
    } finally {
      await running.stop();
    }
    expect(buildInUse(build.dir)).toBe(false);
  });
});
