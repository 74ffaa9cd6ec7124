import { shellWord } from '../../src/shell/shell-word.js';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { prepareSsh } from '../../src/building/ssh-setup.js';
import { explainFailure } from '../../src/steps/command-step.js';
import { assembleEnvironment } from '../../src/env/assemble.js';
import { parseKnownHosts } from '../../src/env/known-hosts.js';
import { parsePrivateKey } from '../../src/env/ssh-key.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import type { RunplanError } from '../../src/errors/runplan-error.js';
import { MemorySource } from '../../src/files/memory-source.js';
import type { AppUser } from '../../src/process/app-user.js';
import { resolveHostSettings } from '../../src/host/host-settings.js';
import { Logger, memorySink } from '../../src/log/logger.js';
import type { BuildStep, SshKeyPlan } from '../../src/plan/schema.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { environmentForPlan } from '../../src/planning/plan-environment.js';
import { resolveSshKey } from '../../src/planning/resolve-ssh-key.js';
import { remotePattern, sshRemote } from '../../src/planning/ssh-remote.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';
import { tempDir } from '../helpers/temp.js';

/** Keys made by this machine's ssh-keygen, in every format a user may paste. */
const keys: Record<string, string> = {};
let fingerprint = '';

beforeAll(async () => {
  const dir = await tempDir('runplan-ssh-keys-');
  const make = (name: string, ...args: string[]) => {
    execFileSync('ssh-keygen', ['-q', '-C', 'unit', '-f', join(dir, name), ...args]);
    keys[name] = readFileSync(join(dir, name), 'utf8');
  };
  make('ed25519', '-t', 'ed25519', '-N', '');
  make('rsa-pem', '-t', 'rsa', '-b', '2048', '-m', 'PEM', '-N', '');
  make('ecdsa-pkcs8', '-t', 'ecdsa', '-m', 'PKCS8', '-N', '');
  make('ed25519-passphrase', '-t', 'ed25519', '-N', 'secret passphrase');
  make('rsa-pem-passphrase', '-t', 'rsa', '-b', '2048', '-m', 'PEM', '-N', 'secret passphrase');
  make('rsa-pkcs8-passphrase', '-t', 'rsa', '-b', '2048', '-m', 'PKCS8', '-N', 'secret passphrase');
  keys.public = readFileSync(join(dir, 'ed25519.pub'), 'utf8');
  fingerprint = execFileSync('ssh-keygen', ['-l', '-f', join(dir, 'ed25519.pub')], { encoding: 'utf8' }).split(' ')[1] as string;
}, 60_000);

/** The coded error `run` throws, checked to quote no line of `secret`. */
function refusal(run: () => unknown, secret: string): RunplanError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(CoreErrors.SSH_KEY_INVALID.is(caught), String(caught)).toBe(true);
  const error = caught as RunplanError;
  for (const line of secret.split('\n').filter((l) => l.length >= 8 && !l.startsWith('-----'))) expect(`${error.message}\n${error.fix}`).not.toContain(line);
  expect(error.variable).toBe('CC_SSH_PRIVATE_KEY');
  return error;
}

