import { basename, dirname, join } from 'node:path';
import { writablePathInside } from '../files/app-path.js';
import type { Logger } from '../log/logger.js';
import type { RunPlan } from '../plan/schema.js';
import type { UserFiles } from '../process/user-files.js';

/**
 * Once the build steps are done, the build-phase files that held build credentials
 * (`.npmrc`, `.yarnrc.yml` with NPM_TOKEN) become what the plan's `afterBuild` says:
 * removed, or replaced by the file without them (the application's own committed
 * text). The built application — its code, its static files, a copy of the build
 * directory — then holds no credential the application did not commit itself.
 * Whatever stands at the path now goes (the build's code may have put a link or a
 * folder there); the change is made as the application's user, in its own build
 * (docs/security.md, "Privilege model"). Returns the paths it changed.
 */
export async function removeBuildCredentials(plan: RunPlan, appDir: string, files: UserFiles, logger: Logger): Promise<string[]> {
  const changed: string[] = [];
  for (const file of plan.files) {
    if (file.phase !== 'build' || file.afterBuild === undefined) continue;
    const target = join(await writablePathInside(appDir, dirname(file.path), 'planned file folder'), basename(file.path));
    await files.remove(target);
    if (file.afterBuild.action === 'replace') await files.write(target, file.afterBuild.text, file.mode);
    logger.info(`${file.afterBuild.action === 'remove' ? 'removed' : 'rewrote'} ${file.path}: ${file.afterBuild.reason}`);
    changed.push(file.path);
  }
  return changed;
}
