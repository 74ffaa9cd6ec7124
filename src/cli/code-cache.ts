import { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import vm from 'node:vm';

/** Where the code cache goes; with createParents false, only when the directory's parent exists. */
export interface CodeCacheDir {
  readonly dir: string;
  readonly createParents: boolean;
}

/**
 * Runs the CLI's CommonJS bundle with V8's code cache: compiling the bundle was
 * the largest share of a cold `runplan plan`. The first run compiles and, at exit,
 * keeps what V8 compiled (the functions that ran included) in `cache.dir`; later
 * runs hand it back to V8, which checks it against the source, V8's version and
 * its flags, and compiles afresh when it does not match. This is what Node.js
 * 22's module.enableCompileCache does, on every Node.js runplan supports.
 *
 * The bundle's import() calls are `_rpimp(…)` (tsup.config.ts renames them):
 * Node.js 20 loses the dynamic-import callback of a script compiled from a cache,
 * so the entry, an ES module, imports for it.
 *
 * The cache is read only from a regular file of this user that no one else can
 * write, opened without following a link: it becomes code this process runs.
 */
export function runWithCodeCache(bundle: string, cache: CodeCacheDir | undefined, importModule: (specifier: string) => Promise<unknown>): void {
  const names = cache === undefined ? undefined : cacheNames(bundle, cache.dir);
  const cachedData = names === undefined ? undefined : readOwnFile(names.file);
  // The bundle is ASCII (esbuild escapes the rest), so this decoding is the fast one.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname, _rpimp) {${readFileSync(bundle, 'utf8')}\n})`, {
    filename: bundle,
    cachedData,
  });
  if (cache !== undefined && names !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
    process.once('exit', () => keep(names, cache.createParents, script));
  }
  const module = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(bundle), module, bundle, dirname(bundle), importModule);
}

/**
 * The cache file of this bundle under this Node.js and its options; `runtime` starts
 * the names of every bundle's caches on this Node.js, `bundle` those of this bundle.
 */
interface CacheNames {
  readonly file: string;
  readonly runtime: string;
  readonly bundle: string;
}

function cacheNames(bundle: string, dir: string): CacheNames {
  const runtime = `runplan-cli-${process.version}-${process.arch}-`;
  const { size, mtimeMs } = statSync(bundle);
  const ofBundle = `${runtime}${size}-${Math.trunc(mtimeMs)}-`;
  return { file: join(dir, `${ofBundle}${fnv1a(`${process.execArgv.join(' ')}|${process.env.NODE_OPTIONS ?? ''}`)}.v8`), runtime, bundle: ofBundle };
}

function readOwnFile(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes the cache, never half a file, and removes those of other bundles on this
 * Node.js (an older runplan's); those of this bundle under other options stay.
 */
function keep({ file, runtime, bundle }: CacheNames, createParents: boolean, script: vm.Script): void {
  try {
    const directory = dirname(file);
    // Without createParents, only inside a directory that exists: a missing parent throws, and nothing is written.
    try {
      mkdirSync(directory, { recursive: createParents, mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
    renameSync(temporary, file);
    for (const name of readdirSync(directory)) {
      if (name.startsWith(runtime) && !name.startsWith(bundle) && name.endsWith('.v8')) rmSync(join(directory, name), { force: true });
    }
  } catch {
    // A cache that cannot be written only costs speed.
  }
}

/** A short, stable name for Node's options: they change what V8 compiles. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(36);
}
