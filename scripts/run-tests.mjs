#!/usr/bin/env node
// The README's test command after bootstrap: runs vitest (arguments pass through), then
// checks that the run left the OS temporary directory as it found it. Whatever a test,
// a build or an application left there fails the run, by name; only the documented test
// cache (and the JVM's hsperfdata directory) may stay. (Checked here rather than in vitest's global teardown, whose errors do
// not change vitest's exit status, and after vitest has removed its own temporaries.)
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const temp = tmpdir();
const testCache = process.env.RUNPLAN_TEST_CACHE_DIR ?? join(temp, 'runplan-test-cache');
const before = new Set(readdirSync(temp));

const vitest = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'vitest', 'vitest.mjs');
const { status, signal } = spawnSync(process.execPath, [vitest, 'run', ...process.argv.slice(2)], { stdio: 'inherit' });
if (signal) process.kill(process.pid, signal);

// hsperfdata_<user> is the JVM's own: every JVM of the user shares it and removes its file in it
// on exit, and Java places it in /tmp whatever TMPDIR says.
const kept = (name) => join(temp, name) === testCache || /^hsperfdata_/.test(name);
const left = readdirSync(temp).filter((name) => !before.has(name) && !kept(name));
if (left.length > 0) {
  console.error(
    `\nThe tests left ${left.length} entries in ${temp} (each test removes what it creates):\n${left
      .sort()
      .map((n) => `  ${join(temp, n)}`)
      .join('\n')}`,
  );
  process.exit(status || 1);
}
process.exit(status ?? 1);
