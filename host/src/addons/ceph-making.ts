import { randomUUID } from 'node:crypto';

/**
 * How the storage add-ons' one-node Ceph cluster is made and run, as data and a shell
 * script both engines use: this machine's (ceph-cluster.ts runs the script as the
 * `ceph` account) and a swarm's (swarm-storage.ts runs it in the service's task).
 */

/** The packages the cluster's programs come from. */
export const CEPH_PACKAGES = ['ceph-mon', 'ceph-osd', 'radosgw'] as const;
/** The OSD's file, when settings.json names no size: sparse, so it takes on disk only what is stored. */
export const DEFAULT_OSD_MB = 20_480;
const MIN_OSD_MB = 2048;
const LOOPBACK = '127.0.0.1';

/** What making the cluster chose, kept in `cluster.json`: the monitor's address is in its map for good. */
export interface Made {
  readonly monPort: number;
  /** Where the gateway listens: `127.0.0.1:<port>` on this machine, `0.0.0.0:7480` in a swarm's task. */
  readonly gatewayEndpoint: string;
  readonly osdId: 0;
}

/** The three daemons, in the order they start (the gateway waits for the OSD): their Ceph name and program. */
export const CEPH_DAEMONS = [
  { name: 'mon.a', what: 'Ceph monitor', command: 'ceph-mon', args: ['-i', 'a'] },
  { name: 'osd.0', what: 'Ceph OSD', command: 'ceph-osd', args: ['-i', '0'] },
  { name: 'client.rgw.a', what: 'Ceph S3 gateway', command: 'radosgw', args: ['-n', 'client.rgw.a'] },
] as const;

/** A daemon's command line: in the foreground, with the cluster's config. */
export function daemonArgs(dir: string, daemon: (typeof CEPH_DAEMONS)[number]): string[] {
  return ['-f', '-c', `${dir}/ceph.conf`, ...daemon.args];
}

/** The administrator's arguments to `ceph` and `radosgw-admin`. */
export function adminArgs(dir: string): string[] {
  return ['-c', `${dir}/ceph.conf`, '-n', 'client.admin', '-k', `${dir}/client.admin.keyring`];
}

/** Refuses an OSD size that is not a whole number of MiB of at least MIN_OSD_MB. */
export function checkOsdMb(osdMb: number): string | undefined {
  return Number.isInteger(osdMb) && osdMb >= MIN_OSD_MB ? undefined : `the storage add-ons' OSD size ${osdMb} MiB is not a whole number of at least ${MIN_OSD_MB}`;
}

/**
 * The cluster's one config file. One OSD, so one copy of each object (size 1) and small
 * placement groups (the gateway makes some eight pools: the default 32 each would pass
 * the 250 an OSD takes); the monitor on loopback, msgr2 only; the OSD's memory target
 * at Ceph's least; the gateway path-style only (no DNS name: a Host header cannot pick a bucket).
 */
function cephConf(dir: string, fsid: string, made: Made, osdMb: number): string {
  return `# Made by runplan-host for the storage add-ons (host/src/addons/ceph-making.ts).
[global]
fsid = ${fsid}
mon host = [v2:${LOOPBACK}:${made.monPort}]
mon initial members = a
public addr = ${LOOPBACK}
# Without it the OSD binds its cluster and back heartbeat ports on every interface.
cluster addr = ${LOOPBACK}
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
rgw frontends = beast endpoint=${made.gatewayEndpoint}
rgw enable apis = s3
rgw data = ${dir}/daemons/client.rgw.a
debug rgw = 0/5
`;
}

const sh = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * A POSIX shell script that makes the cluster in `work`, an empty folder the running
 * account owns, with `dir` (where `work` will be moved once whole) in its config: the
 * keys, the monitor's map and store, the OSD (its id given by a monitor run for the
 * while), the gateway's key, and `cluster.json` last. Everything it writes is 0600/0700.
 */
export function makeScript(dir: string, work: string, made: Made, osdMb: number): string {
  const fsid = randomUUID();
  const conf = cephConf(dir, fsid, made, osdMb);
  const c = `-c ${sh(`${work}/making.conf`)}`;
  const admin = `${c} -n client.admin -k ${sh(`${work}/client.admin.keyring`)}`;
  const folders = ['run', 'log', 'mon', 'osd', ...CEPH_DAEMONS.map((d) => `daemons/${d.name}`)].map((f) => sh(`${work}/${f}`)).join(' ');
  return `set -eu
umask 077
cd ${sh(work)}
mkdir -p ${folders}
cat > ceph.conf <<'RUNPLAN_CEPH_CONF'
${conf}RUNPLAN_CEPH_CONF
# The tools run before the move read the making folder's paths.
cat > making.conf <<'RUNPLAN_CEPH_CONF'
${conf.replaceAll(`${dir}/`, `${work}/`)}RUNPLAN_CEPH_CONF
ceph-authtool --create-keyring mon.keyring --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool --create-keyring client.admin.keyring --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
ceph-authtool mon.keyring --import-keyring client.admin.keyring >/dev/null
monmaptool --create --addv a '[v2:${LOOPBACK}:${made.monPort}]' --fsid ${fsid} monmap >/dev/null
ceph-mon ${c} --mkfs -i a --monmap monmap --keyring mon.keyring
(cd daemons/mon.a && exec ceph-mon -f ${c} -i a) >> log/mon.a.making.out 2>&1 &
mon=$!
trap 'kill $mon 2>/dev/null || true; wait $mon 2>/dev/null || true' EXIT
osd_uuid=$(cat /proc/sys/kernel/random/uuid)
id=$(ceph ${admin} --connect-timeout 30 osd new "$osd_uuid")
[ "$id" = 0 ] || { echo "the monitor gave the OSD the id $id, not 0" >&2; exit 1; }
ceph ${admin} auth get-or-create osd.0 mon 'allow profile osd' mgr 'allow profile osd' osd 'allow *' -o osd.0.keyring
ceph ${admin} auth get-or-create client.rgw.a mon 'allow rw' osd 'allow rwx' -o client.rgw.a.keyring
ceph-osd ${c} -i 0 --mkfs --osd-uuid "$osd_uuid" >> log/osd.0.making.out 2>&1
kill $mon
wait $mon || true
trap - EXIT
chmod 600 ./*.keyring
rm making.conf monmap
printf '%s\\n' ${sh(JSON.stringify(made))} > cluster.json
`;
}
