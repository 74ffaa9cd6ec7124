import { describe, expect, it } from 'vitest';
import { assembleEnvironment, ENV_PRECEDENCE, Environment } from '../../src/env/assemble.js';
import dotenv from 'dotenv';
import { parseAssignment, parseEnvFile } from '../../src/env/assignments.js';
import { isValidVariableName } from '../../src/env/names.js';
import { Redactor, secretReason } from '../../src/env/secrets.js';
import { renderFile } from '../../src/process/materialise-files.js';
import { isolateNpm } from '../../src/process/process-env.js';
import { redactError } from '../../src/env/redact-error.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import type { RunplanError } from '../../src/errors/runplan-error.js';
import type { PlannedFile } from '../../src/plan/schema.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { environmentForPlan } from '../../src/planning/plan-environment.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';

describe('environment assembly', () => {
  it('orders service over application over add-ons over buildpack defaults', () => {
    expect(ENV_PRECEDENCE).toEqual(['service', 'application', 'addon', 'buildpack-default']);
    const env = assembleEnvironment({
      links: [{ name: 'pg', variables: { DATABASE_URL: 'from-addon', ONLY_ADDON: 'a' } }],
      application: { DATABASE_URL: 'from-app', PORT: '1234', ONLY_APP: 'b' },
      service: { PORT: '8080', INSTANCE_NUMBER: '0' },
    });
    expect(env.get('DATABASE_URL')).toBe('from-app');
    expect(env.get('PORT')).toBe('8080');
    expect(env.get('ONLY_ADDON')).toBe('a');
    expect(env.entry('PORT')?.source).toBe('service');
    expect(env.putDefault('ONLY_APP', 'default', 'test')).toBe(false);
    expect(env.putDefault('WEB_CONCURRENCY', '2', 'test')).toBe(true);
    expect(env.get('WEB_CONCURRENCY')).toBe('2');
  });

  it('reports every variable one set shadows in another', () => {
    const env = assembleEnvironment({
      links: [
        { name: 'redis-a', variables: { REDIS_URL: 'a' } },
        { name: 'redis-b', variables: { REDIS_URL: 'b' } },
      ],
      application: [{ name: 'PORT', value: '1', origin: '--env' }],
      service: { PORT: '8080' },
    });
    expect(env.get('REDIS_URL')).toBe('b');
    expect(env.shadowed).toEqual([
      { name: 'REDIS_URL', kept: { source: 'addon', origin: 'addon redis-b' }, hidden: { source: 'addon', origin: 'addon redis-a' }, reason: expect.stringContaining('later one') },
      { name: 'PORT', kept: { source: 'service', origin: 'service' }, hidden: { source: 'application', origin: '--env' }, reason: 'service variables take precedence over application variables' },
    ]);
  });

  it('rejects names other than ASCII letters, digits and _ with a coded error naming the variable', () => {
    for (const bad of ['A-B', 'É', 'A B', '', '1ABC', 'A.B']) {
      expect(isValidVariableName(bad)).toBe(false);
      expect(() => assembleEnvironment({ application: { [bad]: 'x' } })).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_INVALID_NAME.code, variable: bad }));
    }
    for (const good of ['A', '_A', 'a_b_1', 'CC_HEALTH_CHECK_PATH_0']) expect(isValidVariableName(good)).toBe(true);
    expect(() => assembleEnvironment({ links: [{ name: 'pg', variables: { 'BAD-NAME': 'x' } }] })).toThrow(/from addon pg/);
  });

  it('keeps secret values out of the plan view', () => {
    const env = assembleEnvironment({ application: { NPM_TOKEN: 'tok-123456', GREETING: 'hi' } });
    const plan = env.toPlan();
    expect(plan.variables.find((v) => v.name === 'NPM_TOKEN')).toEqual({ name: 'NPM_TOKEN', source: 'application', origin: 'application variables', secret: true });
    expect(plan.variables.find((v) => v.name === 'GREETING')?.value).toBe('hi');
    expect(JSON.stringify(plan)).not.toContain('tok-123456');
  });
});

