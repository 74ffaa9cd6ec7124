#!/usr/bin/env node
// Deploys one fixture by hand the way the tests do: `npm run fixture -- node/engines-caret [--port 8080]`.
// It prepares the copy the tests deploy (shared files, templates filled with this machine's
// versions, preparation commands: see fixture-kit.mjs), passes the variables and arguments of
// its expect.json, and serves it until Ctrl-C.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillPlaceholders, listFixtures, machinePlaceholder, placeholdersIn, prepareCopy } from './fixture-kit.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [name, ...rest] = process.argv.slice(2);
const fixture = listFixtures().find((f) => `${f.type}/${f.name}` === name);
if (!fixture) {
  const cases = listFixtures().filter((f) => name && `${f.type}/${f.name}`.startsWith(`${name}/`));
  console.error(
    cases.length > 0 ? `${name} has variants: ${cases.map((f) => f.name).join(', ')}` : 'usage: npm run fixture -- <type>/<case>[/<variant>] [runplan run options], e.g. node/engines-caret',
  );
  process.exit(2);
}

// What runplan is given; the expected answers (requests, output) are the tests' business.
const { env = {}, addons = {}, hostEnv = {}, args = [], type, setup, services = [] } = fixture.expect;
const given = { env, addons, hostEnv, args };
const unfilled = placeholdersIn(given).filter((p) => !/^\{\{RUBY_\w+\}\}$/.test(p));
if (setup || services.length > 0 || unfilled.length > 0) {
  console.error(`${name} needs a service its test starts (${setup ?? [...services, ...unfilled].join(', ')}); run it through its test file under test/e2e/.`);
  process.exit(2);
}
const filled = fillPlaceholders(given, machinePlaceholder);
const { dir, cleanup } = prepareCopy(fixture);

const cliArgs = ['run', dir, ...filled.args, ...rest];
for (const [k, v] of Object.entries(filled.env)) cliArgs.push('--env', `${k}=${v}`);
for (const [addon, vars] of Object.entries(filled.addons)) for (const [k, v] of Object.entries(vars)) cliArgs.push('--addon-env', `${addon}:${k}=${v}`);
if (type) cliArgs.push('--type', type);
// No gem server is reachable here: gems come from Debian's packages, as in the tests.
const runEnv = fixture.type === 'ruby' ? { RUNPLAN_RUBY_GEM_SOURCE: 'local', ...filled.hostEnv } : filled.hostEnv;
console.log(`runplan ${cliArgs.join(' ')}\n(expected: ${fixture.expect.rule})`);
const child = spawn(process.execPath, ['--', join(root, 'dist', 'cli.js'), ...cliArgs], { stdio: 'inherit', env: { ...process.env, ...runEnv } });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => {
  if (cleanup) rmSync(cleanup, { recursive: true, force: true });
  process.exit(code ?? 1);
});
