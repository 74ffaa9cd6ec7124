import { homedir } from 'node:os';
import { join } from 'node:path';

/** runplan's cache directory when the host names none (in a module of its own: the CLI's entry reads it before loading anything else). */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RUNPLAN_CACHE_DIR) return env.RUNPLAN_CACHE_DIR;
  // Root's home is private (0700): runplan's unprivileged user could not reach runtimes or builds under it.
  if (!env.XDG_CACHE_HOME && process.getuid?.() === 0) return '/var/cache/runplan';
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'runplan');
}
