import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { ensureSshUser, removeSshUser } from '../src/ssh/ssh-user.js';

const run = promisify(execFile);
const homeOf = async (name: string) => (await run('getent', ['passwd', name])).stdout.trim().split(':')[5];

/** The SSH account pushes log in as, made or reused by init and serve (real useradd and usermod). */
describe('the SSH account', () => {
  it('takes this host as its home when the account is reused and its home is gone (sshd said "Could not chdir to home directory" on every push)', async () => {
    const name = `rph-${randomBytes(3).toString('hex')}`;
    // An account a host made, whose data folder has been removed since.
    const gone = join(await tempDir('runplan-removed-host-'), 'data', 'ssh');
    await run('useradd', ['--system', '--user-group', '--shell', '/bin/sh', '--home-dir', gone, '--no-create-home', '--password', '*', name]);
    try {
      const here = await tempDir('runplan-ssh-home-');
      expect(await ensureSshUser(name, here)).toMatchObject({ created: false, home: here });
      expect(await homeOf(name)).toBe(here);
      // A home that exists is the account's own choice, or another host's: it stays.
      const other = await tempDir('runplan-ssh-other-');
      expect(await ensureSshUser(name, other)).toMatchObject({ created: false, home: here });
      expect(await homeOf(name)).toBe(here);
    } finally {
      await removeSshUser(name);
    }
  });
});
