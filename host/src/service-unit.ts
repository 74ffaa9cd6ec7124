import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from 'runplan/process';
import { MACHINE_VARIABLES } from './clean-environment.js';
import { HostErrors } from './errors.js';

/** The unit's name: one host per machine, as its ports 80, 443 and 22 are. */
export const UNIT_NAME = 'runplan-host.service';

/** Where systemd reads the units an administrator installs. */
export const DEFAULT_UNIT_DIR = '/etc/systemd/system';

/** The folders serve's programs are in (sshd and nft in sbin, git, caddy, bwrap and s6 in bin), then node's own. */
const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

export interface UnitOptions {
  /** The data folder serve runs. */
  readonly data: string;
  /** The program systemd starts: this package's bin/runplan-host.js (its shebang gives node its options). */
  readonly program?: string;
  /** The folder node is in: on the unit's PATH, for the program's `#!/usr/bin/env node`. */
  readonly nodeDir?: string;
  readonly home?: string;
  /** The environment install-service runs in: the machine's trust, proxies and Docker engine are taken from it. */
  readonly env?: NodeJS.ProcessEnv;
}

/** Whether a value carries a password (a proxy's `user:password@`): the unit is then root's alone. */
function unitHoldsSecret(unit: string): boolean {
  return /^Environment=".*:\/\/[^/\s"]*:[^/\s"]*@/m.test(unit);
}

/** This package's bin: the file npm links, in a clone and in a global install alike (dist/cli.js is beside it). */
function installedProgram(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'runplan-host.js');
}

/** A value in systemd's quoting: `"`, `\` escaped, `%` (a specifier) and `$` (a variable in ExecStart) doubled. */
function quoted(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\$/g, '$$$$')}"`;
}

/** The unit of `runplan-host serve` for this data folder (docs/operations.md, "The service"). */
export function serviceUnit({ data, program = installedProgram(), nodeDir = dirname(process.execPath), home = homedir(), env = process.env }: UnitOptions): string {
  const path = [...SYSTEM_PATH, ...(SYSTEM_PATH.includes(nodeDir) ? [] : [nodeDir])].join(delimiter);
  // The certificate authorities and proxies builds reach the npm registry through, and the Docker engine of a swarm host.
  const machine = MACHINE_VARIABLES.filter((name) => env[name] !== undefined && env[name] !== '').map((name) => `Environment=${quoted(`${name}=${env[name]}`)}\n`);
  return `# runplan-host serve, as a systemd service: written by \`runplan-host install-service\`.
# Start it now and at every boot: systemctl daemon-reload && systemctl enable --now runplan-host
#
# \`systemctl stop runplan-host\` stops serve alone: the API, the console, git pushes and deploys.
# The applications, the edge (Caddy), sshd and the add-on servers go on serving, each in a
# session of its own, and the next serve takes them over (docs/host.md, "What outlives serve").
# That is why KillMode=process: systemd signals serve's own process, never the rest of this
# unit's control group. Those processes stay in the unit's control group while serve is
# stopped; systemd then logs "left-over process" lines and starts serve all the same, and
# that serve adopts them. \`systemctl restart runplan-host\` is therefore a restart of serve
# alone, as an upgrade needs (docs/operations.md, "Upgrades").
# To stop everything: systemctl stop runplan-host, then runplan-host stop-apps --data ${data}
#
# Restart=on-failure: a crash (or the OOM killer) starts serve again after RestartSec; a
# SIGTERM that serve answers (systemctl stop) is a stop, not a failure.

[Unit]
Description=runplan-host serve (data folder ${data})
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
ExecStart=${quoted(program)} serve --data ${quoted(data)}
# serve's allow-list (docs/host.md, "serve's environment"), as install-service found it: the data folder, PATH, HOME, and the
# machine's certificate authorities, proxies and Docker engine. Another variable makes serve start itself again without it.
Environment=${quoted(`RUNPLAN_HOST_DATA=${data}`)}
Environment=${quoted(`PATH=${path}`)}
Environment=${quoted(`HOME=${home}`)}
${machine.join('')}Restart=on-failure
RestartSec=5s
KillMode=process
KillSignal=SIGTERM
TimeoutStopSec=90s
# Caddy proxies every application's connections (two descriptors each), and the releases inherit serve's limits.
LimitNOFILE=524288
# The releases' supervisors (s6-supervise, s6-log) and builds count against this unit; the applications' own
# processes are held by their own cgroups (settings.json "instance").
TasksMax=infinity

[Install]
WantedBy=multi-user.target
`;
}

/** Writes the unit into `unitDir`; a folder that cannot take it is RUNPLAN_HOST_E_SERVICE_UNIT_DIR. */
export async function installServiceUnit(unitDir: string, unit: string): Promise<string> {
  const file = join(unitDir, UNIT_NAME);
  try {
    // Never made: a machine without this folder is not run by systemd, or the folder was mistyped.
    if (!(await stat(unitDir)).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    await writeFileAtomic(file, unit, unitHoldsSecret(unit) ? 0o600 : 0o644);
  } catch (error) {
    throw HostErrors.SERVICE_UNIT_DIR.create({
      message: `cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
      file: unitDir,
    });
  }
  return file;
}
