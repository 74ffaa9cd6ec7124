import { randomUUID } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startProgram } from 'runplan/process';
import { freePort } from '../deploy/free-port.js';
import { HostErrors } from '../errors.js';
import { runChecked } from '../programs.js';
import type { Supervisor } from '../supervision/supervisor.js';
import { type ServerAccount, ServerProcess, serverAccount } from './server-process.js';

const LOOPBACK = '127.0.0.1';
/** The packages the cluster's programs come from (the fix of every error that finds one missing). */
export const CEPH_PACKAGES = 'ceph-mon ceph-osd radosgw';
/** The OSD's file, when settings.json names no size: sparse, so it takes on disk only what is stored. */
export const DEFAULT_OSD_MB = 20_480;
const MIN_OSD_MB = 2048;

export interface CephClusterOptions {
  /** `<data>/addons/storage/ceph`: its config, keyrings, the monitor's store, the OSD's file, logs and sockets. */
  readonly dir: string;
  /** The size of the OSD's BlueStore file in MiB, fixed when the cluster is made. */
  readonly osdMb?: number;
  /** Who the daemons run as: by default `ceph` when the host runs as root (null: the host's own user). */
  readonly account?: ServerAccount | null;
  readonly supervisor?: Supervisor;
}

/** What making the cluster chose, kept in `cluster.json`: the monitor's address is in its map for good. */
interface Made {
  readonly monPort: number;
  readonly gatewayPort: number;
  readonly osdId: number;
}

/** Ceph's health as `ceph health` reports it. */
export interface CephHealth {
  readonly status: 'HEALTH_OK' | 'HEALTH_WARN' | 'HEALTH_ERR' | string;
  /** Each check's code and summary ("MON_DISK_LOW: mon a is low on available space"). */
  readonly checks: readonly string[];
}

/**
 * A one-node Ceph cluster for the storage add-ons: a monitor, one OSD (BlueStore on a
 * sparse file) and the S3 gateway radosgw, all on loopback, made once under `dir` and
 * run as Debian's `ceph` account. No manager: the gateway serves without one, and it
 * would cost some 300 MiB (docs/host.md). Each daemon is a supervised ServerProcess,
 * started in order (the gateway waits for the OSD), and checked through its own admin
 * socket, which says what the process is doing now (the monitor's map keeps a killed
 * OSD "up" for minutes when no other OSD reports it).
 */
export class CephCluster {
  private readonly servers: ServerProcess[] = [];
  private made_: Made | undefined;
  private account: ServerAccount | undefined;

  constructor(private readonly options: CephClusterOptions) {}

  get dir(): string {
    return this.options.dir;
  }
  private get conf(): string {
    return join(this.dir, 'ceph.conf');
  }
  private get adminKeyring(): string {
    return join(this.dir, 'client.admin.keyring');
  }
  /** The gateway's loopback port: STORAGE_ADDON_HOST names it. */
  get gatewayPort(): number {
    if (!this.made_) throw new Error('CephCluster: start() first');
    return this.made_.gatewayPort;
  }
  /** The daemons' PIDs (monitor, OSD, gateway) while they run. */
  get pids(): number[] {
    return this.servers.map((s) => s.pid);
  }

