#!/usr/bin/env node
// `npm run tarballs`: the two packages as npm tarballs, for a machine without this repository:
//   npm i -g ./runplan-<version>.tgz ./runplan-host-<version>.tgz
// (both in one command: runplan-host's dependency on runplan is met by the runplan installed beside it).
// In the repository, runplan-host depends on "runplan": "file:.." (the workspace's own folder), which
// means nothing once installed: its tarball names the version of runplan packed with it instead.
// Usage: node scripts/pack.mjs [--out DIR] (default: tarballs/); prints the two tarballs' paths.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureBuilt } from './bootstrap.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string', default: join(root, 'tarballs') } } });
const out = resolve(values.out);
mkdirSync(out, { recursive: true });
await ensureBuilt();

const pack = (dir) => {
  const [packed] = JSON.parse(execFileSync('npm', ['pack', dir, '--pack-destination', out, '--json'], { cwd: root, encoding: 'utf8' }));
  return join(out, packed.filename);
};
const manifestOf = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

const runplan = pack(root);
const stage = mkdtempSync(join(tmpdir(), 'runplan-host-pack-'));
try {
  const manifest = manifestOf(join(root, 'host'));
  manifest.dependencies.runplan = manifestOf(root).version;
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const part of manifest.files) cpSync(join(root, 'host', part), join(stage, part), { recursive: true });
  cpSync(join(root, 'LICENSE'), join(stage, 'LICENSE'));
  console.log(runplan);
  console.log(pack(stage));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