describe('assignments and env files', () => {
  it('parses NAME=VALUE with "=" in the value', () => {
    expect(parseAssignment('A=b=c', '--env')).toEqual({ name: 'A', value: 'b=c', origin: '--env' });
    expect(parseAssignment('EMPTY=', '--env').value).toBe('');
  });

  it('refuses an assignment without a name, without echoing the value', () => {
    const attempt = () => parseAssignment('=secretvalue', '--env');
    expect(attempt).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_MALFORMED_ASSIGNMENT.code }));
    expect(attempt).not.toThrow(/secretvalue/);
  });

  it('parses env files as dotenv does: comments, export, quotes, multi-line values, line numbers', () => {
    const text = [
      '# comment',
      '',
      'export A=1',
      "B='lit $x \\n'",
      'C="a\\nb \\"q\\""',
      'D=plain # trailing comment',
      'E="multi',
      'line"',
      'F=`say "hi" and \'bye\'`',
      '  export   G = spaced  ',
      'H="x" # after the quote',
    ].join('\n');
    const parsed = parseEnvFile(text, 'app.env');
    expect(parsed).toEqual([
      { name: 'A', value: '1', origin: 'app.env:3' },
      // Single quotes and backquotes are literal; in double quotes only \n and \r are escapes (dotenv's format).
      { name: 'B', value: 'lit $x \\n', origin: 'app.env:4' },
      { name: 'C', value: 'a\nb \\"q\\"', origin: 'app.env:5' },
      { name: 'D', value: 'plain', origin: 'app.env:6' },
      { name: 'E', value: 'multi\nline', origin: 'app.env:7' },
      { name: 'F', value: `say "hi" and 'bye'`, origin: 'app.env:9' },
      { name: 'G', value: 'spaced', origin: 'app.env:10' },
      { name: 'H', value: 'x', origin: 'app.env:11' },
    ]);
    expect(Object.fromEntries(parsed.map((a) => [a.name, a.value]))).toEqual(dotenv.parse(text));
  });

  it('keeps every assignment of a name with its line; the last one wins, as with dotenv', () => {
    expect(parseEnvFile('A=1\r\nA=2\r\n', 'app.env')).toEqual([
      { name: 'A', value: '1', origin: 'app.env:1' },
      { name: 'A', value: '2', origin: 'app.env:2' },
    ]);
  });

  it('names the file and line of a bad env-file entry', () => {
    expect(() => parseEnvFile('OK=1\nBAD-NAME=2', 'app.env')).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_INVALID_NAME.code, message: expect.stringContaining('app.env:2') }));
    expect(() => parseEnvFile('OK=1\nMY VAR=2', 'app.env')).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_INVALID_NAME.code, message: expect.stringContaining('app.env:2') }));
    expect(() => parseEnvFile('A="open', 'app.env')).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_MALFORMED_ASSIGNMENT.code }));
  });

  // dotenv skips these or cuts the value without a word: a secret would reach the application cut short, or not at all.
  it.each([
    ['a line that is not an assignment', 'A=1\nNPM_TOKEN npm_secret_41\n', 'app.env:2'],
    ["dotenv's YAML-like NAME: VALUE", 'NPM_TOKEN: npm_secret_41\n', 'app.env:1'],
    ['a "#" against an unquoted value', 'DB_PASSWORD=pa#npm_secret_41\n', 'app.env:1'],
    ['a value starting with "#"', 'DB_PASSWORD=#npm_secret_41\n', 'app.env:1'],
    ['text after the closing quote', 'DB_PASSWORD="pa" npm_secret_41\n', 'app.env:1'],
    ['a quote never closed', 'A=1\nCC_SSH_PRIVATE_KEY="-----BEGIN\nnpm_secret_41\nQUJDRA==\n', 'app.env:2'],
    ['a value on the line after "="', 'A=\n"npm_secret_41"\n', 'app.env:2'],
  ])('refuses %s, naming the line and not the value', (_, text, line) => {
    const attempt = () => parseEnvFile(text, 'app.env');
    expect(attempt).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_MALFORMED_ASSIGNMENT.code, file: 'app.env', message: expect.stringContaining(line) }));
    expect(attempt).not.toThrow(/npm_secret_41/);
  });

  it('reads a quote closed where dotenv closes it: an escaped quote ends the value when nothing else can', () => {
    expect(parseEnvFile('A="x\\"\nB=2\n', 'app.env').map((a) => [a.name, a.value])).toEqual([
      ['A', 'x\\'],
      ['B', '2'],
    ]);
    expect(parseEnvFile('A="x\\" # c\nB=1"\n', 'app.env').map((a) => [a.name, a.value])).toEqual([['A', 'x\\" # c\nB=1']]);
  });
});

