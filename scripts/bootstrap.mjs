#!/usr/bin/env node
// Makes a fresh clone ready: installs npm dependencies when the lockfile changed,
// and rebuilds dist/ when a source file is newer than it. With --for-tests it also
// installs what the test suite needs from Debian (see test-prerequisites.mjs).
// Only node, npm and git are assumed present.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const major = Number(process.versions.node.split('.')[0]);
if (major < 20) {
  console.error(`runplan needs Node.js 20 or newer; this is ${process.version}.`);
  process.exit(1);
}

function run(cmd, args) {
  console.log(`==> ${cmd} ${args.join(' ')}`);
  execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });
}

function newest(path) {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let max = 0;
  for (const name of readdirSync(path)) max = Math.max(max, newest(join(path, name)));
  return max;
}

export function ensureDependencies() {
  const installed = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(installed) || statSync(join(root, 'package-lock.json')).mtimeMs > statSync(installed).mtimeMs) {
    run('npm', ['ci', '--no-audit', '--no-fund']);
  }
}

export function ensureBuilt() {
  const cli = join(root, 'dist', 'cli.js');
  const sources = Math.max(...['src', 'buildpacks', 'tsup.config.ts', 'package.json'].map((p) => newest(join(root, p))));
  if (!existsSync(cli) || sources > statSync(cli).mtimeMs) run('npx', ['tsup', '--silent']);
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
  ensureDependencies();
  ensureBuilt();
  if (process.argv.includes('--for-tests')) {
    const { ensureTestPrerequisites } = await import('./test-prerequisites.mjs');
    await ensureTestPrerequisites();
  }
}
