import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import type { Bindings } from '../plan/placeholders.js';

/**
 * The local executor's ${RUN_DIR} for a built application: short (unix socket
 * paths are limited to 107 bytes, build directories are long) and derived from
 * the build's directory, so that files written during the build (an nginx
 * configuration naming Puma's socket) already hold the value the processes get.
 * The runner makes it when the processes start and removes it once they stop.
 */
export function localRunDir(appDir: string): string {
  return join(tmpdir(), `runplan-run-${createHash('sha256').update(appDir).digest('hex').slice(0, 16)}`);
}

/**
 * What the local builder and runner fill the plan's placeholders with. Plans put
 * them into configuration files (nginx's, quoted) and commands, so a directory
 * whose name would need escaping there is refused rather than written.
 */
export function localBindings(appDir: string): Bindings {
  if (/["$\\`]/.test(appDir) || /[\x00-\x1f\x7f]/.test(appDir)) {
    throw CoreErrors.HOST_INVALID_SETTING.create({
      message: `the build directory ${JSON.stringify(appDir)} contains '"', '$', '\\', '\`' or a control character, which plans cannot carry into configuration files; choose a work directory (--work-dir, RUNPLAN_WORK_DIR) without them.`,
    });
  }
  return { APP_HOME: appDir, RUN_DIR: localRunDir(appDir) };
}
