import type { StackDefinition } from 'runplan/engines/docker';
import { HostErrors } from '../errors.js';
import { adminArgs, CEPH_DAEMONS, CEPH_PACKAGES, checkOsdMb, DEFAULT_OSD_MB, daemonArgs, type Made, makeScript } from './ceph-making.js';
import type { CephHealth, StorageGateway } from './storage-gateway.js';
import { TenantStorage } from './storage.js';
import type { SwarmAddonServices } from './swarm-services.js';

/** The image of the storage add-ons' service: Ceph's daemons from Debian's packages on runplan's stack root. */
export const STORAGE_STACK = {
  name: 'addon-storage',
  packages: [...CEPH_PACKAGES],
  description: "Storage add-on servers: Debian's Ceph monitor, OSD and S3 gateway",
} as const satisfies StackDefinition;

const SERVICE = 'runplan-addon-storage';
const GATEWAY_PORT = '7480';
/** In the service's volume (mounted on /var/lib/ceph, the `ceph` account's in the image, so the volume is too). */
const DIR = '/var/lib/ceph/runplan';
const USER = 'ceph';

/**
 * The task's script: makes the cluster in the volume on its first start (ceph-making.ts's
 * script, in a folder moved into place once whole), then runs the three daemons, each
 * once the one before answers on its admin socket. The monitor stays on the task's own
 * loopback, where its address never changes; the gateway listens on the add-ons network.
 * A daemon that exits ends the task, and the swarm starts it again (restart-condition any).
 */
function taskScript(osdMb: number): string {
  const made: Made = { monPort: 3300, gatewayEndpoint: `0.0.0.0:${GATEWAY_PORT}`, osdId: 0 };
  const work = `${DIR}.making`;
  const [mon, osd, gateway] = CEPH_DAEMONS;
  const run = (daemon: (typeof CEPH_DAEMONS)[number]) => `(cd ${DIR}/daemons/${daemon.name} && exec ${daemon.command} ${daemonArgs(DIR, daemon).join(' ')}) >> ${DIR}/log/${daemon.name}.out 2>&1 &`;
  const until = (name: string, command: string, state: string) => `until ceph --admin-daemon ${DIR}/run/${name}.asok ${command} 2>/dev/null | grep -q '"state": "${state}"'; do sleep 0.5; done`;
  return `set -eu
if [ ! -f ${DIR}/cluster.json ]; then
  rm -rf ${work}
  mkdir -m 700 ${work}
  cat > /tmp/make-cluster.sh <<'RUNPLAN_CEPH_MAKE'
${makeScript(DIR, work, made, osdMb)}RUNPLAN_CEPH_MAKE
  sh /tmp/make-cluster.sh
  rm -rf ${DIR}
  mv ${work} ${DIR}
fi
${run(mon as (typeof CEPH_DAEMONS)[number])}
a=$!
${until('mon.a', 'mon_status', 'leader')}
${run(osd as (typeof CEPH_DAEMONS)[number])}
b=$!
${until('osd.0', 'status', 'active')}
${run(gateway as (typeof CEPH_DAEMONS)[number])}
c=$!
while kill -0 $a && kill -0 $b && kill -0 $c; do sleep 2; done
echo 'a Ceph daemon exited: the task ends and the swarm starts it again' >&2
exit 1
`;
}

/**
 * The storage add-ons' Ceph cluster as one Swarm service (one task holding the monitor,
 * the OSD and the gateway, their data in one named volume), pinned to this node as the
 * PostgreSQL add-on's is; the host administers it with `docker exec … radosgw-admin`.
 */
class SwarmCephGateway implements StorageGateway {
  private started: Promise<void> | undefined;
  readonly where = `the swarm service ${SERVICE} (volume ${SERVICE})`;

  constructor(
    private readonly services: SwarmAddonServices,
    private readonly osdMb: number,
  ) {}

  start(): Promise<void> {
    this.started ??= this.services
      .ensure(
        { name: SERVICE, stack: STORAGE_STACK, user: USER, volume: { name: SERVICE, target: '/var/lib/ceph' }, script: taskScript(this.osdMb) },
        // Any S3 answer will do: an unsigned listing is answered once the gateway serves.
        async () => (await this.services.exec(SERVICE, USER, ['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${GATEWAY_PORT}/`])).stdout === '200',
      )
      .catch((error: unknown) => {
        this.started = undefined;
        throw error;
      });
    return this.started;
  }

  async rgwAdmin(args: readonly string[]): Promise<unknown> {
    const ran = await this.services.exec(SERVICE, USER, ['radosgw-admin', ...adminArgs(DIR), ...args]);
    if (ran.code !== 0) throw Object.assign(new Error(`radosgw-admin ${args.slice(0, 2).join(' ')} in ${SERVICE} failed: ${ran.stderr.trim()}`), { stderr: ran.stderr });
    return ran.stdout.trim() === '' ? undefined : JSON.parse(ran.stdout);
  }

  async health(): Promise<CephHealth> {
    const ran = await this.services.exec(SERVICE, USER, ['ceph', ...adminArgs(DIR), '--connect-timeout', '5', 'health', '--format', 'json']);
    if (ran.code !== 0)
      throw HostErrors.ADDON_SERVER_FAILED.create({ message: `Ceph's monitor in ${SERVICE} does not answer: ${ran.stderr.trim()}`, details: { what: 'Ceph', command: 'ceph health' } });
    const parsed = JSON.parse(ran.stdout) as { status: string; checks?: Record<string, { summary?: { message?: string } }> };
    return { status: parsed.status, checks: Object.entries(parsed.checks ?? {}).map(([code, c]) => `${code}: ${c.summary?.message ?? ''}`) };
  }

  address(): { host: string; port: string } {
    return { host: SERVICE, port: GATEWAY_PORT };
  }

  /** Removes the service, as serve removes the applications' (the cluster's data stays in its volume). */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = undefined;
    await this.services.stop(SERVICE);
  }

  /** Its service goes on serving the applications' tasks: the next serve finds it (start()). */
  detach(): void {
    this.started = undefined;
  }
}

/** Storage add-ons on a swarm: the same tenants, keys and variables as on one machine, the gateway a service of the add-ons network. */
export class SwarmStorageProvider extends TenantStorage {
  protected readonly gateway: StorageGateway;
  protected override readonly extraConfig = { engine: 'swarm' };

  constructor(services: SwarmAddonServices, osdMb = DEFAULT_OSD_MB) {
    super();
    const wrong = checkOsdMb(osdMb);
    if (wrong) throw HostErrors.INPUT_USAGE.create({ message: `${wrong} (settings.json)`, fix: `Set "storage": { "osdMb": ${DEFAULT_OSD_MB} } or remove it.`, details: { osdMb } });
    this.gateway = new SwarmCephGateway(services, osdMb);
  }
}