describe('secrets', () => {
  it("classifies the specification's credentials and conventional secret names", () => {
    for (const name of [
      'NPM_TOKEN',
      'SECRET_KEY_BASE',
      'STORAGE_ADDON_KEY_ID',
      'STORAGE_ADDON_KEY_SECRET',
      'STORAGE_ADDON_BUCKET_NAME',
      'STORAGE_ADDON_ENDPOINT',
      'CC_HTTP_BASIC_AUTH',
      'CC_HTTP_BASIC_AUTH_2',
      'DB_PASSWORD',
      'GITHUB_TOKEN',
      'AWS_SECRET_ACCESS_KEY',
    ]) {
      expect(secretReason(name, 'x'), name).toBeDefined();
    }
    expect(secretReason('DATABASE_URL', 'postgres://user:pw@db:5432/x')).toBe('url-credentials');
    expect(secretReason('NODE_ENV', 'production')).toBeUndefined();
    expect(secretReason('CC_HEALTH_CHECK_PATH', '/')).toBeUndefined();
  });

  it('redacts values, their URL-encoded and base64 forms, and basic-auth passwords', () => {
    const r = new Redactor();
    r.addVariable('NPM_TOKEN', 'abc/def+1');
    r.addVariable('CC_HTTP_BASIC_AUTH', 'alice:s3cret');
    r.addVariable('DATABASE_URL', 'postgres://u:dbpass@h/db');
    const text = `t=abc/def+1 enc=${encodeURIComponent('abc/def+1')} b64=${Buffer.from('alice:s3cret').toString('base64')} pw=s3cret url=postgres://u:dbpass@h/db`;
    const out = r.redact(text);
    expect(out).not.toMatch(/abc\/def|s3cret|dbpass|YWxpY2U6czNjcmV0/);
    expect(r.redactDeep({ a: ['x s3cret'], b: { c: 'abc/def+1' } })).toEqual({ a: ['x ***'], b: { c: '***' } });
  });
});

describe('secrets the redactor once missed', () => {
  it('masks the first characters of a token pnpm shows in its 401 errors', () => {
    const r = new Redactor();
    r.addVariable('NPM_TOKEN', 'npm_abcdefghijklmnop');
    expect(r.redact('ERR_PNPM_FETCH_401 GET https://host/pkg: Unauthorized - 401 An authorization header was used: Bearer npm_[hidden]; _authToken=npm_[hidden]')).toBe(
      'ERR_PNPM_FETCH_401 GET https://host/pkg: Unauthorized - 401 An authorization header was used: Bearer ***; _authToken=***',
    );
    expect(r.redact('no token here [hidden]')).toBe('no token here [hidden]');
  });

  it('redacts a 1 MB secret without building a regular expression of it, in about the time of a search', () => {
    const secret = `k${'0123456789abcdef'.repeat(65_536)}`;
    const r = new Redactor();
    r.addVariable('NPM_TOKEN', secret);
    const started = Date.now();
    const out = r.redact(`before ${secret} after`);
    expect(out).toBe('before *** after');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('redacts an SSH key whole, line by line (as output is printed) and escaped as JSON', () => {
    const lines = Array.from({ length: 400 }, (_, i) => `b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn${String(i).padStart(4, '0')}`);
    const key = ['-----BEGIN OPENSSH PRIVATE KEY-----', ...lines, '-----END OPENSSH PRIVATE KEY-----', ''].join('\n');
    expect(key.length).toBeGreaterThan(25_000);
    const r = new Redactor();
    r.addVariable('DEPLOY_SSH_PRIVATE_KEY', key);
    expect(r.redact(`key: ${key}`)).toBe('key: ***');
    for (const line of lines) expect(r.redact(`[install] ${line}`)).toBe('[install] ***');
    expect(r.redact(JSON.stringify({ key }))).not.toContain(lines[7]);
  });

  it('redacts a value as Node quotes it in its messages (control characters escaped)', () => {
    const r = new Redactor();
    r.addSecret('tok\u0000en-42');
    expect(r.redact("must be a string without null bytes. Received 'tok\\x00en-42'")).not.toContain('en-42');
    expect(r.redact(JSON.stringify('tok\u0000en-42'))).toBe('"***"');
  });

  it('keeps the cause and the stack of an error, redacted', () => {
    const r = new Redactor();
    r.addVariable('NPM_TOKEN', 'npm_cause_secret_77');
    const cause = new Error('registry said npm_cause_secret_77 is wrong');
    const error = CoreErrors.BUILD_STEP_FAILED.create({ message: 'install failed for npm_cause_secret_77', cause });
    const redacted = redactError(error, r) as RunplanError;
    expect(redacted.code).toBe(CoreErrors.BUILD_STEP_FAILED.code);
    expect(redacted.message).not.toContain('npm_cause_secret_77');
    expect(redacted.stack).toContain('install failed for ***');
    expect((redacted.cause as Error).message).toBe('registry said *** is wrong');
    expect((redacted.cause as Error).stack).toContain('registry said *** is wrong');
    const plain = redactError(new Error('x npm_cause_secret_77', { cause: 'string npm_cause_secret_77' }), r) as Error;
    expect(plain.cause).toBe('string ***');
  });
});

describe('values that cannot be passed on', () => {
  it('refuses a NUL byte in any value, naming the variable and where it came from, not the value', () => {
    const attempt = () => assembleEnvironment({ application: [{ name: 'NPM_TOKEN', value: 'tok\u0000secret99', origin: '--env' }] });
    expect(attempt).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_VALUE_INVALID.code, variable: 'NPM_TOKEN', message: expect.stringContaining('from --env') }));
    expect(attempt).not.toThrow(/secret99/);
    expect(() => assembleEnvironment({ links: [{ name: 'pg', variables: { DB: 'a\u0000b' } }] })).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_VALUE_INVALID.code }));
  });

  it('blames an env file holding a NUL byte, with its name and line', () => {
    const attempt = () => parseEnvFile('A=1\nB=x\u0000secret99\n', 'prod.env');
    expect(attempt).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_VALUE_INVALID.code, file: 'prod.env', message: expect.stringContaining('prod.env:2') }));
    expect(attempt).not.toThrow(/secret99/);
    expect(() => parseEnvFile('N\u0000AME=1', 'prod.env')).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_VALUE_INVALID.code }));
  });

  it('shows nothing of an --env argument without "=", which may be a secret pasted alone', () => {
    const attempt = () => parseAssignment('NPM_TOKEN npm_pasted_secret', '--env');
    expect(attempt).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_MALFORMED_ASSIGNMENT.code }));
    expect(attempt).not.toThrow(/NPM_TOKEN|npm_pasted_secret/);
  });

  it('refuses a line break or NUL in a value written into a generated file, without the value', () => {
    const env = assembleEnvironment({ application: { NPM_TOKEN: 'tok\nscript-shell=/tmp/evil' } });
    const file: PlannedFile = { path: '.npmrc', phase: 'build', mode: 0o600, secret: true, content: [{ text: '//r/:_authToken=' }, { env: 'NPM_TOKEN' }, { text: '\n' }], reason: 'test' };
    const attempt = () => renderFile(file, env);
    expect(attempt).toThrowError(expect.objectContaining({ code: CoreErrors.ENV_VALUE_INVALID.code, variable: 'NPM_TOKEN', file: '.npmrc' }));
    expect(attempt).not.toThrow(/script-shell/);
  });
});

