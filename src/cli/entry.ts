import module from 'node:module';
import { join } from 'node:path';
import { defaultCacheDir } from '../host/cache-dir.js';

/**
 * The `runplan` executable. Node.js 22.1 and later keep compiled code on disk
 * when asked before a module loads: turned on here, in a file of its own, so that
 * every later start skips compiling the CLI's bundle (cli-main.js). The cache
 * lives in runplan's cache directory (NODE_COMPILE_CACHE, NODE_DISABLE_COMPILE_CACHE
 * and --cache-dir's variable RUNPLAN_CACHE_DIR apply). On older Node.js this only
 * loads the CLI.
 */
const enableCompileCache = (module as { enableCompileCache?: (directory?: string) => unknown }).enableCompileCache;
if (enableCompileCache !== undefined && process.env.NODE_DISABLE_COMPILE_CACHE === undefined) {
  try {
    enableCompileCache(process.env.NODE_COMPILE_CACHE || join(defaultCacheDir(), 'node-compile-cache'));
  } catch {
    // A cache that cannot be made only costs speed.
  }
}
// Not a literal: the bundler leaves it to Node.js, which loads the CLI's own bundle beside this file.
await import(new URL('./cli-main.js', import.meta.url).href);
