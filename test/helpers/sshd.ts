import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { probePort } from '../../src/health/probes.js';
import { freePort } from './ports.js';
import { tempDir } from './temp.js';

const NPM_DEPENDENCY = 'private-dep';
const NPM_GREETING = 'hello from the private git repository';
const GEM_DEPENDENCY = 'private_gem';
const GEM_GREETING = 'hello from the private gem';

/** The server logs in as root (through git-shell only): the tests that use it need root, as installing it does. */
export const CAN_RUN_SSHD = process.getuid?.() === 0;

export interface GitSshServer {
  /** `ssh://root@127.0.0.1:<port><dir>`: a repository is `<base>/<name>.git`. */
  readonly base: string;
  readonly port: number;
  /** The private key the server accepts (OpenSSH format), and one it does not. */
  readonly clientKey: string;
  readonly otherKey: string;
  /** Their fingerprints, as ssh-keygen -l prints them ("SHA256:…"). */
  readonly clientFingerprint: string;
  readonly otherFingerprint: string;
  /** The server's host key as a known_hosts line, a line with another key for the same address, and a file holding the right one. */
  readonly knownHosts: string;
  readonly wrongKnownHosts: string;
  readonly knownHostsFile: string;
  readonly hostFingerprint: string;
  /** For a developer's own git (a lock file made with the accepted key), as GIT_SSH_COMMAND. */
  readonly gitSshCommand: string;
  /** Placeholders of the fixtures that use it (`{{SSH_GIT_BASE}}`…). */
  placeholders(): Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A real OpenSSH server (Debian's openssh-server, installed when missing) on
 * 127.0.0.1 and a free port, with its own configuration, host key and
 * authorized key, serving bare git repositories of a temporary directory
 * through git-shell: a private npm package and a private gem. Nothing of the
 * host's sshd is used; stopped by its PID.
 */
export async function startGitSshServer(): Promise<GitSshServer> {
  ensureSshd();
  const dir = await tempDir('runplan-sshd-');
  const keys = join(dir, 'keys');
  const repos = join(dir, 'repos');
  mkdirSync(keys);
  mkdirSync(repos);
  const keygen = (name: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `runplan-test-${name}`, '-f', join(keys, name)]);
  for (const name of ['host', 'client', 'other']) keygen(name);
  const pub = async (name: string) => (await readFile(join(keys, `${name}.pub`), 'utf8')).trim();
  const fingerprint = (name: string) => execFileSync('ssh-keygen', ['-l', '-f', join(keys, `${name}.pub`)], { encoding: 'utf8' }).split(' ')[1] as string;
  // The client key may only run git-shell: git-upload-pack of the repositories, nothing else.
  await writeFile(join(keys, 'authorized_keys'), `restrict,command="git-shell -c \\"$SSH_ORIGINAL_COMMAND\\"" ${await pub('client')}\n`);
  makeRepository(join(dir, 'src', NPM_DEPENDENCY), join(repos, `${NPM_DEPENDENCY}.git`), {
    'package.json': `${JSON.stringify({ name: NPM_DEPENDENCY, version: '1.0.0', main: 'index.js' }, null, 2)}\n`,
    'index.js': `module.exports = { greeting: ${JSON.stringify(NPM_GREETING)} };\n`,
  });
  makeRepository(join(dir, 'src', GEM_DEPENDENCY), join(repos, `${GEM_DEPENDENCY}.git`), {
    [`${GEM_DEPENDENCY}.gemspec`]: [
      'Gem::Specification.new do |s|',
      `  s.name = '${GEM_DEPENDENCY}'`,
      "  s.version = '0.1.0'",
      "  s.summary = 'A gem served from a private git repository over SSH'",
      "  s.authors = ['runplan tests']",
      `  s.files = ['lib/${GEM_DEPENDENCY}.rb']`,
      'end',
      '',
    ].join('\n'),
    [`lib/${GEM_DEPENDENCY}.rb`]: `module PrivateGem\n  def self.greeting\n    ${JSON.stringify(GEM_GREETING)}\n  end\nend\n`,
  });

  const port = await freePort();
  const config = join(dir, 'sshd_config');
  await writeFile(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(keys, 'host')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(keys, 'authorized_keys')}`,
      // The temporary directory is not laid out as a home directory.
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'AllowUsers root',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  // sshd checks its privilege separation directory, which Debian's service would make at boot.
  if (!existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755 });
  const child = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await probePort('127.0.0.1', port, 500))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`sshd did not start on port ${port}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const hostKey = (await pub('host')).split(' ').slice(0, 2).join(' ');
  const otherKey = (await pub('other')).split(' ').slice(0, 2).join(' ');
  const knownHosts = `[127.0.0.1]:${port} ${hostKey}`;
  const knownHostsFile = join(dir, 'known_hosts');
  await writeFile(knownHostsFile, `# the test's sshd\n${knownHosts}\n`);
  const client = join(keys, 'client');
  const server: GitSshServer = {
    base: `ssh://root@127.0.0.1:${port}${repos}`,
    port,
    clientKey: await readFile(client, 'utf8'),
    otherKey: await readFile(join(keys, 'other'), 'utf8'),
    clientFingerprint: fingerprint('client'),
    otherFingerprint: fingerprint('other'),
    knownHosts,
    wrongKnownHosts: `[127.0.0.1]:${port} ${otherKey}`,
    knownHostsFile,
    hostFingerprint: fingerprint('host'),
    gitSshCommand: `ssh -i ${client} -o IdentitiesOnly=yes -o UserKnownHostsFile=${knownHostsFile} -o StrictHostKeyChecking=yes -o BatchMode=yes`,
    placeholders: () => ({
      SSH_GIT_BASE: server.base,
      SSH_CLIENT_KEY: server.clientKey,
      SSH_OTHER_KEY: server.otherKey,
      SSH_CLIENT_FINGERPRINT: server.clientFingerprint,
      SSH_OTHER_FINGERPRINT: server.otherFingerprint,
      SSH_KNOWN_HOSTS: server.knownHosts,
      SSH_WRONG_KNOWN_HOSTS: server.wrongKnownHosts,
      SSH_KNOWN_HOSTS_FILE: server.knownHostsFile,
      SSH_HOST_FINGERPRINT: server.hostFingerprint,
      SSH_GIT_COMMAND: server.gitSshCommand,
    }),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/** Debian's openssh-server (and the client and git beside it), installed with apt when missing, as scripts/test-prerequisites.mjs does. */
function ensureSshd(): void {
  if (existsSync('/usr/sbin/sshd') && existsSync('/usr/bin/git-shell') && existsSync('/usr/bin/ssh-keygen')) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { env, stdio: 'ignore' });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'openssh-server', 'openssh-client', 'git'], { env, stdio: 'ignore' });
}

/** A bare repository `bare` holding `files` in one commit of a fixed author and date. */
function makeRepository(work: string, bare: string, files: Readonly<Record<string, string>>): void {
  mkdirSync(work, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), content);
  }
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'runplan tests',
    GIT_AUTHOR_EMAIL: 'tests@runplan.invalid',
    GIT_COMMITTER_NAME: 'runplan tests',
    GIT_COMMITTER_EMAIL: 'tests@runplan.invalid',
    GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
  };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: work, env, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'the private dependency');
  execFileSync('git', ['clone', '-q', '--bare', work, bare], { env, stdio: 'ignore' });
}
