import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, ROOT, runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';

const EXPRESS = join(ROOT, 'fixtures', 'node', 'express');

/** Runs dist/cli.js as an executable, as npm's bin link and a shell run it: through its shebang. */
function runExecutable(args: readonly string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(CLI, [...args], { cwd: ROOT, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** An env file whose NODE_OPTIONS would make Node run a script writing `marker`, if Node read the file. */
async function payloadEnvFile(): Promise<{ file: string; marker: string }> {
  const dir = await tempDir('runplan-payload-');
  const marker = join(dir, 'payload-ran');
  await writeFile(join(dir, 'payload.cjs'), `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\n`);
  const file = join(dir, 'app.env');
  await writeFile(file, `NODE_OPTIONS=--require=${join(dir, 'payload.cjs')}\n`);
  return { file, marker };
}

describe('env files never reach Node (nodejs/node#54232)', () => {
  it('refuses --env-file with a coded error through the executable, and the NODE_OPTIONS payload does not run', async () => {
    const { file, marker } = await payloadEnvFile();
    for (const args of [
      ['plan', EXPRESS, '--env-file', file],
      ['plan', EXPRESS, `--env-file=${file}`],
      ['plan', EXPRESS, '--env-file-if-exists', file],
    ]) {
      const { code, output } = await runExecutable(args);
      expect(output, args.join(' ')).toContain('RUNPLAN_E_CLI_USAGE: --env-file');
      expect(output).toContain('--app-env-file');
      expect(code).toBe(2);
      expect(existsSync(marker)).toBe(false);
    }
  });

  it('reads --app-env-file and --addon-env-file as variables only: the payload does not run', async () => {
    const { file, marker } = await payloadEnvFile();
    const { code, output } = await runExecutable(['plan', EXPRESS, '--json', '--app-env-file', file, '--addon-env-file', `pg=${file}`]);
    expect(code, output).toBe(0);
    expect(existsSync(marker)).toBe(false);
    const plan = JSON.parse(output) as { environment: { variables: { name: string; source: string }[] } };
    expect(plan.environment.variables.find((v) => v.name === 'NODE_OPTIONS')?.source).toBe('application');
  });

  it("gives runplan's coded ENV_FILE_UNREADABLE for a missing env file or a directory, not Node's exit 9", async () => {
    const dir = await tempDir('runplan-envdir-');
    for (const path of [join(dir, 'missing.env'), dir]) {
      const { code, output } = await runExecutable(['plan', EXPRESS, '--app-env-file', path]);
      expect(code).toBe(2);
      expect(output).toContain('RUNPLAN_E_ENV_FILE_UNREADABLE');
      expect(output).toContain(`file: ${path}`);
    }
    const { code, output } = await runExecutable(['plan', EXPRESS, '--env-file', join(dir, 'missing.env')]);
    expect(code).toBe(2);
    expect(output).toContain('RUNPLAN_E_CLI_USAGE');
  });

  it('documents --app-env-file in --help', async () => {
    const { output } = await runCli(['--help']);
    expect(output).toContain('--app-env-file FILE');
  });
});

describe('command-line values are quoted bounded and escaped, secrets not at all', () => {
  it('says what --port was given instead of NaN', async () => {
    const { code, output } = await runCli(['plan', EXPRESS, '--port', `abc\u001b[31m${'x'.repeat(200)}`]);
    expect(code).toBe(2);
    expect(output).toContain('RUNPLAN_E_HOST_INVALID_SETTING: --port must be an integer from 1 to 65535, got "abc\\u001b[31mxxx');
    expect(output).not.toContain('NaN');
    expect(output).not.toContain('\u001b');
    expect(output).not.toContain('x'.repeat(60));
  });

  it('shows nothing of a malformed --env or --addon-env, which may be a secret pasted alone', async () => {
    for (const args of [
      ['--env', 'NPM_TOKEN npm_pasted_secret_0042'],
      ['--addon-env', 'NPM_TOKEN npm_pasted_secret_0042'],
      ['--addon-env', 'NPM_TOKEN=npm_pasted:secret_0042'],
    ]) {
      const { code, output } = await runCli(['plan', EXPRESS, ...args]);
      expect(code).toBe(2);
      expect(output).toMatch(/RUNPLAN_E_(ENV_MALFORMED_ASSIGNMENT|CLI_USAGE)/);
      expect(output).not.toContain('npm_pasted');
    }
  });

  it('blames an env file holding a NUL byte, naming it and the line, never the value', async () => {
    const dir = await tempDir('runplan-envnul-');
    const file = join(dir, 'prod.env');
    await writeFile(file, 'A=1\nNPM_TOKEN=npm_nul\u0000secret_0042\n');
    const { code, output } = await runCli(['plan', EXPRESS, '--app-env-file', file]);
    expect(code).toBe(2);
    expect(output).toContain(`RUNPLAN_E_ENV_VALUE_INVALID: ${file}:2 contains a NUL byte`);
    expect(output).toContain(`file: ${file}`);
    expect(output).not.toContain('secret_0042');
  });

  it('refuses CC_NPM_REGISTRY with a password and an NPM_TOKEN with a line break, showing neither', async () => {
    const registry = await runCli(['plan', EXPRESS, '--env', 'NPM_TOKEN=npm_tok_0042', '--env', 'CC_NPM_REGISTRY=https://user:pw_s3cret_0042@registry.example.test/']);
    expect(registry.code).toBe(2);
    expect(registry.output).toContain('RUNPLAN_E_NODE_NPM_REGISTRY_INVALID');
    expect(registry.output).not.toMatch(/pw_s3cret_0042|npm_tok_0042/);
    const token = await runCli(['plan', EXPRESS, '--env', 'NPM_TOKEN=npm_tok_0042\nscript-shell=/tmp/evil']);
    expect(token.code).toBe(2);
    expect(token.output).toContain('RUNPLAN_E_NODE_NPM_TOKEN_INVALID');
    expect(token.output).not.toMatch(/npm_tok_0042|script-shell/);
  });

  it('ends a failed `runplan check` with a coded error', async () => {
    const port = await freePort();
    const { code, output } = await runCli(['check', `http://127.0.0.1:${port}/`, '--timeout', '1']);
    expect(code).toBe(1);
    expect(output).toContain('Health check failed:');
    expect(output).toContain('RUNPLAN_E_HEALTH_NOT_LISTENING');
  });
});

describe('secrets in builds', () => {
  it('keeps an SSH key of 30 KB out of a failing build step, line by line', async () => {
    const lines = Array.from({ length: 420 }, (_, i) => `b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn${String(i).padStart(4, '0')}`);
    const key = ['-----BEGIN OPENSSH PRIVATE KEY-----', ...lines, '-----END OPENSSH PRIVATE KEY-----'].join('\n');
    const dir = await tempDir('runplan-app-');
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'keyed', version: '1.0.0', main: 'a.js', scripts: { install: 'echo "$DEPLOY_PRIVATE_KEY"; exit 7' } }));
    await writeFile(join(dir, 'a.js'), '');
    const envFile = join(await tempDir('runplan-envkey-'), 'keys.env');
    await writeFile(envFile, `DEPLOY_PRIVATE_KEY="${key}"\n`);
    const dirs = await deploymentDirs();
    const { code, output } = await runCli(['build', dir, '--app-env-file', envFile], dirs.env);
    expect(code, output.slice(-2000)).toBe(1);
    expect(output).toContain('RUNPLAN_E_BUILD_STEP_FAILED');
    expect(output).toContain('[install] ***');
    for (const line of lines) expect(output).not.toContain(line.slice(-20));
  });

  it("gives npm a per-build log directory and the application's own cache: a failing install leaves its registry error nowhere", async () => {
    const token = `npm_logged_${Date.now().toString(36)}_secret`;
    // A registry that refuses every request and quotes the credentials it was sent in the error body.
    const server = createServer((req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `internal error for ${req.headers.authorization ?? 'nobody'}` }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const dir = await tempDir('runplan-app-');
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'private', version: '1.0.0', main: 'a.js', dependencies: { 'left-pad-private': '1.0.0' } }));
    await writeFile(join(dir, 'a.js'), '');
    const dirs = await deploymentDirs();
    const logs = join(homedir(), '.npm', '_logs');
    try {
      const { code, output } = await runCli(
        ['build', dir, '--env', `NPM_TOKEN=${token}`, '--env', `CC_NPM_REGISTRY=http://127.0.0.1:${port}`, '--env', 'CC_NODE_BUILD_TOOL=npm', '--env', 'npm_config_fetch_retries=0'],
        dirs.env,
      );
      expect(code, output.slice(-2000)).not.toBe(0);
      // npm did send the token and print the body quoting it (redacted): the test reaches the case.
      expect(output).toContain('internal error for Bearer ***');
      expect(output).not.toContain(token);
      // Nothing of the build in the user's shared npm logs (other programs may write there: look for the token).
      for (const name of existsSync(logs) ? await readdir(logs) : []) {
        const text = await readFile(join(logs, name), 'utf8').catch(() => '');
        expect(text.includes(token), name).toBe(false);
      }
      // The build's temporary directory, npm's logs with it, is gone; the app's npm cache is under runplan's.
      const [app] = await readdir(dirs.workDir);
      expect(await readdir(join(dirs.workDir, app as string, 'tmp')).catch(() => [])).toEqual([]);
      expect(await readdir(join(dirs.cacheDir, 'npm-cache'))).toContain(app);
    } finally {
      server.close();
    }
  });
});