describe("npm's directories in a build", () => {
  it("moves npm's logs into the build's temporary directory and its cache to the application's, whatever the app set", () => {
    const env = isolateNpm({ PATH: '/bin', NPM_CONFIG_CACHE: '/root/.npm', npm_config_LOGS_DIR: '/root/.npm/_logs' }, { tempDir: '/w/tmp/build-1', cacheDir: '/c/npm-cache/app-1' });
    expect(env).toEqual({
      PATH: '/bin',
      npm_config_logs_dir: '/w/tmp/build-1/npm-logs',
      npm_config_cache: '/c/npm-cache/app-1',
      XDG_CACHE_HOME: '/c/npm-cache/app-1/_xdg-cache',
      XDG_DATA_HOME: '/c/npm-cache/app-1/_xdg-data',
      YARN_GLOBAL_FOLDER: '/c/npm-cache/app-1/_yarn-berry',
      BUN_INSTALL_CACHE_DIR: '/c/npm-cache/app-1/_bun',
    });
    // Yarn's, pnpm's and bun's caches are the application's too, whatever it set.
    expect(isolateNpm({ xdg_cache_home: '/shared', YARN_GLOBAL_FOLDER: '/shared/berry' }, { cacheDir: '/c/a' })).not.toHaveProperty('xdg_cache_home');
    expect(isolateNpm({ PATH: '/bin' }, {})).toEqual({ PATH: '/bin' });
  });
});

