#!/usr/bin/env -S node --
// The command npm links (node_modules/.bin/runplan-host in a clone, the global bin
// folder after `npm i -g`). It is a file of the repository, not of dist/, because npm
// links a bin only when its file exists at install time, and `npm ci` in a clone runs
// before dist/ is built. The program is dist/cli.js, which runs whatever path started it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const program = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(program)) {
  process.stderr.write(`error runplan-host is not built: ${fileURLToPath(program)} is missing.\n  fix: run node scripts/bootstrap.mjs in the repository (it builds dist/ and host/dist/).\n`);
  process.exit(1);
}
await import(program.href);
