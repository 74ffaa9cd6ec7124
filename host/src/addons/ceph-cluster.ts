import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import aws4 from 'aws4';
import { freePort } from '../deploy/free-port.js';
import { HostErrors } from '../errors.js';
import { runChecked } from '../programs.js';
import type { Supervisor } from '../supervision/supervisor.js';
import { adminArgs, CEPH_DAEMONS, CEPH_PACKAGES, checkOsdMb, DEFAULT_OSD_MB, daemonArgs, type Made, makeScript } from './ceph-making.js';
import { type ServerAccount, ServerProcess, serverAccount } from './server-process.js';
import type { CephHealth, StorageGateway } from './storage-gateway.js';

const LOOPBACK = '127.0.0.1';

export interface CephClusterOptions {
  /** `<data>/addons/storage/ceph`: its config, keyrings, the monitor's store, the OSD's file, logs and sockets. */
  readonly dir: string;
  /** The size of the OSD's BlueStore file in MiB, fixed when the cluster is made. */
  readonly osdMb?: number;
  /** Who the daemons run as: by default `ceph` when the host runs as root (null: the host's own user). */
  readonly account?: ServerAccount | null;
  readonly supervisor?: Supervisor;
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
export class CephCluster implements StorageGateway {
  private readonly servers: ServerProcess[] = [];
  private made_: Made | undefined;
  private account: ServerAccount | undefined;

  constructor(private readonly options: CephClusterOptions) {}

  get dir(): string {
    return this.options.dir;
  }
  /** The gateway's loopback port: STORAGE_ADDON_HOST names it. */
  get gatewayPort(): number {
    if (!this.made_) throw new Error('CephCluster: start() first');
    return Number(this.made_.gatewayEndpoint.split(':')[1]);
  }
  get where(): string {
    return this.dir;
  }
  address(): { host: string; port: string } {
    return { host: LOOPBACK, port: String(this.gatewayPort) };
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
    const ready = [() => this.daemonState('mon.a', 'mon_status', /"state":\s*"leader"/), () => this.daemonState('osd.0', 'status', /"state":\s*"active"/), () => this.gatewayAnswers()];
    for (const [n, daemon] of CEPH_DAEMONS.entries()) {
      this.servers.push(
        await ServerProcess.start({
          supervisor: this.options.supervisor,
          what: daemon.what,
          partId: daemon.command,
          command: daemon.command,
          args: daemonArgs(this.dir, daemon),
          cwd: this.daemonDir(daemon.name),
          account: this.account,
          logFile: join(this.dir, 'log', `${daemon.name}.out`),
          // The OSD replays its journal and the gateway makes its pools on first start: slower than a server of one process.
          timeoutMs: 90_000,
          pollMs: 250,
          ready: ready[n] as () => Promise<boolean>,
          ...(daemon.command === 'radosgw' ? { check: () => this.gatewayCheck() } : {}),
        }),
      );
    }
    await this.ensureStatusUser();
  }

  /** radosgw-admin as the cluster's administrator: its JSON output parsed. Never given a secret: it makes them. */
  async rgwAdmin(args: readonly string[]): Promise<unknown> {
    const { stdout } = await runChecked('radosgw-admin', [...adminArgs(this.dir), ...args], { timeoutMs: 60_000 });
    return stdout.trim() === '' ? undefined : JSON.parse(stdout);
  }