describe('the environment of a saved plan', () => {
  const planned = () => {
    const env = assembleEnvironment({
      links: [{ name: 'pg', variables: { DATABASE_URL: 'postgres://app:pg-pass-77@db/app', PGHOST: 'db' } }],
      application: { NPM_TOKEN: 'tok-123456', GREETING: 'hi' },
      service: { PORT: '8080', APP_HOME: '${APP_HOME}' },
    });
    env.putDefault('WEB_CONCURRENCY', '2', 'ruby buildpack: instance size');
    return env;
  };

  it('names the variables an executor fills instead of giving their value', () => {
    expect(
      planned()
        .toPlan()
        .variables.find((v) => v.name === 'APP_HOME'),
    ).toEqual({ name: 'APP_HOME', source: 'service', origin: 'service', secret: false, placeholder: 'APP_HOME' });
    // Only a whole value is a placeholder: text around one is a value like any other.
    expect(assembleEnvironment({ application: { X: '${APP_HOME}/x' } }).toPlan().variables[0]).toMatchObject({ value: '${APP_HOME}/x' });
  });

  it("is the plan's variables with the secret values given, the executor's placeholders left to fill", () => {
    const original = planned();
    const env = Environment.fromPlan(original.toPlan(), { NPM_TOKEN: 'tok-123456', DATABASE_URL: 'postgres://app:pg-pass-77@db/app', UNUSED: 'x' });
    expect(env.list()).toEqual(original.list());
    expect(env.toPlan()).toEqual(original.toPlan());
    expect(env.has('UNUSED')).toBe(false);
    expect(env.redactor.redact('token tok-123456, password pg-pass-77')).toBe('token ***, password ***');
    const bound = env.bound({ APP_HOME: '/srv/builds/42' });
    expect(bound.get('APP_HOME')).toBe('/srv/builds/42');
    expect(bound.get('NPM_TOKEN')).toBe('tok-123456');
    expect(bound.redactor.redact('tok-123456')).toBe('***');
    expect(env.get('APP_HOME')).toBe('${APP_HOME}');
    expect(() => env.bound({})).toThrowError(expect.objectContaining({ code: CoreErrors.PLAN_INVALID.code, message: expect.stringContaining('${APP_HOME}') }));
  });

  it('redacts the value of a variable the plan holds as secret, though only a buildpack declared it so', () => {
    const original = assembleEnvironment({ application: { ACME_DSN: 'https://k3y-of-the-project@errors.acme.test/42' }, secretNames: ['ACME_DSN'] });
    const env = Environment.fromPlan(original.toPlan(), { ACME_DSN: 'https://k3y-of-the-project@errors.acme.test/42' });
    expect(env.redactor.redact('sending to https://k3y-of-the-project@errors.acme.test/42')).toBe('sending to ***');
    expect(env.bound({}).redactor.redact('https://k3y-of-the-project@errors.acme.test/42')).toBe('***');
  });

  it('needs the value of every secret variable, which plans never hold', () => {
    expect(() => Environment.fromPlan(planned().toPlan(), { NPM_TOKEN: 'tok-123456' })).toThrowError(
      expect.objectContaining({ code: CoreErrors.PLAN_SECRET_MISSING.code, kind: 'input', variable: 'DATABASE_URL', message: expect.stringContaining('DATABASE_URL (addon variable from addon pg)') }),
    );
  });

  it('takes the secret values from the variables given with the plan, and refuses any other that differs', async () => {
    const files = new MemorySource({ 'package.json': '{"main":"a.js"}' });
    const application = { NPM_TOKEN: 'npm_secret_token_1234', NODE_ENV: 'production' };
    const { plan, environment } = await createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files, env: { application } });
    expect(environmentForPlan(plan, { application }).list()).toEqual(environment.list());
    expect(environmentForPlan(plan, { application: { NPM_TOKEN: 'npm_secret_token_1234' } }).get('NODE_ENV')).toBe('production');
    // A secret may change without planning again: plans hold none.
    expect(environmentForPlan(plan, { application: { NPM_TOKEN: 'npm_rotated_token_99' } }).get('NPM_TOKEN')).toBe('npm_rotated_token_99');
    expect(() => environmentForPlan(plan, { application: { NPM_TOKEN: 'npm_secret_token_1234', NODE_ENV: 'development' } })).toThrowError(
      expect.objectContaining({
        code: CoreErrors.PLAN_ENV_MISMATCH.code,
        kind: 'input',
        variable: 'NODE_ENV',
        message: expect.stringContaining('NODE_ENV (application variables) has another value than in the plan'),
      }),
    );
    expect(() => environmentForPlan(plan, { application: { NPM_TOKEN: 'npm_secret_token_1234' }, links: [{ name: 'redis', variables: { REDIS_URL: 'redis://r' } }] })).toThrowError(
      expect.objectContaining({ code: CoreErrors.PLAN_ENV_MISMATCH.code, variable: 'REDIS_URL', message: expect.stringContaining('REDIS_URL (addon redis) is not a variable of the plan') }),
    );
    expect(() => environmentForPlan(plan)).toThrowError(expect.objectContaining({ code: CoreErrors.PLAN_SECRET_MISSING.code, variable: 'NPM_TOKEN' }));
  });
});
