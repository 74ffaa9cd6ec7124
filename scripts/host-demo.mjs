#!/usr/bin/env node
// The README's main job: runplan-host on loopback ports, its data in the test cache;
// creates an application, pushes the Express fixture with git over SSH, prints the
// push output, and serves it over HTTPS until Ctrl-C, which stops everything it started.
// It ends with the commands that deploy an application of one's own to the same host.
// serve starts in a clean environment of its own (host/src/clean-environment.ts): nothing
// of the shell or of `npm run` (npm_config_*) reaches it or the builds it runs.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { phase } from './progress.mjs';

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

const starting = phase(
  'starting runplan-host',
  '3-10 s, and about 10 s more per application it brings back',
  `serve --data ${data}: sshd, the HTTPS edge, the API; the applications deployed before are deployed again`,
);
// Ctrl-C stops everything the demo started: its applications too (an operator's serve leaves them serving).
const serve = spawn(process.execPath, [cli, 'serve', '--stop-apps-on-exit', '--data', data], { stdio: ['ignore', 'inherit', 'pipe'] });
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
    const text = chunk.toString();
    starting.saw(text);
    seen += text;
    if (seen.includes('==> serving')) resolve();
  });
});
starting.stop();

const key = join(client, 'id_ed25519');
if (!existsSync(key)) {
  console.log(`==> runplan-host keys add demo ${key}.pub (a key made for the demo: it may push to organization demo's applications)`);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'demo', '-f', key]);
  host(['keys', 'add', 'demo', `${key}.pub`]);
}
console.log('==> runplan-host create --type node express --region par --org demo (once), and env set CC_HEALTH_CHECK_PATH /');
const app = hostJson(['apps', '--org', 'demo']).apps.find((a) => a.name === 'express') ?? hostJson(['create', '--type', 'node', 'express', '--region', 'par', '--org', 'demo']);
console.log(`==> application ${app.name}: ${app.id}\n    git remote: ${app.gitRemote}`);
host(['env', 'set', 'CC_HEALTH_CHECK_PATH', '/', '--app', app.id]);

const repo = join(client, 'express');
rmSync(repo, { recursive: true, force: true });
cpSync(join(root, 'fixtures', 'node', 'express'), repo, { recursive: true, filter: (src) => !src.includes('node_modules') });
// git and ssh get what they need, not the shell's variables nor npm's.
const gitEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? '/',
  LANG: process.env.LANG ?? 'C.UTF-8',
  GIT_SSH_COMMAND: `ssh -i ${key} -o IdentitiesOnly=yes -o UserKnownHostsFile=${join(client, 'known_hosts')} -o StrictHostKeyChecking=accept-new -o BatchMode=yes`,
};
const git = (...args) => execFileSync('git', args, { cwd: repo, stdio: ['ignore', 'inherit', 'inherit'], env: gitEnv });
git('init', '-q', '-b', 'master');
git('add', '-A');
git('-c', 'user.name=demo', '-c', 'user.email=demo@example.com', 'commit', '-q', '-m', 'The Express fixture');
git('remote', 'add', 'runplan', app.gitRemote);

/** git push with its remote: lines as they come, and the phase's lines whenever the build is silent. */
function push() {
  const first = app.serving === null || app.serving === undefined;
  const pushing = phase(
    'deploying the Express fixture',
    first ? '1-3 min the first time, about 10 s later' : 'about 10 s',
    `git push runplan master; the deploy streams back as remote: lines${first ? ' (the first one downloads Node.js and npm into the cache, then installs express)' : ''}`,
  );
  return new Promise((resolve) => {
    const child = spawn('git', ['push', '--force', 'runplan', 'master'], { cwd: repo, env: gitEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      from.on('data', (chunk) => {
        pushing.saw(chunk.toString());
        to.write(chunk);
      });
    }
    child.once('close', (code) => {
      pushing.stop(code === 0);
      resolve(code === 0);
    });
  });
}
if (!(await push())) console.log('==> the push was rejected: the lines above say why; the host keeps serving what it served');

// The application's default name (app-<uuid>.<domain>), as its URL says.
const hostName = new URL(app.url).hostname;
const certificate = join(data, 'edge', 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');
const curl = `curl -sS --cacert ${certificate} --resolve ${hostName}:${settings.httpsPort}:127.0.0.1 https://${hostName}:${settings.httpsPort}/`;
console.log(`\n==> serving ${app.url} — try:\n${curl}\n`);
try {
  console.log(execFileSync('sh', ['-c', curl], { encoding: 'utf8' }));
} catch {}

// The same host, driven by hand: the commands are the documented ones (docs/host.md, "Your own app on the demo's host").
const bin = join(root, 'node_modules', '.bin');
console.log(`==> your own application on this host: in another terminal (this one keeps serving until Ctrl-C), run
    export RUNPLAN_HOST_DATA=${data}
    export PATH="${bin}:$PATH"
    runplan-host keys add demo ~/.ssh/id_ed25519.pub
    cd my-app
    runplan-host create --type node my-app --region par --org demo
    git remote add runplan git+ssh://${settings.sshUser}@${settings.listenAddress}:${settings.sshPort}/app_….git && git push runplan master
  - the first two lines find this host (its data folder) and its runplan-host command;
  - keys add: your public key (ssh-keygen -t ed25519 makes one), allowed to push to organization demo;
  - my-app: a git repository of a Node.js application (a package.json, a server listening on $PORT);
  - the last line is the one create ends with, its application id in place of app_…; ssh asks once whether to trust the host's key;
  - then env set, restart, rollback, releases and logs act on that application from its folder (docs/host.md).`);
console.log('==> Ctrl-C stops everything');