  /** Ceph's health, from the monitor. */
  async health(): Promise<CephHealth> {
    const { stdout } = await runChecked('ceph', [...adminArgs(this.dir), '--connect-timeout', '5', 'health', '--format', 'json'], { timeoutMs: 15_000 });
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
    const conf = join(this.dir, 'ceph.conf');
    writeFileSync(conf, readFileSync(conf, 'utf8').replaceAll(`${this.dir}/`, `${to}/`), { mode: 0o600 });
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

  /** `status`: a signed listing answered (the gateway reads its users from the OSD), and Ceph's health not an error. */
  private async gatewayCheck(): Promise<{ up: boolean; detail: string }> {
    const [answers, health] = await Promise.all([this.signedListing().catch(() => false), this.health().catch(() => undefined)]);
    const words = health ? `Ceph ${health.status}${health.checks.length > 0 ? ` (${health.checks.join('; ')})` : ''}` : "Ceph's monitor does not answer";
    return {
      up: answers && health !== undefined && health.status !== 'HEALTH_ERR',
      detail: `${answers ? 'answers a signed request' : 'does not answer a signed request'} (radosgw); ${words}; its logs: ${join(this.dir, 'log')}`,
    };
  }

  private get statusFile(): string {
    return join(this.dir, 'status-user.json');
  }

  /** The user status signs its request with: alone in a tenant of its own, it owns nothing. */
  private async ensureStatusUser(): Promise<void> {
    if (existsSync(this.statusFile)) return;
    const made = (await this.rgwAdmin(['user', 'create', '--tenant', 'runplan_host', '--uid', 'status', '--display-name', 'runplan-host status'])) as {
      keys?: { access_key: string; secret_key: string }[];
    };
    const key = made.keys?.[0];
    if (!key) throw new Error('radosgw-admin made the status user without a key');
    writeFileSync(this.statusFile, `${JSON.stringify({ accessKeyId: key.access_key, secretAccessKey: key.secret_key })}\n`, { mode: 0o600 });
  }

  private async signedListing(): Promise<boolean> {
    const keys = JSON.parse(readFileSync(this.statusFile, 'utf8')) as { accessKeyId: string; secretAccessKey: string };
    const host = `${LOOPBACK}:${this.gatewayPort}`;
    const signed = aws4.sign({ host, path: '/', service: 's3', region: 'us-east-1', method: 'GET' }, keys) as { headers: Record<string, string> };
    const response = await fetch(`http://${host}/`, { headers: signed.headers, signal: AbortSignal.timeout(5000) });
    await response.arrayBuffer();
    return response.status === 200;
  }

  /**
   * Makes the cluster in a folder of its own beside `dir` (ceph-making.ts's script, run as the daemons'
   * account), moved into place once whole: a host stopped half-way leaves no cluster it would then try to
   * start. The administrator's keyring is then root's alone.
   */
  private async make(): Promise<Made> {
    const osdMb = this.options.osdMb ?? DEFAULT_OSD_MB;
    const wrong = checkOsdMb(osdMb);
    if (wrong) throw HostErrors.INPUT_USAGE.create({ message: `${wrong} (settings.json)`, fix: `Set "storage": { "osdMb": ${DEFAULT_OSD_MB} } or remove it.`, details: { osdMb } });
    const made: Made = { monPort: await freePort(), gatewayEndpoint: `${LOOPBACK}:${await freePort()}`, osdId: 0 };
    const dir = this.dir;
    const work = `${dir}.making`;
    rmSync(work, { recursive: true, force: true });
    // Folders made on the way are searchable (0711) so the daemons' account reaches its own.
    mkdirSync(dirname(dir), { recursive: true, mode: 0o711 });
    mkdirSync(work, { mode: 0o700 });
    const account = this.account;
    if (account) chownSync(work, account.uid, account.gid);
    try {
      await runChecked('sh', ['-c', makeScript(dir, work, made, osdMb)], { cwd: work, timeoutMs: 180_000, ...(account ? { uid: account.uid, gid: account.gid } : {}) });
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw HostErrors.ADDON_SERVER_FAILED.create({
        message: `Ceph's tools could not make the storage add-ons' cluster in ${work}: ${(e.stderr || e.message).trim().split('\n').slice(-3).join('\n')}`,
        file: work,
        fix: `Install Ceph's packages (apt-get install --no-install-recommends ${CEPH_PACKAGES.join(' ')}) and see the logs in ${join(work, 'log')}.`,
        details: { what: 'Ceph', command: 'make' },
        cause: error,
      });
    }
    if (account) {
      const adminKeyring = join(work, 'client.admin.keyring');
      chownSync(adminKeyring, 0, 0);
      chmodSync(adminKeyring, 0o600);
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
    return made;
  }
}
