import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { HostErrors } from '../src/errors.js';
import { gitShellCommand, procReceiveHookCommand } from '../src/git/commands.js';
import { parseGitCommand } from '../src/git/git-shell.js';
import { checkPushedRefs } from '../src/git/proc-receive.js';
import { PushError } from '../src/git/push-error.js';
import { authorizedKeysText, parsePublicKey } from '../src/ssh/authorized-keys.js';
import type { SshKeyRecord } from '../src/store/store.js';

const APP = 'app_0b7e4f3c-9d2a-4c1e-8f5b-2a6d7c8e9f01';

describe('parsePublicKey', () => {
  let dir: string;
  const keys: Record<string, { pub: string; priv: string; fingerprint: string }> = {};
  beforeAll(async () => {
    dir = await tempDir('runplan-host-keys-');
    for (const [name, args] of Object.entries({ ed25519: ['-t', 'ed25519'], ecdsa: ['-t', 'ecdsa', '-b', '384'], rsa: ['-t', 'rsa', '-b', '2048'] })) {
      const file = join(dir, name);
      execFileSync('ssh-keygen', ['-q', ...args, '-N', '', '-C', `dev@laptop ${name}`, '-f', file]);
      const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', `${file}.pub`], { encoding: 'utf8' }).split(' ')[1] as string;
      keys[name] = { pub: readFileSync(`${file}.pub`, 'utf8'), priv: readFileSync(file, 'utf8'), fingerprint };
    }
  });

  it("reads ed25519, ecdsa and rsa keys as ssh-keygen writes them, with ssh-keygen's fingerprint", () => {
    for (const [name, key] of Object.entries(keys)) {
      const parsed = parsePublicKey(key.pub, `${name}.pub`);
      expect(parsed.fingerprint).toBe(key.fingerprint);
      expect(parsed.comment).toBe(`dev@laptop ${name}`);
      expect(key.pub.startsWith(`${parsed.publicKey} `)).toBe(true);
    }
  });

  it('refuses a private key, options, several lines and a body of another type, naming the file and never quoting the key', () => {
    const ed = keys.ed25519 as { pub: string; priv: string };
    const rsaBody = (keys.rsa as { pub: string }).pub.split(' ')[1];
    const cases: Array<[string, RegExp]> = [
      [ed.priv, /private key/],
      [`no-pty,command="sh" ${ed.pub}`, /options before the type/],
      [`${ed.pub}${ed.pub}`, /2 lines/],
      [`ssh-ed25519 ${rsaBody}`, /embedded type differs/],
      ['ssh-ed25519 AAAA@@@@', /not base64/],
      ['', /empty/],
      ['ssh-dss AAAAB3NzaC1kc3MAAACBAP', /key type the host accepts \(ssh-dss\)/],
    ];
    for (const [text, reason] of cases) {
      let error: unknown;
      try {
        parsePublicKey(text, 'keys/dev.pub');
      } catch (caught) {
        error = caught;
      }
      expect(HostErrors.INPUT_KEY.is(error), text.slice(0, 30)).toBe(true);
      const { message, file } = error as { message: string; file: string };
      expect(file).toBe('keys/dev.pub');
      expect(message).toMatch(reason);
      expect(message).not.toContain('AAAA');
      expect(message).not.toContain('PRIVATE');
    }
  });

  it('writes one authorized_keys line per key: the forced command quoted for sshd, restrict, the key id as comment', () => {
    const key: SshKeyRecord = {
      id: 'key_0123456789ab',
      org: 'orga_acme',
      publicKey: parsePublicKey((keys.ed25519 as { pub: string }).pub).publicKey,
      fingerprint: 'unused',
      comment: 'dev@laptop "quoted"',
      addedAt: '2026-01-01T00:00:00Z',
    };
    const text = authorizedKeysText([key], (id) => `'/usr/bin/node' '/opt/a "b"/cli.js' git-shell --key ${id} --data '/var/lib/x'`);
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^#/);
    expect(lines[1]).toBe(`command="'/usr/bin/node' '/opt/a \\"b\\"/cli.js' git-shell --key key_0123456789ab --data '/var/lib/x'",restrict ${key.publicKey} key_0123456789ab`);
    expect(() => authorizedKeysText([key], () => 'x\nssh-ed25519 AAAA')).toThrow(/control character/);
    expect(() => authorizedKeysText([{ ...key, id: 'key_1 evil' }], () => 'x')).toThrow(/invalid key id/);
  });
});

