import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** What the local builder and runner fill the plan's placeholders with. */
export function localBindings(appDir: string): Bindings {
  return { APP_HOME: appDir, RUN_DIR: localRunDir(appDir) };
}
