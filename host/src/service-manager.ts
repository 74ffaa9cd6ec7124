import { readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { writeFileAtomic } from 'runplan/process';
import type { HostPaths } from './paths.js';

/**
 * What keeps serve running: a service manager starts it again after a crash and at boot; without one,
 * nothing does (serve's releases, Caddy and sshd go on, but pushes, the API and the console stop).
 */
export interface ServiceManager {
  readonly name: 'systemd' | 'runit' | 's6';
  /** systemd's unit (runplan-host.service), runit's or s6's supervisor program. */
  readonly unit: string | null;
}

/**
 * The variables systemd gives a service's process about itself. serve reads them (INVOCATION_ID says systemd
 * started it) and passes none on: they describe serve's own invocation, not its children's, and they are not the
 * operator's, so serve need not start itself again in a clean environment because of them.
 */
const SERVICE_MANAGER_VARIABLES = ['INVOCATION_ID', 'JOURNAL_STREAM', 'SYSTEMD_EXEC_PID', 'NOTIFY_SOCKET', 'WATCHDOG_PID', 'WATCHDOG_USEC'] as const;

/** How the serve that runs a clean environment learns what its first process found (its parent is then that process). */
const PASSED_ON = 'RUNPLAN_HOST_SERVICE_MANAGER';

/** The parent programs that supervise a service and restart it: runit's and s6's. */
const SUPERVISORS: Readonly<Record<string, ServiceManager['name']>> = { runsv: 'runit', 's6-supervise': 's6' };

/**
 * The service manager that started this process, from what it left: systemd's INVOCATION_ID (and the unit in
 * the cgroup path, `0::/system.slice/runplan-host.service`), or a parent that is runit's runsv or s6-supervise.
 */
export function detectServiceManager(env: NodeJS.ProcessEnv, parentCommand: string | undefined, cgroup: string | undefined): ServiceManager | null {
  const passed = env[PASSED_ON];
  if (passed !== undefined) return parseManager(passed);
  if (env.INVOCATION_ID !== undefined && /^[0-9a-f]{32}$/.test(env.INVOCATION_ID)) {
    const unit = /\/([^/\s]+\.service)\s*$/m.exec(cgroup ?? '')?.[1] ?? null;
    return { name: 'systemd', unit };
  }
  const supervisor = parentCommand === undefined ? undefined : SUPERVISORS[parentCommand.trim()];
  return supervisor === undefined ? null : { name: supervisor, unit: parentCommand?.trim() ?? null };
}

/** This process's service manager, read once at serve's start, before the environment is cleaned. */
export function currentServiceManager(): ServiceManager | null {
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  };
  return detectServiceManager(process.env, read(`/proc/${process.ppid}/comm`), read('/proc/self/cgroup'));
}

/** Removes systemd's variables about this process (and what a first serve passed on) from `env`: nothing serve starts inherits them. */
export function forgetServiceManagerVariables(env: NodeJS.ProcessEnv): void {
  for (const name of [...SERVICE_MANAGER_VARIABLES, PASSED_ON]) delete env[name];
}

/** The variable that tells the serve started again in a clean environment what its first process found. */
export function passServiceManager(manager: ServiceManager | null): Record<string, string> {
  return manager === null ? {} : { [PASSED_ON]: JSON.stringify(manager) };
}

function parseManager(text: string): ServiceManager | null {
  try {
    const value = JSON.parse(text) as Partial<ServiceManager>;
    return value.name === 'systemd' || value.name === 'runit' || value.name === 's6' ? { name: value.name, unit: typeof value.unit === 'string' ? value.unit : null } : null;
  } catch {
    return null;
  }
}

/** Recorded beside serve.pid at serve's start, for `status` to say (removed with serve.pid when serve stops). */
export async function recordServiceManager(paths: HostPaths, manager: ServiceManager | null): Promise<void> {
  await writeFileAtomic(paths.serveManager, `${JSON.stringify({ serviceManager: manager })}\n`, 0o644);
}

/** What the running serve recorded; `undefined` when it recorded nothing (a serve of an earlier version). */
export async function readServiceManager(paths: HostPaths): Promise<ServiceManager | null | undefined> {
  const text = await readFile(paths.serveManager, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const { serviceManager } = JSON.parse(text) as { serviceManager: unknown };
    return serviceManager === null ? null : parseManager(JSON.stringify(serviceManager));
  } catch {
    return undefined;
  }
}

export async function forgetServiceManager(paths: HostPaths): Promise<void> {
  await rm(paths.serveManager, { force: true });
}

/** status's line about it. */
export function describeServiceManager(manager: ServiceManager | null | undefined): string {
  if (manager === undefined) return 'serve recorded no service manager (it is older than this runplan-host)';
  if (manager === null) return 'serve is not under a service manager: nothing restarts it after a crash or a reboot (runplan-host install-service writes a systemd unit)';
  if (manager.name === 'systemd') return `serve runs under systemd${manager.unit ? ` (unit ${manager.unit})` : ''}: it is started again when it fails, and at boot once the unit is enabled`;
  return `serve runs under ${manager.name} (${manager.unit}): it is started again when it exits`;
}
