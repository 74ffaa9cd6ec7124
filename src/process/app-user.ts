import { CoreErrors } from '../errors/core-errors.js';
import { runProgram } from './run-program.js';

/**
 * Who build steps and application processes run as. When runplan runs as root
 * they run as a dedicated unprivileged system user (`runplan` unless
 * RUNPLAN_APP_USER names another), so that an application can neither write the
 * shared cache nor anything else of the host; otherwise they run as the
 * invoking user (docs/security.md, "Unprivileged processes").
 */
export interface AppUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
  /** True when runplan runs as root and processes run as this other user. */
  readonly dropped: boolean;
}

const DEFAULT_APP_USER = 'runplan';

/** A passwd line (`name:x:uid:gid:gecos:home:shell`) as a user, if it is one. */
export function parsePasswdEntry(line: string): { name: string; uid: number; gid: number } | undefined {
  const fields = line.trim().split(':');
  if (fields.length < 7) return undefined;
  const [name, , uid, gid] = fields;
  if (!name || !/^\d+$/.test(uid ?? '') || !/^\d+$/.test(gid ?? '')) return undefined;
  return { name, uid: Number(uid), gid: Number(gid) };
}

/** The name to run as, from the environment: RUNPLAN_APP_USER or `runplan`; checked so that it cannot become an option of getent or useradd. */
export function appUserName(env: NodeJS.ProcessEnv = process.env): string {
  const name = env.RUNPLAN_APP_USER?.trim() || DEFAULT_APP_USER;
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(name)) {
    throw CoreErrors.HOST_APP_USER.create({
      message: `RUNPLAN_APP_USER=${JSON.stringify(name.slice(0, 40))} is not a user name (lower-case letters, digits, "_" and "-", at most 32).`,
      variable: 'RUNPLAN_APP_USER',
    });
  }
  return name;
}

let resolved: Promise<AppUser> | undefined;
let lastCreateError: string | undefined;

/** The user of this process's builds and runs, resolved (and created if needed) once per process. */
export function appUser(): Promise<AppUser> {
  resolved ??= resolveAppUser().catch((error: unknown) => {
    resolved = undefined;
    throw error;
  });
  return resolved;
}

/** runplan's own user, for changes in its own trees (an image's build context) made the same way as in an application's. */
export function runplanItself(): AppUser {
  const uid = process.getuid?.() ?? -1;
  const gid = process.getgid?.() ?? -1;
  return { name: process.env.USER ?? String(uid), uid, gid, dropped: false };
}

async function resolveAppUser(): Promise<AppUser> {
  // The user's PATH (RUNPLAN_APP_PATH) is refused before anything runs, not at the first step.
  appUserPath();
  if (process.getuid?.() !== 0) return runplanItself();
  const name = appUserName();
  let entry = await lookup(name);
  if (!entry && !process.env.RUNPLAN_APP_USER) {
    // First use on this host: a system user with its own group, no home and no login shell.
    // Another runplan may create it at the same moment; the lookup after decides.
    const created = await runProgram('useradd', [
      '--system',
      '--user-group',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      '--comment',
      'runplan applications',
      name,
    ]);
    if (!created?.ok) lastCreateError = created === undefined ? 'useradd is not on PATH' : (created.stderr || `exit status ${created.exitCode}`).trim().slice(0, 300);
    entry = await lookup(name);
  }
  if (!entry) {
    throw CoreErrors.HOST_APP_USER.create({
      message: process.env.RUNPLAN_APP_USER
        ? `RUNPLAN_APP_USER names ${name}, which is not a user of this host.`
        : `runplan runs as root, so builds and applications run as the system user ${name}, which does not exist and could not be created (useradd: ${lastCreateError ?? 'unknown error'}).`,
      ...(process.env.RUNPLAN_APP_USER ? { variable: 'RUNPLAN_APP_USER' } : {}),
    });
  }
  if (entry.uid === 0 || entry.gid === 0) {
    throw CoreErrors.HOST_APP_USER.create({ message: `the user ${name} has uid ${entry.uid} and gid ${entry.gid}; applications must not run with root's uid or group.`, variable: 'RUNPLAN_APP_USER' });
  }
  return { ...entry, dropped: true };
}

async function lookup(name: string): Promise<{ name: string; uid: number; gid: number } | undefined> {
  const ran = await runProgram('getent', ['passwd', name]);
  return ran?.ok ? parsePasswdEntry(ran.stdout) : undefined;
}

/** spawn()'s uid and gid for `user`: none when the processes run as runplan itself. */
export function spawnIdentity(user: AppUser | undefined): { uid?: number; gid?: number } {
  return user?.dropped ? { uid: user.uid, gid: user.gid } : {};
}

/** The system's standard folders of programs: Debian's PATH for root, and the default PATH of container images. */
const SYSTEM_PATH: readonly string[] = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/**
 * The PATH of the dedicated user, before the plan's own folders (the runtime's
 * and tools', which steps and processes put first): the folders the host names
 * in RUNPLAN_APP_PATH (absolute, separated by ":"), then the system's. Nothing
 * of the invoking user's PATH: its folders under root's home (~/.cargo/bin,
 * ~/.pyenv/shims…) are not the application's, and the user cannot even search
 * them, so `sh` would say "Permission denied" for a command that is missing.
 */
export function appUserPath(env: NodeJS.ProcessEnv = process.env): string {
  const text = env.RUNPLAN_APP_PATH?.trim() ?? '';
  const added = text === '' ? [] : text.split(':');
  for (const dir of added) {
    if (!dir.startsWith('/') || /[\0\n\r]/.test(dir)) {
      throw CoreErrors.HOST_INVALID_SETTING.create({
        message: `RUNPLAN_APP_PATH must list absolute folders separated by ":", and ${JSON.stringify(dir.slice(0, 60))} is not one.`,
        variable: 'RUNPLAN_APP_PATH',
        fix: 'Set RUNPLAN_APP_PATH to absolute folders separated by ":" (e.g. /opt/tools/bin), or unset it.',
      });
    }
  }
  return [...new Set([...added, ...SYSTEM_PATH])].join(':');
}

/**
 * Variables that name the user: HOME is a private, writable directory when
 * the user is the dedicated one (it has no home; tools keep their caches and
 * configuration there for the length of the build or run), and PATH its own
 * (appUserPath). Running as the invoking user, they stay that user's.
 */
export function userEnvironment(user: AppUser | undefined, home: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return user?.dropped ? { HOME: home, USER: user.name, LOGNAME: user.name, PATH: appUserPath(env) } : {};
}
