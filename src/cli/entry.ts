import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCacheDir } from '../host/cache-dir.js';
import { type CodeCacheDir, runWithCodeCache } from './code-cache.js';

/**
 * The `runplan` executable: a small file that runs the CLI's bundle
 * (cli-main.cjs) from V8's code cache, so that every start after the first skips
 * compiling it (code-cache.ts). The cache goes to NODE_COMPILE_CACHE when set, else
 * into runplan's cache directory (RUNPLAN_CACHE_DIR…), and only once a command
 * has made that directory: a `plan` with an inventory given writes nothing.
 * NODE_DISABLE_COMPILE_CACHE turns it off, as Node.js's own compile cache.
 */
const cache: CodeCacheDir | undefined =
  process.env.NODE_DISABLE_COMPILE_CACHE !== undefined
    ? undefined
    : process.env.NODE_COMPILE_CACHE
      ? { dir: process.env.NODE_COMPILE_CACHE, createParents: true }
      : { dir: join(defaultCacheDir(), 'node-compile-cache'), createParents: false };
// The bundle's import() calls, made from this ES module beside it: they resolve as from the bundle.
runWithCodeCache(fileURLToPath(new URL('./cli-main.cjs', import.meta.url)), cache, (specifier) => import(specifier));