describe('CC_SSH_PRIVATE_KEY', () => {
  it('reads an OpenSSH key, its algorithm and the fingerprint ssh-keygen prints, and writes it as ssh reads it', () => {
    const key = parsePrivateKey(keys.ed25519 as string);
    expect(key).toMatchObject({ format: 'OpenSSH', algorithm: 'ssh-ed25519', fingerprint, repaired: undefined });
    expect(key.text).toBe(keys.ed25519);
  });

  it('reads PEM keys (RSA, PKCS#8), whose fingerprint the build logs', () => {
    expect(parsePrivateKey(keys['rsa-pem'] as string)).toMatchObject({ format: 'PEM', algorithm: 'RSA', fingerprint: undefined, text: keys['rsa-pem'] });
    expect(parsePrivateKey(keys['ecdsa-pkcs8'] as string)).toMatchObject({ format: 'PEM', algorithm: undefined });
  });

  it('takes a key pasted on one line, with "\\n" or spaces for its line breaks, or with CRLF and no final line break', () => {
    const text = keys.ed25519 as string;
    expect(parsePrivateKey(text.trim().replace(/\n/g, '\\n'))).toMatchObject({ text, repaired: expect.stringContaining('"\\n"') });
    expect(parsePrivateKey(text.trim().replace(/\n/g, ' '))).toMatchObject({ text, repaired: expect.stringContaining('spaces') });
    expect(parsePrivateKey(text.trim().replace(/\n/g, '\r\n')).text).toBe(text);
  });

  it('refuses a passphrase-protected key in every format, before any build', () => {
    for (const name of ['ed25519-passphrase', 'rsa-pem-passphrase', 'rsa-pkcs8-passphrase']) {
      const error = refusal(() => parsePrivateKey(keys[name] as string), keys[name] as string);
      expect(error.reason, name).toMatch(/passphrase/);
      expect(error.fix).toContain('ssh-keygen -p -N ""');
    }
    expect(refusal(() => parsePrivateKey(keys['ed25519-passphrase'] as string), '').reason).toContain('cipher aes256-ctr');
  });

  it('refuses what is not one private key, naming what it is without quoting it', () => {
    const ed = keys.ed25519 as string;
    const cases: [string, RegExp][] = [
      [keys.public as string, /holds a public key/],
      ['-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n', /holds a public key/],
      ['PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n', /PuTTY/],
      ['just a password', /no -----BEGIN/],
      [`${ed}${ed}`, /2 -----BEGIN blocks/],
      [ed.replace(/-----END[^\n]*\n$/, ''), /no -----END OPENSSH PRIVATE KEY----- line/],
      [ed.replace(/\n([A-Za-z0-9+/]{10})/, '\n$1!'), /not base64/],
      [ed.replace('b3BlbnNzaC1rZXktdjE', 'AAAAAAAAAAAAAAAAAAA'), /damaged OpenSSH key data/],
      [`-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`, /"CERTIFICATE" block/],
      [`comment\n${ed}`, /text before/],
      ['x'.repeat(70_000), /more than any SSH private key/],
    ];
    for (const [value, pattern] of cases) expect(refusal(() => parsePrivateKey(value), value).reason).toMatch(pattern);
  });
});

