/**
 * Root never acts on what the application owns (issue 21; docs/security.md,
 * "Privilege model"). A hostile application replaces folders of its build —
 * its own folder (APP_FOLDER), node_modules, a warm-start cache folder, the
 * runtime's links — by links to a host folder, at every moment its code runs:
 * a pre-build hook, an install script, a post-build hook, a pre-run hook, its
 * own start, a run-succeeded hook. Whatever it swaps, and whether the
 * deployment then succeeds or fails, the host folder (root's, 0700, one
 * root-only file) keeps its content, modes and owners, and its content shows
 * up nowhere: not in runplan's output, not in the layer cache, not in npm's
 * cache of the application.
 */
import { execFileSync } from 'node:child_process';
import { chmod, lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startCli, type CliRun } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';
import { RUNS } from './arbitraries.js';

const CANARY_TEXT = 'CANARY-ROOT-ONLY-7d1f3c';
// after-install: a daemon an install script left behind, out of runplan's reach (new session, environment cleared), swaps once npm is done.
const MOMENTS = ['pre-build', 'install', 'after-install', 'post-build', 'pre-run', 'start', 'succeeded'] as const;
// Relative to the application's folder; '.' is the folder itself.
const PATHS = ['.', 'node_modules', 'node_modules/dep', 'a', 'a/data', '.runplan', '.runplan/bin', '.npmrc', 'node_modules/.bin'] as const;
// Run 1 deploys (and saves the layers), run 2 builds again (and restores them).
type Swap = { readonly run: 1 | 2; readonly moment: (typeof MOMENTS)[number]; readonly path: (typeof PATHS)[number] };

// Run by every hook with its moment: replaces each path planned for it by a link to the canary.
const SWAP_JS = `
const fs = require('fs'), path = require('path');
const moment = process.argv[2];
const plan = JSON.parse(process.env.SWAP_PLAN).filter((s) => String(s.run) === process.env.SWAP_RUN);
if (moment === 'install' && plan.some((s) => s.moment === 'after-install')) {
  const keep = { SWAP_PLAN: process.env.SWAP_PLAN, SWAP_RUN: process.env.SWAP_RUN, SWAP_CANARY: process.env.SWAP_CANARY };
  require('child_process').spawn(process.execPath, [__filename, 'after-install'], { detached: true, stdio: 'ignore', env: keep }).unref();
}
if (moment === 'after-install') {
  // npm writes the lock file last: the swap lands between npm's exit and runplan saving the layer.
  const until = Date.now() + 60000;
  while (!fs.existsSync('package-lock.json') && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
}
for (const s of plan) {
  if (s.moment !== moment) continue;
  const target = s.path === '.' ? process.cwd() : path.resolve(s.path);
  try { fs.renameSync(target, target + '.swapped-' + Date.now()); } catch {}
  try { fs.rmSync(target, { recursive: true, force: true }); } catch {}
  try { fs.symlinkSync(process.env.SWAP_CANARY, target); console.log('swapped ' + s.path + ' at ' + moment); }
  catch (e) { console.log('could not swap ' + s.path + ' at ' + moment + ': ' + e.code); }
}
`;

const SERVER_JS = `
require('child_process').execFileSync(process.execPath, ['swap.js', 'start'], { stdio: 'inherit' });
require('http').createServer((q, s) => s.end(JSON.stringify({ dep: require('dep') }))).listen(Number(process.env.PORT), '0.0.0.0');
`;

/** A repository whose application (in app/, APP_FOLDER) has a dependency from a local tarball: a node_modules layer without the network. */
async function hostileRepository(): Promise<string> {
  const repo = await tempDir('runplan-swaps-');
  const app = join(repo, 'app');
  const dep = join(repo, 'dep-src', 'package');
  await mkdir(dep, { recursive: true });
  await writeFile(join(dep, 'package.json'), JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js' }));
  await writeFile(join(dep, 'index.js'), "module.exports = 'dep 1.0.0';\n");
  await mkdir(app);
  execFileSync('tar', ['-czf', join(app, 'dep-1.0.0.tgz'), '-C', join(repo, 'dep-src'), 'package']);
  await writeFile(
    join(app, 'package.json'),
    JSON.stringify({ name: 'swaps', version: '1.0.0', private: true, scripts: { start: 'node server.js', postinstall: 'node swap.js install' }, dependencies: { dep: 'file:dep-1.0.0.tgz' } }),
  );
  await writeFile(join(app, '.gitignore'), 'node_modules\n');
  await writeFile(join(app, 'swap.js'), SWAP_JS);
  await writeFile(join(app, 'server.js'), SERVER_JS);
  return repo;
}

interface Snapshot {
  readonly [path: string]: { mode: number; uid: number; gid: number; content?: string };
}

/** Every entry of the canary with its mode, owner and content. */
async function snapshot(dir: string, base = dir): Promise<Snapshot> {
  const out: Record<string, Snapshot[string]> = {};
  const info = await lstat(dir);
  out[dir.slice(base.length) || '/'] = { mode: info.mode, uid: info.uid, gid: info.gid };
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const entry = await lstat(path);
    if (entry.isDirectory()) Object.assign(out, await snapshot(path, base));
    else out[path.slice(base.length)] = { mode: entry.mode, uid: entry.uid, gid: entry.gid, content: entry.isFile() ? await readFile(path, 'utf8') : '' };
  }
  return out;
}