describe('command lines', () => {
  it('single-quote every word that comes from a path, so /bin/sh gives the program back each word as is', () => {
    const command = gitShellCommand(['/usr/bin/printf', '%s|'], 'key_0123456789ab', "/var/lib/it's here");
    expect(command).toBe("'/usr/bin/printf' '%s|' git-shell --key 'key_0123456789ab' --data '/var/lib/it'\\''s here'");
    // printf repeats its format ("%s|") for each word after it.
    expect(execFileSync('/bin/sh', ['-c', command], { encoding: 'utf8' })).toBe("git-shell|--key|key_0123456789ab|--data|/var/lib/it's here|");
    expect(procReceiveHookCommand(['/usr/bin/node', '/cli.js'], '/d')).toBe("'/usr/bin/node' '/cli.js' hook proc-receive --data '/d'");
  });
});

describe('parseGitCommand', () => {
  it('accepts git-receive-pack of an application repository as git 2.39 sends it, and a few spellings of it', () => {
    for (const original of [`git-receive-pack '/${APP}.git'`, `git-receive-pack '${APP}.git'`, `git-receive-pack '/${APP}'`, `git-receive-pack /${APP}.git`, `git receive-pack '/${APP}.git'`]) {
      expect(parseGitCommand(original), original).toEqual({ service: 'git-receive-pack', appId: APP });
    }
  });

  it('refuses a shell, fetching, other programs, other paths and odd quoting, each with one sentence', () => {
    const refusals: Array<[string | undefined, RegExp]> = [
      [undefined, /no shell/],
      ['', /no shell/],
      [`git-upload-pack '/${APP}.git'`, /fetching and cloning are not offered: pushing .* is the only operation/],
      [`git-upload-archive '/${APP}.git'`, /fetching and cloning/],
      ['ls', /runs no command/],
      ['scp -t /tmp', /runs no command/],
      [`sh -c "git-receive-pack '/${APP}.git'"`, /runs no command/],
      [`git-receive-pack '~/${APP}.git'`, /no repository/],
      [`git-receive-pack '/../${APP}.git'`, /no repository/],
      [`git-receive-pack '/srv/${APP}.git'`, /no repository/],
      [`git-receive-pack '/${APP.toUpperCase()}.git'`, /no repository/],
      [`git-receive-pack '/${APP}.git'; rm -rf /`, /quoted in a way/],
      [`git-receive-pack "/${APP}.git"`, /quoted in a way/],
      [`git-receive-pack '/${APP}.git' extra`, /quoted in a way/],
    ];
    for (const [original, reason] of refusals) {
      const result = parseGitCommand(original);
      expect('refused' in result ? result.refused : 'accepted', String(original)).toMatch(reason);
      expect('refused' in result && !result.refused.includes('\n')).toBe(true);
    }
  });
});

describe('checkPushedRefs', () => {
  const a = 'a'.repeat(40);
  const b = 'b'.repeat(40);
  const zero = '0'.repeat(40);
  it('passes the update of master on', () => {
    expect(checkPushedRefs(`${a} ${b} refs/heads/master\n`)).toEqual({ update: { oldCommit: a, newCommit: b, ref: 'refs/heads/master' } });
  });
  it('refuses another branch naming master and how to push to it, a tag, and the deletion of master', () => {
    const other = checkPushedRefs(`${zero} ${b} refs/heads/feature\n`);
    expect('error' in other && other.error instanceof PushError && other.error.code).toBe(HostErrors.PUSH_BRANCH.code);
    expect('error' in other && other.error.message).toMatch(/only the master branch deploys; push to master with git push <remote> feature:master/);
    const both = checkPushedRefs(`${a} ${b} refs/heads/master\n${zero} ${b} refs/tags/v1\n`);
    expect('error' in both && both.error.message).toMatch(/refs\/tags\/v1 was not pushed/);
    const deletion = checkPushedRefs(`${a} ${zero} refs/heads/master\n`);
    expect('error' in deletion && deletion.error.message).toMatch(/master cannot be deleted/);
  });
});