  /** Makes the cluster on first start, then starts the monitor, the OSD and the gateway, each once the one before answers. */
  async start(): Promise<void> {
    if (this.servers.length > 0) return;
    this.account = this.options.account === undefined ? await serverAccount('ceph') : (this.options.account ?? undefined);
    this.made_ = existsSync(this.madeFile) ? (JSON.parse(readFileSync(this.madeFile, 'utf8')) as Made) : await this.make();
    const made = this.made_;
    const daemon = (name: string, what: string, command: string, args: string[], ready: () => Promise<boolean>) =>
      ServerProcess.start({
        supervisor: this.options.supervisor,
        what,
        command,
        args: ['-f', '-c', this.conf, ...args],
        cwd: this.daemonDir(name),
        account: this.account,
        logFile: join(this.dir, 'log', `${name}.out`),
        // The OSD replays its journal and the gateway makes its pools on first start: slower than a server of one process.
        timeoutMs: 90_000,
        pollMs: 250,
        ready,
      });
    this.servers.push(await daemon('mon.a', 'Ceph monitor', 'ceph-mon', ['-i', 'a'], () => this.daemonState('mon.a', 'mon_status', /"state":\s*"leader"/)));
    this.servers.push(await daemon(`osd.${made.osdId}`, 'Ceph OSD', 'ceph-osd', ['-i', String(made.osdId)], () => this.daemonState(`osd.${made.osdId}`, 'status', /"state":\s*"active"/)));
    this.servers.push(await daemon('client.rgw.a', 'Ceph S3 gateway', 'radosgw', ['-n', 'client.rgw.a'], () => this.gatewayAnswers()));
  }

  /** radosgw-admin as the cluster's administrator: its JSON output parsed. Never given a secret: it makes them. */
  async rgwAdmin(args: readonly string[]): Promise<unknown> {
    const { stdout } = await runChecked('radosgw-admin', ['-c', this.conf, '-n', 'client.admin', '-k', this.adminKeyring, ...args], { timeoutMs: 60_000 });
    return stdout.trim() === '' ? undefined : JSON.parse(stdout);
  }

  /** Ceph's health, from the monitor. */
  async health(): Promise<CephHealth> {
    const { stdout } = await runChecked('ceph', ['-c', this.conf, '-n', 'client.admin', '-k', this.adminKeyring, '--connect-timeout', '5', 'health', '--format', 'json'], { timeoutMs: 15_000 });
    const parsed = JSON.parse(stdout) as { status: string; checks?: Record<string, { summary?: { message?: string } }> };
    return { status: parsed.status, checks: Object.entries(parsed.checks ?? {}).map(([code, c]) => `${code}: ${c.summary?.message ?? ''}`) };
  }

  /** Stops the gateway, the OSD, then the monitor (each waited for): the OSD flushes before the monitor goes. */
  async stop(): Promise<void> {
    for (const server of [...this.servers].reverse()) await server.stop();
    this.servers.length = 0;
  }

  /**
   * The cluster, stopped, found in `to` from now on (a restore makes it in a folder it renames): its config
   * names its folders; nothing else in it holds a path (the monitor's map holds addresses, the OSD its data's own).
   */
  relocate(to: string): void {
    if (this.servers.length > 0) throw new Error('CephCluster: stop() before relocate()');
    writeFileSync(this.conf, readFileSync(this.conf, 'utf8').replaceAll(`${this.dir}/`, `${to}/`), { mode: 0o600 });
  }

  /** Lets go of the daemons, which keep serving: the next serve takes them over. */
  detach(): void {
    for (const server of this.servers) server.detach();
    this.servers.length = 0;
  }

  private get madeFile(): string {
    return join(this.dir, 'cluster.json');
  }
  private daemonDir(name: string): string {
    return join(this.dir, 'daemons', name);
  }

  /** Asks a daemon through its admin socket what it is doing: true when the answer matches `state`. */
  private async daemonState(name: string, command: string, state: RegExp): Promise<boolean> {
    const { stdout } = await runChecked('ceph', ['--admin-daemon', join(this.dir, 'run', `${name}.asok`), command], { timeoutMs: 10_000 });
    return state.test(stdout);
  }

  private async gatewayAnswers(): Promise<boolean> {
    // Any S3 answer will do: an unsigned listing is answered (an anonymous owner's empty list) once it serves.
    const response = await fetch(`http://${LOOPBACK}:${this.gatewayPort}/`, { signal: AbortSignal.timeout(5000) });
    await response.arrayBuffer();
    return response.status === 200;
  }

