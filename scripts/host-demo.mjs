#!/usr/bin/env node
// The README's main job: runplan-host on loopback ports, its data in the test cache;
// creates an application, pushes the Express fixture with git over SSH, prints the
// push output, and serves it over HTTPS until Ctrl-C, which stops everything it started.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'host', 'dist', 'cli.js');
const cache = process.env.RUNPLAN_TEST_CACHE_DIR ?? join(tmpdir(), 'runplan-test-cache');
const demo = join(cache, 'host-demo');
const data = join(demo, 'data');
const client = join(demo, 'client');
const ports = { ssh: process.env.DEMO_SSH_PORT ?? '2222', https: process.env.DEMO_HTTPS_PORT ?? '8443', http: process.env.DEMO_HTTP_PORT ?? '8080' };

const host = (args, options = {}) => execFileSync(process.execPath, [cli, ...args, '--data', data], { encoding: 'utf8', ...options });
const hostJson = (args) => JSON.parse(host([...args, '--json']));

mkdirSync(client, { recursive: true, mode: 0o700 });
// Searchable by the SSH account and runplan's application user, as the host's data folder needs.
for (const dir of [cache, demo]) execFileSync('chmod', ['o+x', dir]);
if (!existsSync(join(data, 'settings.json'))) host(['init', '--ssh-port', ports.ssh, '--https-port', ports.https, '--http-port', ports.http]);
const settings = JSON.parse(readFileSync(join(data, 'settings.json'), 'utf8'));

console.log(`==> runplan-host serve --data ${data}`);
const serve = spawn(process.execPath, [cli, 'serve', '--data', data], { stdio: ['ignore', 'inherit', 'pipe'] });
let stopping = false;
const stop = (signal) => {
  if (stopping) return;
  stopping = true;
  console.log(`\n==> ${signal}: stopping runplan-host (every release, the edge and sshd)`);
  serve.kill('SIGTERM');
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
serve.on('exit', (code) => process.exit(stopping ? 0 : (code ?? 1)));
await new Promise((resolve) => {
  let seen = '';
  serve.stderr.on('data', (chunk) => {
    process.stderr.write(chunk);
    seen += chunk;
    if (seen.includes('==> serving')) resolve();
  });
});

const key = join(client, 'id_ed25519');
if (!existsSync(key)) {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'demo', '-f', key]);
  host(['keys', 'add', 'demo', `${key}.pub`]);
}
const app = hostJson(['apps', '--org', 'demo']).apps.find((a) => a.name === 'express') ?? hostJson(['create', '--type', 'node', 'express', '--region', 'par', '--org', 'demo']);
console.log(`==> application ${app.name}: ${app.id}\n    git remote: ${app.gitRemote}`);
host(['env', 'set', 'CC_HEALTH_CHECK_PATH', '/', '--app', app.id]);

const repo = join(client, 'express');
rmSync(repo, { recursive: true, force: true });
cpSync(join(root, 'fixtures', 'node', 'express'), repo, { recursive: true, filter: (src) => !src.includes('node_modules') });
const git = (...args) => execFileSync('git', args, { cwd: repo, stdio: ['ignore', 'inherit', 'inherit'], env: gitEnv });
const gitEnv = {
  ...process.env,
  GIT_SSH_COMMAND: `ssh -i ${key} -o IdentitiesOnly=yes -o UserKnownHostsFile=${join(client, 'known_hosts')} -o StrictHostKeyChecking=accept-new -o BatchMode=yes`,
};
git('init', '-q', '-b', 'master');
git('add', '-A');
git('-c', 'user.name=demo', '-c', 'user.email=demo@example.com', 'commit', '-q', '-m', 'The Express fixture');
git('remote', 'add', 'runplan', app.gitRemote);
console.log(`==> git push runplan master (the deploy streams back as remote: lines)`);
try {
  git('push', '--force', 'runplan', 'master');
} catch {
  console.log('==> the push was rejected: the lines above say why; the host keeps serving what it served');
}
const hostName = `${app.id}.${settings.domain}`;
const certificate = join(data, 'edge', 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');
const curl = `curl -sS --cacert ${certificate} --resolve ${hostName}:${settings.httpsPort}:127.0.0.1 https://${hostName}:${settings.httpsPort}/`;
console.log(`\n==> serving ${app.url} — try:\n${curl}\n`);
try {
  console.log(execFileSync('sh', ['-c', curl], { encoding: 'utf8' }));
} catch {}
console.log('==> Ctrl-C stops everything');
