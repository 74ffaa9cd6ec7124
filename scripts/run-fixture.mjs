#!/usr/bin/env node
// Deploys one fixture by hand the way the tests do: `npm run fixture -- node/engines-caret [--port 8080]`.
// It adds the files a fixture shares with others (fixtures/<type>/_shared/), passes the
// variables and arguments of its expect.json, and serves it until Ctrl-C.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [name, ...rest] = process.argv.slice(2);
const [type, fixtureCase, variantName] = (name ?? '').split('/');
const dir = join(root, 'fixtures', type ?? '', fixtureCase ?? '');
if (!type || !fixtureCase || !existsSync(join(dir, 'expect.json'))) {
  console.error('usage: npm run fixture -- <type>/<case>[/<variant>] [runplan run options], e.g. node/engines-caret');
  process.exit(2);
}

const { variants, ...base } = JSON.parse(readFileSync(join(dir, 'expect.json'), 'utf8'));
const variant = variantName === undefined ? {} : variants?.find((v) => v.name === variantName);
if (!variant) {
  console.error(`${name}: no such variant; variants: ${(variants ?? []).map((v) => v.name).join(', ')}`);
  process.exit(2);
}
const expectation = { ...base, ...variant, env: { ...base.env, ...variant.env }, addons: { ...base.addons, ...variant.addons }, hostEnv: { ...base.hostEnv, ...variant.hostEnv } };

const placeholders = JSON.stringify(expectation).match(/\{\{\w+\}\}/g);
if (expectation.setup || expectation.services?.length || placeholders) {
  console.error(`${name} needs a service its test starts (${expectation.setup ?? expectation.services?.join(', ') ?? placeholders.join(', ')}); run it through its test file under test/e2e/.`);
  process.exit(2);
}

let appDir = dir;
if (expectation.shared?.length) {
  appDir = join(mkdtempSync(join(tmpdir(), `runplan-fixture-${fixtureCase}-`)), fixtureCase);
  cpSync(dir, appDir, { recursive: true });
  for (const file of expectation.shared) cpSync(join(dir, '..', '_shared', file), join(appDir, file));
}

const args = ['run', appDir, ...(expectation.args ?? []), ...rest];
for (const [k, v] of Object.entries(expectation.env)) args.push('--env', `${k}=${v}`);
for (const [addon, vars] of Object.entries(expectation.addons)) for (const [k, v] of Object.entries(vars)) args.push('--addon-env', `${addon}:${k}=${v}`);
if (expectation.type) args.push('--type', expectation.type);
// No gem server is reachable here: gems come from Debian's packages, as in the tests.
const hostEnv = type === 'ruby' ? { RUNPLAN_RUBY_GEM_SOURCE: 'local', ...expectation.hostEnv } : expectation.hostEnv;
console.log(`runplan ${args.join(' ')}\n(expected: ${expectation.rule})`);
const child = spawn(process.execPath, [join(root, 'dist', 'cli.js'), ...args], { stdio: 'inherit', env: { ...process.env, ...hostEnv } });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => process.exit(code ?? 1));