  /**
   * Makes the cluster in a folder of its own beside `dir`, moved into place once whole: a host stopped
   * half-way leaves no cluster it would then try to start. Its monitor runs only while the OSD is added.
   */
  private async make(): Promise<Made> {
    const osdMb = this.options.osdMb ?? DEFAULT_OSD_MB;
    if (!Number.isInteger(osdMb) || osdMb < MIN_OSD_MB) {
      throw HostErrors.INPUT_USAGE.create({
        message: `the storage add-ons' OSD size ${osdMb} MiB in settings.json is not a whole number of at least ${MIN_OSD_MB}`,
        fix: `Set "storage": { "osdMb": ${DEFAULT_OSD_MB} } or remove it.`,
        details: { osdMb },
      });
    }
    const made: Made = { monPort: await freePort(), gatewayPort: await freePort(), osdId: 0 };
    // The paths in ceph.conf are the final ones: the daemons run only once it is in place; the tools given --conf read the rest from the making folder.
    const dir = this.dir;
    const work = `${dir}.making`;
    rmSync(work, { recursive: true, force: true });
    // Folders made on the way are searchable (0711) so the daemons' account reaches its own.
    mkdirSync(dirname(dir), { recursive: true, mode: 0o711 });
    for (const sub of ['', 'run', 'log', 'mon', 'osd', 'daemons', 'daemons/mon.a', `daemons/osd.${made.osdId}`, 'daemons/client.rgw.a']) {
      mkdirSync(join(work, sub), { recursive: true, mode: 0o700 });
    }
    const fsid = randomUUID();
    const inWork = (text: string) => text.replaceAll(dir, work);
    writeFileSync(join(work, 'ceph.conf'), cephConf(dir, fsid, made, osdMb), { mode: 0o600 });
    const workConf = join(work, 'ceph.making.conf');
    writeFileSync(workConf, inWork(cephConf(dir, fsid, made, osdMb)), { mode: 0o600 });
    const tool = (command: string, args: readonly string[], asAccount = false) =>
      runChecked(command, args, { cwd: work, timeoutMs: 120_000, ...(asAccount && this.account ? { uid: this.account.uid, gid: this.account.gid } : {}) });
    const admin = ['-c', workConf, '-n', 'client.admin', '-k', join(work, 'client.admin.keyring')];
    let mon: ReturnType<typeof startProgram> | undefined;
    try {
      await tool('ceph-authtool', ['--create-keyring', join(work, 'mon.keyring'), '--gen-key', '-n', 'mon.', '--cap', 'mon', 'allow *']);
      await tool('ceph-authtool', [
        '--create-keyring',
        join(work, 'client.admin.keyring'),
        '--gen-key',
        '-n',
        'client.admin',
        '--cap',
        'mon',
        'allow *',
        '--cap',
        'osd',
        'allow *',
        '--cap',
        'mgr',
        'allow *',
      ]);
      await tool('ceph-authtool', [join(work, 'mon.keyring'), '--import-keyring', join(work, 'client.admin.keyring')]);
      await tool('monmaptool', ['--create', '--addv', 'a', `[v2:${LOOPBACK}:${made.monPort}]`, '--fsid', fsid, join(work, 'monmap')]);
      await this.own(work);
      await tool('ceph-mon', ['-c', workConf, '--mkfs', '-i', 'a', '--monmap', join(work, 'monmap'), '--keyring', join(work, 'mon.keyring')], true);
      mon = startProgram('ceph-mon', ['-f', '-c', workConf, '-i', 'a'], {
        cwd: join(work, 'daemons', 'mon.a'),
        outputFile: join(work, 'log', 'mon.a.making.out'),
        timeoutMs: 0,
        ...(this.account ? { uid: this.account.uid, gid: this.account.gid } : {}),
      });
      const osdUuid = randomUUID();
      const id = (await tool('ceph', [...admin, '--connect-timeout', '30', 'osd', 'new', osdUuid])).stdout.trim();
      if (id !== String(made.osdId)) throw new Error(`the monitor gave the OSD the id ${id}, not ${made.osdId}`);
      const osdKeyring = join(work, `osd.${made.osdId}.keyring`);
      await tool('ceph', [...admin, 'auth', 'get-or-create', `osd.${made.osdId}`, 'mon', 'allow profile osd', 'mgr', 'allow profile osd', 'osd', 'allow *', '-o', osdKeyring]);
      await tool('ceph', [...admin, 'auth', 'get-or-create', 'client.rgw.a', 'mon', 'allow rw', 'osd', 'allow rwx', '-o', join(work, 'client.rgw.a.keyring')]);
      await this.own(work);
      await tool('ceph-osd', ['-c', workConf, '-i', String(made.osdId), '--mkfs', '--osd-uuid', osdUuid], true);
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw HostErrors.ADDON_SERVER_FAILED.create({
        message: `Ceph's tools could not make the storage add-ons' cluster in ${work}: ${(e.stderr || e.message).trim().split('\n').slice(-3).join('\n')}`,
        file: work,
        fix: `Install Ceph's packages (apt-get install --no-install-recommends ${CEPH_PACKAGES}) and see the logs in ${join(work, 'log')}.`,
        details: { what: 'Ceph', command: 'make' },
        cause: error,
      });
    } finally {
      if (mon) {
        mon.kill('SIGTERM');
        await mon.done;
      }
    }
    rmSync(workConf);
    writeFileSync(join(work, 'cluster.json'), `${JSON.stringify(made)}\n`, { mode: 0o600 });
    await this.own(work);
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
    return made;
  }

