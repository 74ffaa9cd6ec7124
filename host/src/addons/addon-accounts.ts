import { createHash } from 'node:crypto';
import { lchownSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { HostErrors } from '../errors.js';
import type { ServerAccount } from './server-process.js';
import { runChecked } from '../programs.js';

/** The add-on kinds whose servers run one per add-on, each as its own account. */
export type WalledKind = 'storage' | 'redis';

const PREFIX: Record<WalledKind, string> = { storage: 'rp-s3-', redis: 'rp-redis-' };

/**
 * The system account of one add-on's server: a name made from a hash of the add-on's
 * id (useradd's 32 characters hold no whole id, and `ps -o user` and /etc/passwd,
 * which every local user reads, then show nothing of it).
 */
function addonAccountName(kind: WalledKind, addonId: string): string {
  return `${PREFIX[kind]}${createHash('sha256').update(addonId).digest('hex').slice(0, 20)}`;
}

/** useradd and userdel lock /etc/passwd: one at a time in this process, and a few tries against other processes' locks. */
let queue: Promise<unknown> = Promise.resolve();
function serialized<T>(work: () => Promise<T>): Promise<T> {
  const next = queue.then(work, work);
  queue = next.catch(() => {});
  return next;
}

async function accountIds(name: string): Promise<ServerAccount | undefined> {
  try {
    const [uid, gid] = await Promise.all([runChecked('id', ['-u', name]), runChecked('id', ['-g', name])]);
    return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return undefined;
  }
}

/** Runs useradd or userdel; exit codes in `fine` count as done (the account was there already, or gone already). */
async function accountTool(command: string, args: readonly string[], fine: readonly number[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await runChecked(command, args);
      return;
    } catch (error) {
      const e = error as { code?: number; stderr?: string; message: string };
      if (typeof e.code === 'number' && fine.includes(e.code)) return;
      // Another process holds the lock of /etc/passwd or /etc/group (exit 1 or 10): wait and try again.
      if (attempt < 20 && /lock/i.test(e.stderr ?? '')) {
        await new Promise((r) => setTimeout(r, 100 * attempt));
        continue;
      }
      throw HostErrors.ADDON_SERVER_FAILED.create({
        message: `${command} ${args.at(-1)} failed: ${String(e.stderr || e.message).trim()}`,
        fix: `Run runplan-host as root on a system with useradd and userdel (package passwd).`,
        details: { account: String(args.at(-1)), command },
        cause: error,
      });
    }
  }
}

/**
 * The add-on's own account, made with useradd --system when missing (its own uid and
 * group, no login shell, no home): its server runs as it and its folder is its alone,
 * so a path bug in one add-on's server reaches no other add-on's files. Undefined
 * when the host does not run as root (it runs its servers as itself).
 */
export function ensureAddonAccount(kind: WalledKind, addonId: string): Promise<ServerAccount | undefined> {
  if (process.getuid?.() !== 0) return Promise.resolve(undefined);
  const name = addonAccountName(kind, addonId);
  return serialized(async () => {
    const existing = await accountIds(name);
    if (existing) return existing;
    // Exit 9: the name was taken meanwhile (another serve on the same machine made it): the same account.
    await accountTool('useradd', ['--system', '--user-group', '--shell', '/usr/sbin/nologin', '--home-dir', '/nonexistent', '--no-create-home', '--comment', `runplan-host ${kind} add-on`, name], [9]);
    const made = await accountIds(name);
    if (!made) throw HostErrors.ADDON_SERVER_FAILED.create({ message: `useradd made no account ${name}`, details: { account: name, command: 'useradd' } });
    return made;
  });
}

/** Removes the add-on's account once its server has stopped and its folder is gone (exit 6: there was none). */
export function removeAddonAccount(kind: WalledKind, addonId: string): Promise<void> {
  if (process.getuid?.() !== 0) return Promise.resolve();
  return serialized(() => accountTool('userdel', [addonAccountName(kind, addonId)], [6]));
}

/** Gives a folder and everything in it to the account (a folder an earlier host made for another account, `redis` or `runplan-storage`). */
export function ownTree(folder: string, account: ServerAccount): void {
  if (lstatSync(folder).uid === account.uid) return;
  lchownSync(folder, account.uid, account.gid);
  for (const entry of readdirSync(folder, { recursive: true })) lchownSync(join(folder, String(entry)), account.uid, account.gid);
}
