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

  /** A new uid: after the highest the store ever gave, skipping any this machine uses already. */
  private async allocate(appId: string): Promise<AppUserRecord> {
    const name = appUserName(appId);
    let uid = Math.max(APP_UIDS.first, ((await this.store.highestAppUid()) ?? 0) + 1);
    for (; uid <= APP_UIDS.last; uid++) {
      if ((await passwdEntry(String(uid))) || (await groupEntry(String(uid)))) continue;
      const recorded = await this.store.recordAppUser({ uid, appId, name });
      if (recorded) return recorded;
      // Another host of this store recorded it meanwhile: its user (or the next uid).
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
    // Its own group, same number; no home, no login, no password: only runplan starts its processes.
    await must('groupadd', ['--gid', String(record.uid), record.name]);
    await must('useradd', [
      '--uid',
      String(record.uid),
      '--gid',
      String(record.uid),
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      '--comment',
      `runplan-host ${record.appId}`,
      record.name,
    ]);
    return { name: record.name, uid: record.uid, gid: record.uid };
  }
}

async function must(program: string, args: string[]): Promise<void> {
  const ran = await runProgram(program, args);
  if (!ran?.ok) {
    throw HostErrors.APP_USER_FAILED.create({
      message: `${program} ${args[args.length - 1]} failed: ${ran ? (ran.stderr || ran.stdout).trim().split('\n').pop() : `${program} is not installed`}`,
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