  /** Everything in the folder to the daemons' account, but the administrator's keyring, which stays root's. */
  private async own(folder: string): Promise<void> {
    const account = this.account;
    if (!account) {
      for (const name of readdirSync(folder).filter((n) => n.endsWith('.keyring'))) chmodSync(join(folder, name), 0o600);
      return;
    }
    await runChecked('chown', ['-R', `${account.uid}:${account.gid}`, folder]);
    // `ceph auth get-or-create -o` writes 0644.
    for (const name of readdirSync(folder).filter((n) => n.endsWith('.keyring'))) chmodSync(join(folder, name), 0o600);
    const adminKeyring = join(folder, 'client.admin.keyring');
    if (existsSync(adminKeyring)) {
      chownSync(adminKeyring, 0, 0);
      chmodSync(adminKeyring, 0o600);
    }
  }
}

/**
 * The cluster's one config file. One OSD, so one copy of each object (size 1) and small
 * placement groups (the gateway makes some eight pools: the default 32 each would pass
 * the 250 an OSD takes); every address on loopback, msgr2 only; the OSD's memory target
 * at Ceph's least; the gateway path-style only (no DNS name: a Host header cannot pick a bucket).
 */
function cephConf(dir: string, fsid: string, made: Made, osdMb: number): string {
  return `# Made by runplan-host for the storage add-ons (host/src/addons/ceph-cluster.ts).
[global]
fsid = ${fsid}
mon host = [v2:${LOOPBACK}:${made.monPort}]
mon initial members = a
public addr = ${LOOPBACK}
ms bind msgr1 = false
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
log file = ${dir}/log/$name.log
log to stderr = false
err to stderr = true
keyring = ${dir}/$name.keyring
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false

[mon]
mon data = ${dir}/mon

[osd]
osd data = ${dir}/osd
osd objectstore = bluestore
bluestore block create = true
bluestore block size = ${osdMb * 1024 * 1024}
osd memory target = 939524096

[client.rgw.a]
rgw frontends = beast endpoint=${LOOPBACK}:${made.gatewayPort}
rgw enable apis = s3
rgw data = ${dir}/daemons/client.rgw.a
debug rgw = 0/5
`;
}