/**
 * A root-only host folder (0700 folders, 0600 files) laid out like the folders
 * the application swaps, so that a path through the link leads somewhere: the
 * application's folder (a/data, node_modules/dep), a/ (data), node_modules (dep).
 */
async function canary(): Promise<string> {
  const dir = join(await tempDir('runplan-canary-'), 'host');
  const folders = ['a', 'a/data', 'data', 'node_modules', 'node_modules/dep', 'dep', 'bin', '.bin'];
  for (const folder of ['', ...folders]) {
    await mkdir(join(dir, folder), { recursive: true });
    await writeFile(join(dir, folder, 'secret'), `${CANARY_TEXT} ${folder}\n`, { mode: 0o600 });
  }
  for (const folder of ['', ...folders]) await chmod(join(dir, folder), 0o700);
  return dir;
}

/** Paths of files under `dir` (as root) that hold `text`. */
async function filesHolding(dir: string, text: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string): Promise<void> => {
    const info = await lstat(path).catch(() => undefined);
    if (!info) return;
    if (info.isDirectory()) for (const name of await readdir(path)) await walk(join(path, name));
    else if (info.isFile() && info.size < 50_000_000 && (await readFile(path, 'utf8')).includes(text)) found.push(path);
  };
  await walk(dir);
  return found;
}

async function settle(run: CliRun): Promise<string> {
  await Promise.race([run.waitFor('==> deployment healthy', 240_000).catch(() => undefined), run.exited]);
  if (run.child.exitCode === null) run.child.kill('SIGINT');
  await run.exited;
  return run.output();
}

/** Deploys the hostile application (build, start, health check, stop), then builds it again (the cached layers are restored). */
async function deployTwice(swaps: readonly Swap[]): Promise<{ host: string; before: Snapshot; output: string; cacheDir: string; appKey: string }> {
  const host = await canary();
  const before = await snapshot(host);
  const repo = await hostileRepository();
  const dirs = await deploymentDirs();
  const env = [
    ['APP_FOLDER', 'app'],
    ['CC_OVERRIDE_BUILDCACHE', 'node_modules:a/data'],
    ['CC_PRE_BUILD_HOOK', 'node swap.js pre-build'],
    ['CC_POST_BUILD_HOOK', 'mkdir -p a/data && echo warm > a/data/file && node swap.js post-build'],
    ['CC_PRE_RUN_HOOK', 'node swap.js pre-run'],
    ['CC_RUN_SUCCEEDED_HOOK', 'node swap.js succeeded'],
    ['NPM_TOKEN', 'npm_swaps_token_1234'],
    ['SWAP_PLAN', JSON.stringify(swaps)],
    ['SWAP_CANARY', host],
  ].flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  const port = await freePort();
  const first = await settle(startCli(['run', repo, '--port', String(port), ...env, '--env', 'SWAP_RUN=1'], dirs.env));
  const second = await settle(startCli(['build', repo, ...env, '--env', 'SWAP_RUN=2'], dirs.env));
  const [appKey] = await readdir(dirs.workDir);
  return { host, before, output: `${first}\n${second}`, cacheDir: dirs.cacheDir, appKey: appKey as string };
}

async function expectUntouched({ host, before, output, cacheDir, appKey }: Awaited<ReturnType<typeof deployTwice>>): Promise<void> {
  if (process.env.DEBUG_SWAPS) console.log(output);
  expect(await snapshot(host), output.slice(-3000)).toEqual(before);
  expect(output).not.toContain(CANARY_TEXT);
  for (const cache of ['layers', 'npm-cache']) expect(await filesHolding(join(cacheDir, cache, appKey), CANARY_TEXT)).toEqual([]);
  // Whatever fails fails with a code: never an internal error or a stack trace.
  expect(output).not.toContain('internal error');
  expect(output).not.toMatch(/^\s+at .*\(.*:\d+:\d+\)$/m);
}

const asRoot = process.getuid?.() === 0;

describe.runIf(asRoot)('links swapped in by the application never lead root into a host folder', () => {
  // The four critical cases of issue 21, each deterministic.
  it.each<[string, Swap[]]>([
    ['a post-build hook replaces the warm-start folder a/ (CC_OVERRIDE_BUILDCACHE=a/data)', [{ run: 1, moment: 'post-build', path: 'a' }]],
    ['a post-build hook replaces the APP_FOLDER folder itself (warm-start folder saved after it)', [{ run: 1, moment: 'post-build', path: '.' }]],
    ['a daemon an install script left replaces the APP_FOLDER folder before the node_modules layer is saved', [{ run: 1, moment: 'after-install', path: '.' }]],
    ['a pre-build hook replaces the APP_FOLDER folder before the cached node_modules layer is restored', [{ run: 2, moment: 'pre-build', path: '.' }]],
  ])(
    '%s',
    async (_name, swaps) => {
      await expectUntouched(await deployTwice(swaps));
    },
    600_000,
  );

  it('whatever the application swaps, whenever it swaps it', async () => {
    const swap = fc.record({ run: fc.constantFrom(1 as const, 2 as const), moment: fc.constantFrom(...MOMENTS), path: fc.constantFrom(...PATHS) });
    await fc.assert(
      fc.asyncProperty(fc.array(swap, { minLength: 1, maxLength: 3 }), async (swaps) => {
        await expectUntouched(await deployTwice(swaps));
      }),
      { numRuns: RUNS.deploy },
    );
  }, 1_800_000);
});
