import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { ROOT, TestHost } from './helpers/test-host.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'host', 'dist', 'cli.js');

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** runplan-host exactly as given (no --data added): for data folders other than the test host's. */
async function runplanHost(args: string[], cwd = ROOT): Promise<Result> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { cwd });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The exit status and the first code the CLI printed on stderr. */
function refusal(r: Result): { status: number; code: string | undefined } {
  return { status: r.code, code: /^error (RUNPLAN_[A-Z0-9_]+):/m.exec(r.stderr)?.[1] };
}

/** The exit status and the code of the `--json` error document on stdout. */
function jsonRefusal(r: Result): { status: number; code: string | undefined } {
  return { status: r.code, code: (JSON.parse(r.stdout) as { error: { code?: string } }).error.code };
}

interface ApiAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** An HTTP request on the host's API socket, as a console or a script would send it. */
function api(socket: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<ApiAnswer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, method, path, headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * runplan-host's command line as a user types it, against a real host (sshd,
 * Caddy, git, runplan on loopback): every refusal a user can meet, with its code
 * and exit status (2 for input, 1 otherwise); the commands around an app; and
 * secrets that reach the app but none of the host's outputs.
 */
describe('runplan-host CLI', () => {
  let host: TestHost;
  let key: string;
  let app: { id: string; name: string; gitRemote: string; url: string };
  let repo: string;
  let work: string;
  // Made of parts so that no secret is written whole in the sources a scan reads.
  const apiToken = ['sk', 'live', '7c1e5b9d2f4a8e06'].join('_');
  const dbPassword = ['pw', 'q8Zr31xVt'].join('-');
  const databaseUrl = `postgres://u:${dbPassword}@db.internal:5432/facts`;
  const secrets = [apiToken, dbPassword];
  let pushOutput = '';

  beforeAll(async () => {
    host = await TestHost.create();
    await host.serve();
    key = await host.key('alice', 'acme');
    app = await host.json(['create', '--type', 'node', 'facts', '--region', 'par', '--org', 'acme']);
    repo = await host.repository('host/facts');
    await host.git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
    work = await tempDir('runplan-host-cli-');
  }, 300_000);

  afterAll(async () => {
    await host?.dispose();
  });

  const token = () => readFile(join(host.data, 'api-token'), 'utf8').then((t) => t.trim());
  const socket = () => join(host.data, 'run', 'api.sock');

  it('refuses a command line it does not understand with RUNPLAN_HOST_E_INPUT_USAGE (exit 2), on stderr or in the --json error document', async () => {
    const [unknown, option, keyFile, envValue, envName] = await Promise.all([
      host.cli(['deploy-everything']),
      host.cli(['apps', '--frobnicate']),
      host.cli(['keys', 'add', 'acme']),
      host.cli(['env', 'set', 'GREETING', '--app', app.id]),
      host.cli(['env', 'rm', '--app', app.id]),
    ]);
    expect(refusal(unknown)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_USAGE' });
    expect(unknown.stderr).toContain('deploy-everything is not one');
    expect(unknown.stderr).toContain('fix: Run runplan-host --help');
    expect(refusal(option)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_USAGE' });
    expect(option.stderr).toContain('--frobnicate');
    expect(refusal(keyFile)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_USAGE' });
    expect(keyFile.stderr).toContain('keys add <org> <file.pub>');
    expect(refusal(envValue)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_USAGE' });
    expect(refusal(envName)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_USAGE' });
    const json = await host.cli(['create', 'facts2', '--json']);
    expect(jsonRefusal(json)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_USAGE' });
    expect(json.stderr).toBe('');
  });

  it('refuses a variable with a bad name, a NUL in its value or a value too long with RUNPLAN_HOST_E_INPUT_VARIABLE, never quoting the value', async () => {
    const long = 'x'.repeat(64 * 1024 + 1);
    const [name, tooLong] = await Promise.all([host.cli(['env', 'set', '1_BAD', 'v', '--app', app.id]), host.cli(['env', 'set', 'BIG', long, '--app', app.id])]);
    expect(refusal(name)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_VARIABLE' });
    expect(name.stderr).toContain('variable: 1_BAD');
    expect(refusal(tooLong)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_VARIABLE' });
    expect(tooLong.stderr).toContain('BIG');
    expect(tooLong.stderr).not.toContain('xxxxxxxx');
    // No command line can carry a NUL: a console or a script sends it through the API.
    const nul = await api(socket(), 'PATCH', `/apps/${app.id}/env`, { authorization: `Bearer ${await token()}` }, { set: { NUL_VALUE: `before\u0000${apiToken}` } });
    expect(nul.status).toBe(400);
    expect(nul.body.error).toMatchObject({ code: 'RUNPLAN_HOST_E_INPUT_VARIABLE', variable: 'NUL_VALUE' });
    expect(JSON.stringify(nul.body)).not.toContain(apiToken);
    const env = await host.json<{ variables: { name: string }[] }>(['env', '--app', app.id]);
    expect(env.variables.map((v) => v.name)).toEqual([]);
  });

  it('refuses a private key, two keys in one file and garbage with RUNPLAN_HOST_E_INPUT_KEY, never quoting the file; a bad organization with RUNPLAN_HOST_E_INPUT_ORG', async () => {
    const bob = await host.key('bob');
    const carol = await host.key('carol');
    const two = join(work, 'two.pub');
    await writeFile(two, `${await readFile(`${bob}.pub`, 'utf8')}${await readFile(`${carol}.pub`, 'utf8')}`);
    const garbage = join(work, 'garbage.pub');
    await writeFile(garbage, 'ssh-ed25519 this-is-not-a-key bob@laptop\n');
    const [privateKey, twoKeys, notAKey, missing, org, createOrg] = await Promise.all([
      host.cli(['keys', 'add', 'acme', bob]),
      host.cli(['keys', 'add', 'acme', two]),
      host.cli(['keys', 'add', 'acme', garbage]),
      host.cli(['keys', 'add', 'acme', join(work, 'nothing.pub')]),
      host.cli(['keys', 'add', 'Acme Corp', `${bob}.pub`]),
      host.cli(['create', '--type', 'node', 'other', '--region', 'par', '--org', 'ACME']),
    ]);
    const privateText = await readFile(bob, 'utf8');
    const privateBody = privateText.split('\n')[1] as string;
    expect(refusal(privateKey)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_KEY' });
    expect(privateKey.stderr).toContain('private key');
    expect(privateKey.stderr).toContain(`file: ${bob}`);
    expect(privateKey.stderr).not.toContain(privateBody);
    expect(refusal(twoKeys)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_KEY' });
    expect(twoKeys.stderr).toContain('2 lines');
    expect(refusal(notAKey)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_KEY' });
    expect(notAKey.stderr).toContain('not base64');
    expect(refusal(missing)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_KEY' });
    expect(refusal(org)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_ORG' });
    expect(refusal(createOrg)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_ORG' });
    const keys = await host.json<{ keys: { org: string }[] }>(['keys']);
    expect(keys.keys.map((k) => k.org)).toEqual(['acme']);
  });

  it('adds a key once (RUNPLAN_HOST_E_KEY_TAKEN the second time), removes it with keys rm, and refuses an unknown id with RUNPLAN_HOST_E_KEY_NOT_FOUND', async () => {
    const dave = await host.key('dave');
    const added = await host.json<{ key: { id: string } }>(['keys', 'add', 'acme', `${dave}.pub`]);
    const again = await host.cli(['keys', 'add', 'acme', `${dave}.pub`]);
    expect(refusal(again)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_KEY_TAKEN' });
    const removed = await host.cli(['keys', 'rm', added.key.id]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain(`removed ${added.key.id}`);
    const keys = await host.json<{ keys: { id: string }[] }>(['keys', '--org', 'acme']);
    expect(keys.keys.map((k) => k.id)).not.toContain(added.key.id);
    expect(keys.keys).toHaveLength(1);
    const [twice, unknown] = await Promise.all([host.cli(['keys', 'rm', added.key.id]), host.cli(['keys', 'rm', 'key_nothing', '--json'])]);
    expect(refusal(twice)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_KEY_NOT_FOUND' });
    expect(jsonRefusal(unknown)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_KEY_NOT_FOUND' });
  });

  it('refuses an unknown --app, and a folder without a remote of this host, with RUNPLAN_HOST_E_APP_NOT_FOUND', async () => {
    const folder = join(work, 'not-a-repository');
    await mkdir(folder);
    const [unknown, noRemote, other] = await Promise.all([
      host.cli(['env', '--app', 'no-such-app']),
      host.cli(['logs'], { cwd: folder }),
      host.cli(['open', '--app', app.id, '--org', 'someone-else']),
    ]);
    expect(refusal(unknown)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_APP_NOT_FOUND' });
    expect(unknown.stderr).toContain('no-such-app');
    expect(refusal(noRemote)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_APP_NOT_FOUND' });
    expect(noRemote.stderr).toContain('no --app was given');
    expect(refusal(other)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_APP_NOT_FOUND' });
  });

  it('refuses to restart or roll back an application never deployed with RUNPLAN_HOST_E_DEPLOY_NOTHING', async () => {
    const empty = await host.json<{ id: string }>(['create', '--type', 'node', 'empty', '--region', 'mtl', '--org', 'acme']);
    const [restart, rollback] = await Promise.all([host.cli(['restart', '--app', 'empty']), host.cli(['rollback', '--app', empty.id])]);
    expect(refusal(restart)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_DEPLOY_NOTHING' });
    expect(restart.stderr).toContain('never been deployed');
    expect(refusal(rollback)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_DEPLOY_NOTHING' });
  });

  it('imports an env file, and refuses a bad line naming the file and the line, never the value', async () => {
    const file = join(work, 'facts.env');
    await writeFile(file, `# the app's settings\nCC_HEALTH_CHECK_PATH=/health\nGREETING=hello from a file\nDATABASE_URL=${databaseUrl}\n`);
    const imported = await host.cli(['env', 'import', file], { cwd: repo });
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('3 variable(s) set on facts');
    const bad = join(work, 'bad.env');
    await writeFile(bad, `GREETING=hi\n\n${apiToken}\n`);
    const hashed = join(work, 'hashed.env');
    await writeFile(hashed, `API_TOKEN=${apiToken}#x\n`);
    const [pasted, cut, unreadable] = await Promise.all([
      host.cli(['env', 'import', bad, '--app', app.id]),
      host.cli(['env', 'import', hashed, '--app', app.id]),
      host.cli(['env', 'import', join(work, 'missing.env'), '--app', app.id]),
    ]);
    expect(refusal(pasted)).toEqual({ status: 2, code: 'RUNPLAN_E_ENV_MALFORMED_ASSIGNMENT' });
    expect(pasted.stderr).toContain(`${bad}:3`);
    expect(refusal(cut)).toEqual({ status: 2, code: 'RUNPLAN_E_ENV_MALFORMED_ASSIGNMENT' });
    expect(cut.stderr).toContain(`${hashed}:1`);
    expect(cut.stderr).toContain('API_TOKEN');
    for (const r of [pasted, cut]) for (const s of secrets) expect(r.stdout + r.stderr).not.toContain(s);
    expect(refusal(unreadable)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_INPUT_USAGE' });
    // Nothing of a refused file was set.
    const env = await host.json<{ variables: { name: string; value: string }[] }>(['env', '--app', app.id]);
    expect(env.variables.map((v) => v.name)).toEqual(['CC_HEALTH_CHECK_PATH', 'DATABASE_URL', 'GREETING']);
  });

  it('gives the app its secrets at a push, and shows them in none of the host outputs', async () => {
    const set = await host.cli(['env', 'set', 'API_TOKEN', apiToken], { cwd: repo });
    expect(set.code, set.stderr).toBe(0);
    const pushed = await host.push(repo, 'runplan', key);
    pushOutput = pushed.output;
    expect(pushed.code, pushed.output).toBe(0);
    expect(pushed.output).toContain(`==> release 1 serves ${app.url}`);
    // The app got each exact value.
    const facts = (await host.get(app.id, '/')).json<Record<string, unknown>>();
    expect(facts).toMatchObject({ app: 'host-facts', greeting: 'hello from a file', apiTokenSha256: sha256(apiToken), databaseUrlSha256: sha256(databaseUrl) });

    const env = await host.cli(['env', '--app', app.id]);
    expect(env.stdout).toContain('API_TOKEN=***');
    expect(env.stdout).toContain('DATABASE_URL=***');
    const envJson = await host.json<{ variables: { name: string; value: string; secret: boolean }[] }>(['env', '--app', app.id]);
    expect(envJson.variables.filter((v) => v.secret).map((v) => [v.name, v.value])).toEqual([
      ['API_TOKEN', '***'],
      ['DATABASE_URL', '***'],
    ]);
    const releases = await host.cli(['releases', '--app', app.id, '--json']);
    expect(JSON.parse(releases.stdout)).toMatchObject({ releases: [{ number: 1, status: 'succeeded', variableNames: expect.arrayContaining(['API_TOKEN', 'DATABASE_URL']) }] });
    const logs = await host.cli(['logs', '--app', app.id]);
    const stored = await api(socket(), 'GET', `/apps/${app.id}/releases/1`, { authorization: `Bearer ${await token()}` });
    expect(stored.status).toBe(200);
    expect((stored.body.log as string[]).join('\n')).toContain('==> release 1 serves');
    const caddyLog = await readFile(join(host.data, 'edge', 'caddy.log'), 'utf8');
    const outputs: Record<string, string> = {
      push: pushOutput,
      env: env.stdout + env.stderr,
      'env --json': JSON.stringify(envJson),
      'releases --json': releases.stdout,
      logs: logs.stdout,
      'serve output': host.serveOutput,
      'stored release (API)': JSON.stringify(stored.body),
      'caddy.log': caddyLog,
    };
    for (const [where, text] of Object.entries(outputs)) {
      expect(text.length, `${where} is empty: nothing was checked`).toBeGreaterThan(0);
      for (const s of secrets) expect(text, `${where} shows a secret`).not.toContain(s);
    }
    // --show is the one way to read them back.
    const shown = await host.json<{ variables: { name: string; value: string }[] }>(['env', '--app', app.id, '--show']);
    expect(shown.variables.find((v) => v.name === 'DATABASE_URL')?.value).toBe(databaseUrl);
  });

  it('lists the app (apps), its address (open), its release log and its processes (logs), and the host (status --json)', async () => {
    const apps = await host.json<{ apps: { id: string; name: string; serving: { release: number } | null }[] }>(['apps', '--org', 'acme']);
    expect(apps.apps.find((a) => a.id === app.id)).toMatchObject({ name: 'facts', serving: { release: 1 } });
    expect(apps.apps.find((a) => a.name === 'empty')).toMatchObject({ serving: null });
    const listed = await host.cli(['apps']);
    expect(listed.stdout).toContain(`${app.id}  acme/facts  node  par  release 1  ${app.url}`);
    const open = await host.cli(['open'], { cwd: repo });
    expect(open.stdout.trim()).toBe(app.url);
    expect(await host.json(['open', '--app', 'facts'])).toEqual({ url: app.url });
    const logs = await host.json<{ lines: string[] }>(['logs', '--app', app.id]);
    expect(logs.lines.join('\n')).toContain('host-facts listening on 0.0.0.0:');
    expect(logs.lines.join('\n')).toContain('==> release 1 serves');
    const status = await host.json<{ serving: boolean; apps: number; rootCertificate: string }>(['status']);
    expect(status).toMatchObject({ serving: true, apps: 2, rootCertificate: host.rootCertificate });
  });

  it('refuses a rollback to a release that does not exist with RUNPLAN_HOST_E_RELEASE_NOT_FOUND, through the CLI and the API', async () => {
    const [none, earlier] = await Promise.all([host.cli(['rollback', '7', '--app', app.id, '--json']), host.cli(['rollback', '--app', app.id])]);
    expect(jsonRefusal(none)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_RELEASE_NOT_FOUND' });
    expect(none.stdout).toContain('no succeeded release 7');
    // Release 1 is the only one: nothing before it to go back to.
    expect(refusal(earlier)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_RELEASE_NOT_FOUND' });
    expect(earlier.stderr).toContain('no succeeded release before release 1');
    const answer = await api(socket(), 'GET', `/apps/${app.id}/releases/99`, { authorization: `Bearer ${await token()}` });
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatchObject({ code: 'RUNPLAN_HOST_E_RELEASE_NOT_FOUND' });
  });

  it('answers an API request without the token, or with a wrong one, with 401 and RUNPLAN_HOST_E_API_UNAUTHORIZED', async () => {
    const right = await token();
    const wrong = `${right.slice(0, -1)}${right.endsWith('0') ? '1' : '0'}`;
    const answers = await Promise.all([
      api(socket(), 'GET', '/apps', {}),
      api(socket(), 'GET', '/apps', { authorization: `Bearer ${wrong}` }),
      api(socket(), 'GET', `/apps/${app.id}/env?show=1`, { authorization: 'Bearer ' }),
      api(socket(), 'GET', '/apps', { authorization: right }),
    ]);
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.body.error).toMatchObject({ code: 'RUNPLAN_HOST_E_API_UNAUTHORIZED' });
      expect(JSON.stringify(a.body)).not.toContain(apiToken);
    }
    expect((await api(socket(), 'GET', '/apps', { authorization: `Bearer ${right}` })).status).toBe(200);
  });

  it('refuses a data folder with no host with RUNPLAN_HOST_E_HOST_NOT_INITIALISED, for a command and for serve', async () => {
    const nothing = join(work, 'empty-data');
    await mkdir(nothing);
    const [status, serve] = await Promise.all([runplanHost(['status', '--data', nothing]), runplanHost(['serve', '--data', nothing, '--json'])]);
    expect(refusal(status)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_HOST_NOT_INITIALISED' });
    expect(status.stderr).toContain(`file: ${join(nothing, 'api-token')}`);
    expect(jsonRefusal(serve)).toEqual({ status: 2, code: 'RUNPLAN_HOST_E_HOST_NOT_INITIALISED' });
  });

  it('refuses a second serve of the same data folder with RUNPLAN_HOST_E_HOST_ALREADY_SERVING, and the first keeps serving', async () => {
    const second = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, 'serve', '--data', host.data], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (c: Buffer) => {
        output += c.toString();
      });
      child.stderr.on('data', (c: Buffer) => {
        output += c.toString();
      });
      child.once('exit', (code) => resolve({ code, output }));
    });
    expect(second.code).toBe(1);
    expect(second.output).toMatch(/^error RUNPLAN_HOST_E_HOST_ALREADY_SERVING: .*\(PID \d+\)/m);
    expect(second.output).toContain(`PID ${host.servePid}`);
    expect(process.kill(host.servePid as number, 0)).toBe(true);
    expect((await host.json<{ serving: boolean }>(['status'])).serving).toBe(true);
    expect((await host.get(app.id, '/')).json()).toMatchObject({ app: 'host-facts', apiTokenSha256: sha256(apiToken) });
  });

  it('tells a stopped host with RUNPLAN_HOST_E_HOST_NOT_SERVING (exit 1), and serve never printed a secret', async () => {
    expect(await host.stop()).toBe(0);
    const [status, apps] = await Promise.all([host.cli(['status']), host.cli(['apps', '--json'])]);
    expect(refusal(status)).toEqual({ status: 1, code: 'RUNPLAN_HOST_E_HOST_NOT_SERVING' });
    expect(status.stderr).toContain('fix: Start it with runplan-host serve');
    expect(jsonRefusal(apps)).toEqual({ status: 1, code: 'RUNPLAN_HOST_E_HOST_NOT_SERVING' });
    for (const s of secrets) expect(host.serveOutput).not.toContain(s);
  });
});