describe('known hosts', () => {
  const blob = (type: string) => {
    const part = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
    return Buffer.concat([part(Buffer.from(type)), part(Buffer.alloc(32, 1))]).toString('base64');
  };

  it('reads plain, [host]:port, hashed and marked entries with their fingerprints; blank lines and comments are allowed', () => {
    const text = [
      '# git servers',
      `git.example.org,10.0.0.1 ssh-ed25519 ${blob('ssh-ed25519')} a comment`,
      '',
      `[127.0.0.1]:2222 ssh-ed25519 ${blob('ssh-ed25519')}`,
      `|1|F1E1KeoE/eEWhi10WpGv4OdiO6Y=|3988QV0VE8wmZL7suNrYQLITLCg= ssh-ed25519 ${blob('ssh-ed25519')}`,
      `@cert-authority *.example.org ssh-ed25519 ${blob('ssh-ed25519')}`,
    ].join('\n');
    const { entries, invalid } = parseKnownHosts(text);
    expect(invalid).toEqual([]);
    expect(entries.map((e) => e.hosts)).toEqual(['git.example.org,10.0.0.1', '[127.0.0.1]:2222', '|1|F1E1KeoE/eEWhi10WpGv4OdiO6Y=|3988QV0VE8wmZL7suNrYQLITLCg=', '*.example.org']);
    expect(entries[0]?.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
  });

  it('finds the lines that are not entries: a key under another type, a cut key, a key alone', () => {
    const { invalid } = parseKnownHosts(
      [`a ssh-rsa ${blob('ssh-ed25519')}`, `a ssh-ed25519 ${blob('ssh-ed25519').slice(0, 20)}`, `ssh-ed25519 ${blob('ssh-ed25519')}`, '@nope a ssh-ed25519 AAAA'].join('\n'),
    );
    expect(invalid.map((i) => i.line)).toEqual([1, 2, 3, 4]);
  });
});

describe('git remotes over SSH', () => {
  it('reads the forms npm, Yarn, pnpm and bundler accept, and nothing else', () => {
    expect(sshRemote('git+ssh://git@git.example.org:2222/team/repo.git#v1.0.0')).toEqual({ host: 'git.example.org', port: 2222, path: 'team/repo.git' });
    expect(sshRemote('ssh://git.example.org/team/repo')).toEqual({ host: 'git.example.org', port: undefined, path: 'team/repo' });
    expect(sshRemote('git+ssh://git@github.com:team/repo.git')).toEqual({ host: 'github.com', port: undefined, path: 'team/repo.git' });
    expect(sshRemote('git@github.com:team/repo.git')).toEqual({ host: 'github.com', port: undefined, path: 'team/repo.git' });
    expect(sshRemote('ssh://git@[::1]:22/repo.git')).toEqual({ host: '::1', port: 22, path: 'repo.git' });
    for (const other of ['https://github.com/team/repo.git', 'git://github.com/team/repo.git', '^1.2.3', 'github:team/repo', 'file:../x', `ssh://h/${'a'.repeat(2000)}`, 'ssh://h/re\u001bpo']) {
      expect(sshRemote(other), other).toBeUndefined();
    }
  });

  it('matches the lines npm and bundler print about the remote (npm rewrites the scp-like form)', () => {
    const pattern = new RegExp(remotePattern(sshRemote('git+ssh://git@git.example.org:team/private-dep.git') as never), 'i');
    expect(pattern.test('npm error command git --no-replace-objects ls-remote ssh://git@git.example.org/team/private-dep.git')).toBe(true);
    expect(pattern.test('npm error command git --no-replace-objects ls-remote ssh://git@git.example.org/team/other.git')).toBe(false);
  });
});

describe('the ssh-key decision and the refusal rules', () => {
  const entry = (name: string, value: string) => ({ name, value, source: 'application' as const, origin: '--env', secret: name === 'CC_SSH_PRIVATE_KEY' });
  const dep = (name: string, url: string) => ({ name, url, file: 'package.json' });
  const none = { key: undefined, knownHosts: undefined, gitSshCommand: undefined, hostKnownHosts: false, dependencies: [] };
  const step = (onFailure: BuildStep['onFailure']): BuildStep => ({
    name: 'install',
    description: '',
    run: { kind: 'exec', argv: ['npm', 'install'] },
    cwd: '.',
    env: {},
    pathPrepend: [],
    layer: null,
    onFailure,
  });
  const npmRefused = (repo: string, line: string) => [
    'npm error code 128',
    `npm error command git --no-replace-objects ls-remote ssh://git@127.0.0.1:2222/srv/${repo}.git`,
    `npm error ${line}`,
    'npm error fatal: Could not read from remote repository.',
  ];

  it('adds nothing to a plan that has no key, no known hosts and no dependency over SSH', () => {
    expect(resolveSshKey({ ...none, dependencies: [dep('ms', '2.1.3'), dep('x', 'https://github.com/a/b.git')] })).toEqual({ warnings: [], failureRules: [] });
  });

  it('plans a key with strict checking when known hosts are given, trust on first use (with a warning) otherwise', () => {
    const key = entry('CC_SSH_PRIVATE_KEY', keys.ed25519 as string);
    const known = entry('CC_SSH_KNOWN_HOSTS', `[127.0.0.1]:2222 ${(keys.public as string).split(' ').slice(0, 2).join(' ')}`);
    const strict = resolveSshKey({ ...none, key, knownHosts: known });
    expect(strict.sshKey).toEqual({ variable: 'CC_SSH_PRIVATE_KEY', knownHosts: { variable: 'CC_SSH_KNOWN_HOSTS', hostFile: false }, hostKeyChecking: 'strict' });
    expect(strict.warnings).toEqual([]);
    expect(strict.decision).toMatchObject({ id: 'ssh-key', source: 'env CC_SSH_PRIVATE_KEY (application)', requested: 'a private key (secret, not shown)' });
    expect(strict.decision?.resolved).toContain(fingerprint);
    expect(resolveSshKey({ ...none, key, hostKnownHosts: true }).sshKey?.knownHosts).toEqual({ variable: null, hostFile: true });
    const tofu = resolveSshKey({ ...none, key, gitSshCommand: entry('GIT_SSH_COMMAND', 'ssh -i /x') });
    expect(tofu.sshKey?.hostKeyChecking).toBe('trust-on-first-use');
    expect(tofu.warnings.map((w) => w.code)).toEqual(['RUNPLAN_W_SSH_TRUST_ON_FIRST_USE']);
    expect(tofu.decision?.overridden).toEqual([expect.objectContaining({ source: 'env GIT_SSH_COMMAND (application)', value: 'ssh -i /x' })]);
    expect(JSON.stringify(tofu)).not.toContain((keys.ed25519 as string).split('\n')[1]);
  });

  it('treats an empty key as none, ignores known hosts without a key, and refuses known hosts that are not entries', () => {
    expect(resolveSshKey({ ...none, key: entry('CC_SSH_PRIVATE_KEY', '  ') })).toEqual({ warnings: [], failureRules: [] });
    const ignored = resolveSshKey({ ...none, knownHosts: entry('CC_SSH_KNOWN_HOSTS', `h ssh-ed25519 ${(keys.public as string).split(' ')[1]}`) });
    expect(ignored.sshKey).toBeUndefined();
    expect(ignored.decision?.overridden[0]?.reason).toContain('only applies with CC_SSH_PRIVATE_KEY');
    for (const value of ['github.com ssh-ed25519 not-base64!', '# only a comment']) {
      expect(() => resolveSshKey({ ...none, key: entry('CC_SSH_PRIVATE_KEY', keys.ed25519 as string), knownHosts: entry('CC_SSH_KNOWN_HOSTS', value) })).toThrow(/RUNPLAN_E_SSH_KNOWN_HOSTS_INVALID/);
    }
  });

  it("names the dependency a server refused, from the package manager's output, and tells a refused host key apart", () => {
    const deps = [dep('private-dep', 'git+ssh://git@127.0.0.1:2222/srv/private-dep.git'), dep('other-dep', 'git+ssh://git@127.0.0.1:2222/srv/other-dep.git')];
    const withoutKey = step(resolveSshKey({ ...none, dependencies: deps }).failureRules);
    const denied = explainFailure(withoutKey, { notFound: false, exitCode: 1, output: npmRefused('other-dep', 'git@127.0.0.1: Permission denied (publickey).') });
    expect(denied?.code).toBe('RUNPLAN_E_SSH_DEPENDENCY_DENIED');
    expect(denied?.reason).toContain('other-dep (package.json: git+ssh://git@127.0.0.1:2222/srv/other-dep.git)');
    expect(denied?.reason).toContain('CC_SSH_PRIVATE_KEY is not set');
    // Without a key, ssh falls back on the host's own configuration: the missing key is what to fix.
    expect(explainFailure(withoutKey, { notFound: false, exitCode: 1, output: npmRefused('private-dep', 'Host key verification failed.') })?.code).toBe('RUNPLAN_E_SSH_DEPENDENCY_DENIED');

    const key = entry('CC_SSH_PRIVATE_KEY', keys.ed25519 as string);
    const withKey = step(resolveSshKey({ ...none, key, dependencies: deps }).failureRules);
    const host = explainFailure(withKey, { notFound: false, exitCode: 1, output: npmRefused('private-dep', 'Host key verification failed.') });
    expect(host?.code).toBe('RUNPLAN_E_SSH_HOST_KEY_UNTRUSTED');
    expect(host?.reason).toContain('private-dep (package.json');
    expect(host?.reason).toContain('trusted it on first use');
    const refused = explainFailure(withKey, { notFound: false, exitCode: 1, output: npmRefused('private-dep', 'git@127.0.0.1: Permission denied (publickey).') });
    expect(refused?.reason).toContain(`did not accept the key of CC_SSH_PRIVATE_KEY (${fingerprint})`);
    // A dependency of a dependency: the refusal is still told, without a name.
    const transitive = explainFailure(withKey, { notFound: false, exitCode: 1, output: npmRefused('deep-dep', 'ERROR: Repository not found.') });
    expect(transitive?.code).toBe('RUNPLAN_E_SSH_DEPENDENCY_DENIED');
    expect(transitive?.reason).toContain('a dependency of a dependency?');
    expect(explainFailure(withKey, { notFound: false, exitCode: 1, output: ['npm error code E404'] })).toBeUndefined();
  });
});

describe('CC_SSH_PRIVATE_KEY in the environment and the plan', () => {
  const pkg = JSON.stringify({ name: 'a', scripts: { start: 'node a.js' }, dependencies: { 'private-dep': 'git+ssh://git@git.example.org/team/private-dep.git' } });

  it('is withheld from every environment of steps and processes, listed nowhere in the plan, and redacted', () => {
    const env = assembleEnvironment({ application: { CC_SSH_PRIVATE_KEY: keys.ed25519 as string, OTHER: 'x' } });
    expect(env.get('CC_SSH_PRIVATE_KEY')).toBeUndefined();
    expect(env.withheld('CC_SSH_PRIVATE_KEY')?.value).toBe(keys.ed25519);
    expect(Object.keys(env.toRecord())).toEqual(['OTHER']);
    expect(env.toPlan().variables.map((v) => v.name)).toEqual(['OTHER']);
    expect(env.bound({ APP_HOME: '/a', RUN_DIR: '/r' }).withheld('CC_SSH_PRIVATE_KEY')?.value).toBe(keys.ed25519);
    const line = (keys.ed25519 as string).split('\n')[2] as string;
    expect(env.redactor.redact(`npm said ${line}`)).toBe('npm said ***');
  });

  it('plans build.sshKey, the decision and the rules on the install step; a plan carried out needs the key again', async () => {
    const files = new MemorySource({ 'package.json': pkg, 'a.js': '' });
    const { plan, environment } = await createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files, env: { application: { CC_SSH_PRIVATE_KEY: keys.ed25519 as string } } });
    expect(plan.build.sshKey?.hostKeyChecking).toBe('trust-on-first-use');
    expect(plan.decisions.find((d) => d.id === 'ssh-key')?.resolved).toContain('private-dep (package.json)');
    const install = plan.build.steps.find((s) => s.name === 'install');
    expect(install?.onFailure?.map((r) => r.error.code).slice(0, 2)).toEqual(['RUNPLAN_E_SSH_HOST_KEY_UNTRUSTED', 'RUNPLAN_E_SSH_DEPENDENCY_DENIED']);
    expect(JSON.stringify(plan)).not.toContain((keys.ed25519 as string).split('\n')[1]);
    expect(environment.withheld('CC_SSH_PRIVATE_KEY')).toBeDefined();

    expect(() => environmentForPlan(plan, {})).toThrow(/RUNPLAN_E_PLAN_SECRET_MISSING: the plan needs the value of CC_SSH_PRIVATE_KEY/);
    expect(environmentForPlan(plan, { application: { CC_SSH_PRIVATE_KEY: keys.ed25519 as string } }).withheld('CC_SSH_PRIVATE_KEY')?.value).toBe(keys.ed25519);
    const { plan: without } = await createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files });
    expect(without.warnings.map((w) => w.code)).toContain('RUNPLAN_W_SSH_KEY_MISSING');
    expect(() => environmentForPlan(without, { application: { CC_SSH_PRIVATE_KEY: keys.ed25519 as string } })).toThrow(/RUNPLAN_E_PLAN_ENV_MISMATCH/);
  });

  it('refuses a passphrase-protected key when planning', async () => {
    const files = new MemorySource({ 'package.json': pkg, 'a.js': '' });
    await expect(createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files, env: { application: { CC_SSH_PRIVATE_KEY: keys['ed25519-passphrase'] as string } } })).rejects.toThrow(
      /RUNPLAN_E_SSH_KEY_INVALID: CC_SSH_PRIVATE_KEY is protected by a passphrase/,
    );
  });
});

