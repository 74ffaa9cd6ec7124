import { readdir, readFile, stat } from 'node:fs/promises';
import { HostErrors } from '../errors.js';
import { runChecked } from '../programs.js';

/** A POSIX account name useradd accepts (and one that is safe in sshd_config's AllowUsers). */
const USER_NAME = /^[a-z_][a-z0-9_-]{0,30}$/;

export interface SshUser {
  readonly uid: number;
  readonly gid: number;
  /** Whether this call made the account (a test removes only what it made). */
  readonly created: boolean;
  /** Its home as the system knows it: `home` when created, the account's own when reused. */
  readonly home: string;
}

/**
 * The system account sshd logs pushes in as (the specification's `git`). Made
 * with useradd --system when missing: shell /bin/sh, because sshd runs the
 * forced command through the user's shell; password field `*`, because with
 * UsePAM no sshd refuses every login, key logins included, to an account whose
 * password is locked (`!`, useradd's default) — `*` still matches no password.
 * An existing account is reused; if its password is locked it is set to `*`
 * for the same reason, and if its home is gone (the data folder of a host since
 * removed, which made the account) it becomes `home`: sshd changes into the
 * account's home before the forced command, and says `Could not chdir to home
 * directory …` on every push when it cannot. Nothing else of it changes.
 */
export async function ensureSshUser(name: string, home: string): Promise<SshUser> {
  checkName(name);
  let created = false;
  let entry = await passwdEntry(name);
  if (entry === undefined) {
    try {
      await runChecked('useradd', ['--system', '--user-group', '--shell', '/bin/sh', '--home-dir', home, '--no-create-home', '--password', '*', name]);
    } catch (cause) {
      throw HostErrors.HOST_PART_FAILED.create({
        message: `the SSH user ${name} could not be created with useradd: ${lastLine(cause)}`,
        fix: 'Run runplan-host as root on a system with useradd (package passwd), or create the account yourself (shell /bin/sh).',
        cause,
      });
    }
    created = true;
    entry = await passwdEntry(name);
    if (entry === undefined) throw HostErrors.HOST_PART_FAILED.create({ message: `useradd reported success but the SSH user ${name} does not exist` });
  } else {
    if (await isLocked(name)) await runChecked('usermod', ['--password', '*', name]);
    if (!(await isFolder(entry.home))) {
      await runChecked('usermod', ['--home', home, name]);
      entry = { ...entry, home };
    }
  }
  return { uid: entry.uid, gid: entry.gid, home: entry.home, created };
}

/**
 * Removes an account ensureSshUser created (tests); its home is the host's
 * folder and stays. userdel refuses while the account runs a process, and an
 * SSH session's processes end a moment after the client's: it waits for them
 * (bounded by `timeoutMs`), never kills them.
 */
export async function removeSshUser(name: string, timeoutMs = 10_000): Promise<void> {
  checkName(name);
  const entry = await passwdEntry(name);
  if (entry === undefined) return;
  const deadline = Date.now() + timeoutMs;
  while ((await processesOf(entry.uid)) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  await runChecked('userdel', [name]);
}

/** How many live processes run as `uid` (Linux /proc). */
async function processesOf(uid: number): Promise<number> {
  let count = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const real = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      const state = /^State:\s+(\S)/m.exec(status)?.[1];
      if (Number(real) === uid && state !== 'Z') count += 1;
    } catch {
      // Gone already.
    }
  }
  return count;
}

function checkName(name: string): void {
  if (!USER_NAME.test(name)) {
    throw HostErrors.INPUT_USAGE.create({
      message: `the SSH user name ${JSON.stringify(name)} is not a valid account name`,
      fix: 'Use lower-case letters, digits, "_" and "-", starting with a letter (e.g. git).',
    });
  }
}

async function passwdEntry(name: string): Promise<{ uid: number; gid: number; home: string } | undefined> {
  try {
    const { stdout } = await runChecked('getent', ['passwd', name]);
    const fields = stdout.trim().split(':');
    return { uid: Number(fields[2]), gid: Number(fields[3]), home: fields[5] ?? '/' };
  } catch {
    // getent exits 2 when the key is not found.
    return undefined;
  }
}

async function isFolder(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

async function isLocked(name: string): Promise<boolean> {
  try {
    const { stdout } = await runChecked('getent', ['shadow', name]);
    return (stdout.split(':')[1] ?? '').startsWith('!');
  } catch {
    return false;
  }
}

function lastLine(error: unknown): string {
  const text = String((error as { stderr?: string }).stderr || (error as Error).message || error).trim();
  return text.split('\n').pop() ?? '';
}
