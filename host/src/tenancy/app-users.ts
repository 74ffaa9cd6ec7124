import type { SandboxUser } from 'runplan';
import { runProgram } from 'runplan/process';
import { HostErrors } from '../errors.js';
import type { AppUserRecord, HostStore } from '../store/store.js';

/**
 * The uids given to applications: above Debian's reserved ids (up to 65535) and
 * the subordinate ids container engines map (100000–165535 for root by
 * default), below what tar's ustar format can carry (2097151). One range for
 * every host of a store: a uid recorded in it is never given again.
 */
export const APP_UIDS = { first: 800_000, last: 899_999 } as const;

/** `app_` and 28 hex digits of the application's UUID: a name useradd takes (32 characters at most) that says whose it is. */
export function appUserName(appId: string): string {
  const hex = /^app_([0-9a-f-]{36})$/.exec(appId)?.[1]?.replace(/-/g, '');
  if (!hex) throw HostErrors.INPUT_USAGE.create({ message: `${JSON.stringify(appId.slice(0, 60))} is not an application id (app_<uuid>).` });
  return `app_${hex.slice(0, 28)}`;
}

/**
 * Each application's own Unix user, as the store records it and the machine
 * has it: made when the application is created (and again, with the same uid,
 * on a machine that lacks it: a data folder moved, a store shared), never
 * another application's, never root, the SSH account or serve.
 */
export class AppUsers {
  private readonly known = new Map<string, SandboxUser>();

  constructor(private readonly store: HostStore) {}

  /** The application's user, made on this machine if it is not there. */
  async ensure(appId: string): Promise<SandboxUser> {
    const cached = this.known.get(appId);
    if (cached) return cached;
    const record = (await this.store.appUser(appId)) ?? (await this.allocate(appId));
    const user = await this.onThisMachine(record);
    this.known.set(appId, user);
    return user;
  }

  /**
   * A new uid: after the highest the store ever gave, skipping any this machine
   * uses already. The user is made on the machine before the store records it:
   * groupadd and useradd refuse a number taken meanwhile (another host of
   * another store on this machine chose the same one), and the next is tried.
   */
  private async allocate(appId: string): Promise<AppUserRecord> {
    const name = appUserName(appId);
    let uid = Math.max(APP_UIDS.first, ((await this.store.highestAppUid()) ?? 0) + 1);
    for (; uid <= APP_UIDS.last; uid++) {
      if ((await passwdEntry(String(uid))) || (await groupEntry(String(uid)))) continue;
      // A name the machine has already (a data folder moved) is kept: onThisMachine says what differs from the store.
      const madeHere = !(await passwdEntry(name)) && !(await groupEntry(name));
      if (madeHere && !(await makeOnMachine(appId, name, uid))) continue;
      const recorded = await this.store.recordAppUser({ uid, appId, name });
      if (recorded) return recorded;
      // Another host of this store recorded the uid meanwhile: ours goes, theirs (or the next uid) is used.
      if (madeHere) {
        await accountTool('userdel', [name], [6]);
        await accountTool('groupdel', [name], [6]);
      }
      const theirs = await this.store.appUser(appId);
      if (theirs) return theirs;
    }
    throw HostErrors.APP_USER_FAILED.create({ message: `every uid from ${APP_UIDS.first} to ${APP_UIDS.last} is given: no user can be made for ${appId}.` });
  }

  private async onThisMachine(record: AppUserRecord): Promise<SandboxUser> {
    const existing = await passwdEntry(record.name);
    if (existing) {
      if (existing.uid !== record.uid || existing.gid !== record.uid) {
        throw HostErrors.APP_USER_FAILED.create({
          message: `the user ${record.name} of ${record.appId} has uid ${existing.uid} and gid ${existing.gid} on this machine, and the store gave it ${record.uid}.`,
          fix: `Remove or renumber the machine's user ${record.name} (userdel ${record.name}), or give this host a store of its own; then run the command again.`,
        });
      }
      return { name: record.name, uid: record.uid, gid: record.uid };
    }
    const taken = (await passwdEntry(String(record.uid))) ?? (await groupEntry(String(record.uid)));
    if (taken) {
      throw HostErrors.APP_USER_FAILED.create({
        message: `the uid ${record.uid} that the store gave ${record.appId} belongs to ${taken.name} on this machine.`,
        fix: `Free uid and gid ${record.uid} on this machine (it is the application's in the store), then run the command again.`,
      });
    }
    if (!(await makeOnMachine(record.appId, record.name, record.uid))) {
      throw HostErrors.APP_USER_FAILED.create({
        message: `the uid ${record.uid} that the store gave ${record.appId} was taken on this machine while its user was made.`,
        fix: `Free uid and gid ${record.uid} on this machine (it is the application's in the store), then run the command again.`,
      });
    }
    return { name: record.name, uid: record.uid, gid: record.uid };
  }
}

/** Held while a number is checked and given: groupadd and useradd check a number before they lock /etc/group, so two at once can both take it. */
const MACHINE_LOCK = '/run/runplan-host-app-users.lock';

/**
 * Checks that the number `uid` is free and makes the application's group and
 * user with it, under flock(1) on MACHINE_LOCK (every host on this machine
 * takes it, and the kernel lets go of it when a host dies). False when the
 * number is taken, so the caller can choose another. Its own group, same
 * number; no home, no login, no password: only runplan starts its processes.
 */
async function makeOnMachine(appId: string, name: string, uid: number): Promise<boolean> {
  const script = [
    'if getent passwd "$1" >/dev/null || getent group "$1" >/dev/null; then exit 4; fi',
    'groupadd --gid "$1" "$2" || exit $?',
    'useradd --uid "$1" --gid "$1" --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --comment "$3" "$2" || { s=$?; groupdel "$2"; exit $s; }',
  ].join('\n');
  const made = await accountTool('flock', [MACHINE_LOCK, 'sh', '-c', script, 'sh', String(uid), name, `runplan-host ${appId}`], [4], `groupadd and useradd ${name}`);
  return made === 0;
}

/**
 * Runs groupadd, useradd, groupdel or userdel: an exit code in `expected` is
 * returned for the caller to decide; another process holding the lock of
 * /etc/passwd or /etc/group (exit 1 or 10, "lock") is waited for.
 */
async function accountTool(program: string, args: string[], expected: readonly number[], what = `${program} ${args.at(-1)}`): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const ran = await runProgram(program, args);
    if (ran?.ok) return 0;
    if (ran && ran.exitCode !== null && ran.exitCode !== undefined && expected.includes(ran.exitCode)) return ran.exitCode;
    const said = ran ? (ran.stderr || ran.stdout).trim() : '';
    if (ran && attempt < 20 && /lock/i.test(said)) {
      await new Promise((r) => setTimeout(r, 100 * attempt));
      continue;
    }
    throw HostErrors.APP_USER_FAILED.create({
      message: `${what} failed: ${ran ? said.split('\n').pop() : `${program} is not installed`}`,
    });
  }
}

async function passwdEntry(key: string): Promise<{ name: string; uid: number; gid: number } | undefined> {
  const ran = await runProgram('getent', ['passwd', key]);
  const [name, , uid, gid] = ran?.ok ? ran.stdout.trim().split(':') : [];
  return name && uid && gid ? { name, uid: Number(uid), gid: Number(gid) } : undefined;
}

async function groupEntry(key: string): Promise<{ name: string } | undefined> {
  const ran = await runProgram('getent', ['group', key]);
  const name = ran?.ok ? ran.stdout.trim().split(':')[0] : undefined;
  return name ? { name } : undefined;
}