describe("the build's SSH directory", () => {
  const me: AppUser = { name: 'me', uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, dropped: false };
  const setup = async (plan: SshKeyPlan, value: string, extra: { knownHosts?: string; hostFile?: string; trusted?: string } = {}) => {
    const sink = memorySink();
    const env = assembleEnvironment({ application: { CC_SSH_PRIVATE_KEY: value, ...(extra.knownHosts ? { CC_SSH_KNOWN_HOSTS: extra.knownHosts } : {}) } });
    const dir = join(await tempDir('runplan-ssh-setup-'), 'ssh-1');
    const ssh = await prepareSsh(plan, {
      env,
      host: resolveHostSettings(extra.hostFile ? { sshKnownHostsFile: extra.hostFile } : {}),
      user: me,
      logger: new Logger(sink, env.redactor),
      dir,
      trustedHostsFile: extra.trusted,
    });
    return { ssh, dir, sink };
  };
  const tofu: SshKeyPlan = { variable: 'CC_SSH_PRIVATE_KEY', knownHosts: { variable: null, hostFile: false }, hostKeyChecking: 'trust-on-first-use' };

  it('writes the key 0600 in a 0700 directory, gives GIT_SSH_COMMAND with only that key and those known hosts, and removes it', async () => {
    const { ssh, dir, sink } = await setup(tofu, keys.ed25519 as string);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'id')).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, 'id'), 'utf8')).toBe(keys.ed25519);
    expect(ssh.env.GIT_SSH_COMMAND).toBe(
      `ssh -i ${shellWord(`${dir}/id`)} -o IdentitiesOnly=yes -o IdentityAgent=none -o UserKnownHostsFile=${shellWord(`${dir}/known_hosts`)} -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=accept-new -o HashKnownHosts=no -o BatchMode=yes -o ConnectTimeout=30`,
    );
    expect(sink.lines.map((l) => l.text).join('\n')).toContain(`SSH key of CC_SSH_PRIVATE_KEY for git in the build steps: ssh-ed25519 ${fingerprint}`);
    await ssh.remove();
    expect(existsSync(dir)).toBe(false);
  });

  it('logs each host key trusted on first use with its fingerprint, once, and remembers it for the next build', async () => {
    const trusted = join(await tempDir('runplan-ssh-trusted-'), 'ssh_known_hosts');
    const { ssh, dir, sink } = await setup(tofu, keys.ed25519 as string, { trusted });
    const hostLine = `[127.0.0.1]:2222 ${(keys.public as string).split(' ').slice(0, 2).join(' ')}`;
    await writeFile(join(dir, 'known_hosts'), `${hostLine}\n`);
    await ssh.afterStep();
    await ssh.afterStep();
    const warnings = sink.lines.filter((l) => l.level === 'warn').map((l) => l.text);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`RUNPLAN_W_SSH_TRUST_ON_FIRST_USE: trusted the SSH host key of [127.0.0.1]:2222 on first use: ssh-ed25519 ${fingerprint}`);
    expect(await readFile(trusted, 'utf8')).toBe(`${hostLine}\n`);
    await ssh.remove();
    const next = await setup(tofu, keys.ed25519 as string, { trusted });
    expect(await readFile(join(next.dir, 'known_hosts'), 'utf8')).toBe(`${hostLine}\n`);
    expect(next.sink.lines.map((l) => l.text).join('\n')).toContain('1 trusted on first use by earlier builds');
    await next.ssh.remove();
  });

  it("checks strictly against CC_SSH_KNOWN_HOSTS and the host's file, which must be there and readable", async () => {
    const host = `[127.0.0.1]:2222 ${(keys.public as string).split(' ').slice(0, 2).join(' ')}`;
    const file = join(await tempDir('runplan-ssh-hostfile-'), 'known_hosts');
    await writeFile(file, `# host\n${host.replace('2222', '2223')}\n`);
    const strict: SshKeyPlan = { variable: 'CC_SSH_PRIVATE_KEY', knownHosts: { variable: 'CC_SSH_KNOWN_HOSTS', hostFile: true }, hostKeyChecking: 'strict' };
    const { ssh, dir } = await setup(strict, keys.ed25519 as string, { knownHosts: host, hostFile: file });
    expect(ssh.env.GIT_SSH_COMMAND).toContain('StrictHostKeyChecking=yes');
    expect((await readFile(join(dir, 'known_hosts'), 'utf8')).trim().split('\n')).toEqual([host.replace('2222', '2223'), host]);
    await ssh.remove();
    await expect(setup(strict, keys.ed25519 as string, { knownHosts: host })).rejects.toThrow(/RUNPLAN_E_HOST_INVALID_SETTING: the plan checks SSH host keys against the host's known hosts file/);
    await expect(setup(strict, keys.ed25519 as string, { knownHosts: host, hostFile: `${file}.missing` })).rejects.toThrow(/cannot read the SSH known hosts file/);
    await writeFile(file, 'not a known host line\n');
    await expect(setup(strict, keys.ed25519 as string, { knownHosts: host, hostFile: file })).rejects.toThrow(/line 1 of the SSH known hosts file/);
  });

  it('refuses a key ssh-keygen cannot read (damaged after its public part), and a host without ssh-keygen', async () => {
    const lines = (keys.ed25519 as string).split('\n');
    lines[4] = (lines[4] as string).replace(/[A-Za-z]/g, (c) => (c === 'A' ? 'B' : 'A'));
    const damaged = lines.join('\n');
    await expect(setup(tofu, damaged)).rejects.toThrow(/RUNPLAN_E_SSH_KEY_INVALID: ssh-keygen cannot read the key of CC_SSH_PRIVATE_KEY/);
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await expect(setup(tofu, keys.ed25519 as string)).rejects.toThrow(/RUNPLAN_E_SSH_CLIENT_MISSING/);
    } finally {
      process.env.PATH = path;
    }
  });
});
