#!/usr/bin/env node
// Makes a fresh clone ready: installs npm dependencies when the lockfile changed,
// and rebuilds dist/ when a source file is newer than it. With --for-tests it also
// installs what the test suite needs from Debian (see test-prerequisites.mjs).
// Only node, npm and git are assumed present. Every phase that can take more than a
// few seconds says so first, with how long it usually takes, and is never silent for
// more than 10 s (progress.mjs).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPhase } from './progress.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const major = Number(process.versions.node.split('.')[0]);
if (major < 20) {
  console.error(`runplan needs Node.js 20 or newer; this is ${process.version}.`);
  process.exit(1);
}

function newest(path) {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let max = 0;
  for (const name of readdirSync(path)) max = Math.max(max, newest(join(path, name)));
  return max;
}

export async function ensureDependencies() {
  const installed = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(installed) || statSync(join(root, 'package-lock.json')).mtimeMs > statSync(installed).mtimeMs) {
    // runplan-host's better-sqlite3 is compiled by its install (no prebuilt binary can be downloaded here).
    const { BUILD_TOOLS, ensureDebianPackages } = await import('./test-prerequisites.mjs');
    await ensureDebianPackages(BUILD_TOOLS, 'for all three, about 250 MB installed: about 1 min');
    const nodedir = await nodeHeaders();
    await runPhase({
      what: 'installing the npm dependencies',
      detail: "about 300 MB into node_modules; runplan-host's better-sqlite3 is compiled from source, which prints nothing for minutes",
      usually: '2-4 min on 2 cores, longer on a busy machine',
      command: 'npm',
      args: ['ci', '--no-audit', '--no-fund'],
      cwd: root,
      env: { ...process.env, npm_config_nodedir: nodedir },
    });
  }
}

/**
 * A folder holding this Node.js's own headers (include/node/common.gypi), which
 * node-gyp compiles against: npm's configured nodedir or Node's prefix when they
 * have them; otherwise Node.js of this very version from the npm registry (the
 * node-<os>-<arch> package carries its headers), unpacked once into the test
 * cache. node-gyp's own download of headers cannot work here (only the npm
 * registry is reachable), and headers of another version would build a module
 * that fails to load.
 */
export async function nodeHeaders() {
  const has = (dir) => dir && existsSync(join(dir, 'include', 'node', 'common.gypi'));
  let configured = '';
  try {
    configured = execFileSync('npm', ['config', 'get', 'nodedir'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {}
  const prefix = join(dirname(process.execPath), '..');
  if (has(configured) && existsSync(join(configured, 'bin', 'node')) && execFileSync(join(configured, 'bin', 'node'), ['-v'], { encoding: 'utf8' }).trim() === process.version) return configured;
  if (has(prefix)) return prefix;
  const cache = process.env.RUNPLAN_TEST_CACHE_DIR ?? join(tmpdir(), 'runplan-test-cache');
  const dir = join(cache, 'node-headers', `${process.version}-${process.platform}-${process.arch}`);
  const unpacked = join(dir, 'package');
  if (has(unpacked)) return unpacked;
  mkdirSync(dir, { recursive: true });
  const name = `node-${process.platform}-${process.arch}@${process.versions.node}`;
  await runPhase({
    what: `downloading Node.js ${process.version}'s headers for node-gyp`,
    detail: `${name} from the npm registry, about 50 MB, into ${dir}`,
    usually: '5-30 s',
    command: 'npm',
    args: ['pack', name, '--pack-destination', dir, '--silent'],
    cwd: dir,
  });
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  execFileSync('tar', ['-xzf', join(dir, tarball), '-C', dir, 'package/include']);
  rmSync(join(dir, tarball), { force: true });
  return unpacked;
}

export async function ensureBuilt() {
  const cli = join(root, 'dist', 'cli.js');
  const sources = Math.max(...['src', 'buildpacks', 'tsup.config.ts', 'package.json'].map((p) => newest(join(root, p))));
  if (!existsSync(cli) || sources > statSync(cli).mtimeMs) {
    await runPhase({
      what: 'building runplan',
      detail: 'dist/ with tsup: ES modules, CommonJS and type declarations',
      usually: '1-2 min on 2 cores, longer on a busy machine',
      command: 'npx',
      args: ['tsup', '--silent'],
      cwd: root,
    });
  }
  // runplan-host (host/), built on runplan's dist/ like any other user of the package.
  const host = join(root, 'host');
  const hostCli = join(host, 'dist', 'cli.js');
  const hostSources = Math.max(...['src', 'tsup.config.ts', 'package.json'].map((p) => newest(join(host, p))), statSync(cli).mtimeMs);
  if (!existsSync(hostCli) || hostSources > statSync(hostCli).mtimeMs) {
    await runPhase({ what: 'building runplan-host', detail: 'host/dist/ with tsup', usually: '15-60 s', command: 'npx', args: ['tsup', '--silent'], cwd: host });
  }
}

/**
 * As root, runplan builds and runs applications as its unprivileged user, which
 * must be able to pass through / to reach the work and cache directories. A
 * root directory of mode 0700 (seen in chroots made with mktemp -d) stops every
 * build with RUNPLAN_E_HOST_APP_USER: give others search permission, as any
 * Debian root directory has (0755).
 */
export function ensureRootSearchable() {
  if (process.getuid?.() !== 0) return;
  const mode = statSync('/').mode & 0o7777;
  if ((mode & 0o001) !== 0) return;
  console.log(`==> chmod o+x / (mode ${mode.toString(8)}: runplan's unprivileged user could not reach its builds)`);
  chmodSync('/', mode | 0o001);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureRootSearchable();
  await ensureDependencies();
  await ensureBuilt();
  if (process.argv.includes('--for-tests')) {
    const { ensureTestPrerequisites } = await import('./test-prerequisites.mjs');
    await ensureTestPrerequisites();
  } else if (process.argv.includes('--for-host')) {
    const { HOST_PACKAGES, ensureDebianPackages } = await import('./test-prerequisites.mjs');
    await ensureDebianPackages(HOST_PACKAGES, 'for all of them, about 100 MB installed: 20-60 s');
  }
}
