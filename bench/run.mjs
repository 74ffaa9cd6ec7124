#!/usr/bin/env node
// Performance figures of runplan, all printed in one run. Numbers are measured,
// never asserted in tests. Each bench/*.bench.mjs module exports `title` and
// `run({ args })`.
//   npm run bench                         every module
//   npm run bench -- --only plan          modules whose file name starts with "plan"
//   npm run bench -- --plans 5000         options are passed to every module
import { readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { root, targets } from './lib.mjs';

const args = {};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const m = /^--([^=]+)(?:=(.*))?$/.exec(argv[i]);
  if (m) args[m[1]] = m[2] ?? (argv[i + 1] && !argv[i + 1].startsWith('--') ? argv[++i] : 'true');
}

console.log(`runplan bench — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${new Date().toISOString().slice(0, 10)}`);
const modules = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.bench.mjs'))
  .sort();
for (const file of modules) {
  if (args.only && !file.startsWith(args.only)) continue;
  const mod = await import(pathToFileURL(join(root, 'bench', file)).href);
  console.log(`\n## ${mod.title} (${file})`);
  await mod.run({ args });
}
if (targets.length > 0) {
  console.log('\n## Targets (issues 14, 27 and 39), from the figures above');
  console.log('| What | runplan | Against | Ratio | Met |');
  console.log('|---|---|---|---|---|');
  for (const t of targets) console.log(`| ${t.what} | ${t.runplan} | ${t.against} | ${t.limit} | ${t.met ? 'met' : 'not met'}${t.note ? ` — ${t.note}` : ''} |`);
}
console.log('\nreproduce: npm run bench');
