import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A user the test made: an application's own, as a host with several tenants makes one per application. */
export interface TestUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
  remove(): Promise<void>;
}

/**
 * A system user with its own group for one test (no home, no login), removed by
 * remove(). Its uid is the system's choice: nothing else of the machine has it.
 */
export async function makeTestUser(prefix = 'rpt'): Promise<TestUser> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await run('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', '--comment', 'runplan test application', name]);
  const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
  return {
    name,
    uid: Number(uid.stdout.trim()),
    gid: Number(gid.stdout.trim()),
    remove: async () => {
      await run('userdel', [name]).catch(() => undefined);
      await run('groupdel', [name]).catch(() => undefined);
    },
  };
}
