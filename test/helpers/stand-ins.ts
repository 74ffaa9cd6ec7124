import { declaredGems } from '../../buildpacks/ruby/gemfile.js';

/**
 * Stand-ins for what a fixture's own test makes on the machine, for the tests that
 * only plan every fixture (golden plans, the secret scan): SSH keys and known hosts
 * of the right shape (all planning reads, the same on every run: plans name their
 * fingerprints), and a lock file naming each gem of a Gemfile.
 */

/** An SSH wire-format field: its length (4 bytes), then its bytes. */
function sshField(value: string | Buffer): Buffer {
  const bytes = Buffer.from(value);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** An ssh-ed25519 public key blob of 32 bytes of `fill`: the right shape, nobody's key. */
export function standInPublicKey(fill: number): Buffer {
  return Buffer.concat([sshField('ssh-ed25519'), sshField(Buffer.alloc(32, fill))]);
}

/** An OpenSSH private key of that public key, encrypted with `cipher` ("none": read when planning; ssh-keygen refuses its made-up private part). */
export function standInSshKey(fill: number, cipher = 'none'): string {
  const count = Buffer.from([0, 0, 0, 1]);
  const kdf = cipher === 'none' ? 'none' : 'bcrypt';
  const blob = Buffer.concat([Buffer.from('openssh-key-v1\0', 'latin1'), sshField(cipher), sshField(kdf), sshField(''), count, sshField(standInPublicKey(fill)), sshField(Buffer.alloc(48, fill))]);
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${(blob.toString('base64').match(/.{1,70}/g) ?? []).join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

/** The `{{SSH_…}}` placeholders of the fixtures test/e2e/ssh-key.test.ts deploys (test/helpers/sshd.ts gives the real ones). */
export const SSH_STAND_INS: Readonly<Record<string, string>> = {
  SSH_GIT_BASE: 'ssh://git@127.0.0.1:2222/srv/git',
  SSH_CLIENT_KEY: standInSshKey(1),
  SSH_OTHER_KEY: standInSshKey(2),
  SSH_KNOWN_HOSTS: `[127.0.0.1]:2222 ssh-ed25519 ${standInPublicKey(3).toString('base64')}`,
  SSH_WRONG_KNOWN_HOSTS: `[127.0.0.1]:2222 ssh-ed25519 ${standInPublicKey(4).toString('base64')}`,
  SSH_KNOWN_HOSTS_FILE: '/etc/ssh/ssh_known_hosts',
};

/**
 * A lock file for a Gemfile whose real one its test makes with bundler: each gem at
 * version 0.0.0 (the versions of a real lock file are this machine's), and a gem from
 * a git repository (`gem 'x', git: 'url'`) in a GIT section of its own, as bundler writes it.
 */
export function standInLockFile(gemfile: string): string {
  const fromGit = new Map([...gemfile.matchAll(/^gem\s+'([^']+)',\s*git:\s*'([^']+)'/gm)].map((m) => [m[1] as string, m[2] as string]));
  const gems = [...declaredGems(gemfile)].filter((g) => !fromGit.has(g)).sort();
  const git = [...fromGit].flatMap(([gem, remote]) => ['GIT', `  remote: ${remote}`, `  revision: ${'0'.repeat(40)}`, '  specs:', `    ${gem} (0.0.0)`, '']);
  const dependencies = [...gems, ...[...fromGit.keys()].map((g) => `${g}!`)].sort();
  return [
    ...git,
    'GEM',
    '  specs:',
    ...gems.map((g) => `    ${g} (0.0.0)`),
    '',
    'PLATFORMS',
    '  ruby',
    '',
    'DEPENDENCIES',
    ...dependencies.map((g) => `  ${g}`),
    '',
    'BUNDLED WITH',
    '   0.0.0',
    '',
  ].join('\n');
}
