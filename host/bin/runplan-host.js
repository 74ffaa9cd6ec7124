#!/usr/bin/env -S node --max-semi-space-size=1 --
// The command npm links (node_modules/.bin/runplan-host in a clone, the global bin
// folder after `npm i -g`). It is a file of the repository, not of dist/, because npm
// links a bin only when its file exists at install time, and `npm ci` in a clone runs
// before dist/ is built. The program is dist/cli.js, which runs whatever path started it.
// --max-semi-space-size=1: V8's young generation held to 1 MB a half instead of growing to
// 16 MB, for `serve`, a long-lived process whose live heap is small (23 MB with ten
// applications) but whose committed heap grew to 70 MB while it built: with 50
// applications its RSS stays under the 150 MB goal (docs/perf.md, "runplan-host at fifty
// applications"). Only where the young objects are collected changes, not what is kept;
// V8 reads it at start only, so it is an option of node here, not a setting of the program.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const program = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(program)) {
  process.stderr.write(`error runplan-host is not built: ${fileURLToPath(program)} is missing.\n  fix: run node scripts/bootstrap.mjs in the repository (it builds dist/ and host/dist/).\n`);
  process.exit(1);
}
await import(program.href);
