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

/** Runs the executable through bash, for redirections and process substitution as a host script writes them. */
function runInBash(script: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

type PlanVariables = { environment: { variables: { name: string; secret: boolean; value?: string; origin: string }[] } };

// Issue 21: `--env "CC_SSH_PRIVATE_KEY=$(cat key)"` put the key in runplan's arguments, which every process reads in /proc.
describe("secret values stay out of runplan's arguments", () => {
  const token = 'npm_from_environment_0042';

  it("takes the value of --env NAME and --addon-env ADDON:NAME from runplan's own environment, as docker run -e NAME does", async () => {
    const { code, stdout, stderr } = await runInBash(`"${CLI}" plan "${EXPRESS}" --json --env NPM_TOKEN --env PLAIN_SETTING --addon-env pg:PG_PASSWORD`, {
      NPM_TOKEN: token,
      PLAIN_SETTING: 'plain value 1',
      PG_PASSWORD: 'pg_from_environment_0042',
    });
    expect(code, stderr).toBe(0);
    const variables = (JSON.parse(stdout) as PlanVariables).environment.variables;
    expect(variables.find((v) => v.name === 'PLAIN_SETTING')).toMatchObject({ value: 'plain value 1', origin: '--env', secret: false });
    expect(variables.find((v) => v.name === 'NPM_TOKEN')).toMatchObject({ secret: true, origin: '--env' });
    expect(variables.find((v) => v.name === 'PG_PASSWORD')).toMatchObject({ secret: true, origin: 'addon pg' });
    // The plan names warning codes its steps may raise (warnOn): a warning raised now is in plan.warnings or on stderr.
    expect((JSON.parse(stdout) as { warnings: unknown[] }).warnings).toEqual([]);
    expect(stderr).not.toMatch(/RUNPLAN_W_/);
    expect(`${stdout}${stderr}`).not.toMatch(/npm_from_environment|pg_from_environment/);
  });

  it('reads an env file given as a file descriptor or by process substitution: the value touches neither the arguments nor the disk', async () => {
    const dir = await tempDir('runplan-fd-');
    const file = join(dir, 'secrets.env');
    await writeFile(file, `NPM_TOKEN=${token}\n`);
    for (const script of [`"${CLI}" plan "${EXPRESS}" --json --app-env-file /dev/fd/3 3<"${file}"`, `"${CLI}" plan "${EXPRESS}" --json --app-env-file <(printf 'NPM_TOKEN=%s\\n' "$SECRET_SOURCE")`]) {
      const { code, stdout, stderr } = await runInBash(script, { SECRET_SOURCE: token });
      expect(code, stderr).toBe(0);
      const npmToken = (JSON.parse(stdout) as PlanVariables).environment.variables.find((v) => v.name === 'NPM_TOKEN');
      expect(npmToken, script).toMatchObject({ secret: true, origin: expect.stringMatching(/^\/dev\/fd\/\d+:1$/) });
      expect(`${stdout}${stderr}`).not.toContain(token);
    }
  });

  it('warns, naming the variable and never its value, when a secret is written in the arguments; --json keeps one document on stdout', async () => {
    const json = await runCli(['plan', EXPRESS, '--json', '--env', `NPM_TOKEN=${token}`, '--addon-env', 'pg:DATABASE_URL=postgres://app:pw_in_argv_0042@db/app', '--env', 'NODE_ENV=production']);
    expect(json.code, json.output).toBe(0);
    expect(JSON.parse(json.stdout)).toHaveProperty('environment');
    expect(json.stderr).toContain("RUNPLAN_W_ENV_SECRET_ON_COMMAND_LINE: the value of the secret variable NPM_TOKEN is written in runplan's arguments (--env NPM_TOKEN=…)");
    expect(json.stderr).toContain('(--addon-env pg:DATABASE_URL=…)');
    expect(json.stderr).toContain('Give --env NPM_TOKEN without "=…" and the value in runplan\'s own environment (export NPM_TOKEN)');
    expect(json.stderr).not.toContain('NODE_ENV');
    expect(json.output).not.toMatch(/npm_from_environment|pw_in_argv/);
    const events = await runCli(['plan', EXPRESS, '--events', '--env', `NPM_TOKEN=${token}`]);
    expect(events.code, events.output).toBe(0);
    const warnings = events.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; level?: string; text?: string })
      .filter((e) => e.level === 'warn');
    expect(warnings).toEqual([expect.objectContaining({ type: 'log', text: expect.stringContaining('RUNPLAN_W_ENV_SECRET_ON_COMMAND_LINE') })]);
  });

  it("refuses --env NAME when runplan's environment has no such variable, with a coded error", async () => {
    const { code, output } = await runCli(['plan', EXPRESS, '--env', 'RUNPLAN_TEST_UNSET_TOKEN']);
    expect(code).toBe(2);
    expect(output).toContain("RUNPLAN_E_ENV_NOT_SET: --env RUNPLAN_TEST_UNSET_TOKEN takes the value from runplan's own environment");
    expect(output).toContain('export RUNPLAN_TEST_UNSET_TOKEN');
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

describe('the errors the CLI reports', () => {
  it('hold no secret value given to the command, whatever failed (a --buildpack that cannot be loaded quotes the password it knows)', async () => {
    const secret = `db_pw_${Date.now().toString(36)}_0042`;
    const module = join(await tempDir('runplan-bp-'), 'leaky.mjs');
    // The module is loaded in an environment without the application's variables: it knows the password by its own means (a file of its own).
    await writeFile(module, `throw new Error(${JSON.stringify(`cannot reach postgres://app:${secret}@db.test/app (${secret})`)});\n`);
    for (const mode of [[], ['--json'], ['--events']]) {
      const { code, output } = await runCli(['plan', EXPRESS, '--buildpack', module, '--env', 'DB_PASSWORD', ...mode], { DB_PASSWORD: secret });
      expect(code, output).toBe(2);
      expect(output).toContain('RUNPLAN_E_BUILDPACK_MODULE_INVALID');
      // The module's message, with the value's place kept.
      expect(output).toContain('cannot reach postgres://app:***@db.test/app (***)');
      expect(output).not.toContain(secret);
    }
    // A value written in the arguments is redacted too (runplan warns of it); the value of a variable that is no secret is shown.
    const given = await runCli(['plan', EXPRESS, '--buildpack', module, '--env', `DB_PASSWORD=${secret}`, '--env', 'APP_SETTING=production_0042']);
    expect(given.output).toContain('cannot reach postgres://app:***@db.test/app (***)');
    expect(given.output).not.toContain(secret);
    const plain = join(await tempDir('runplan-bp-'), 'plain.mjs');
    await writeFile(plain, "throw new Error('cannot load in production_0042');\n");
    expect((await runCli(['plan', EXPRESS, '--buildpack', plain, '--env', 'APP_SETTING=production_0042'])).output).toContain('cannot load in production_0042');
  });
});
