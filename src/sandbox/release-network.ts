import { readdir } from 'node:fs/promises';
import { CoreErrors } from '../errors/core-errors.js';
import { runProgram } from '../process/run-program.js';

/** Where iproute2 keeps the namespaces it names (`ip netns add`): a bind mount each, kept until deleted. */
const NETNS_DIR = '/run/netns';

/** The port every release listens on in its own namespace, as the specification says. */
export const RELEASE_PORT = 8080;

/** The shared plumbing of the releases' namespaces on this machine (docs/design/network-per-release.md). */
export interface NetworkSettings {
  /** The host's bridge (letters, digits, "-", at most 9 characters: its veths are named `<bridge>-<n>`). */
  readonly bridge: string;
  /** The bridge's own address, the releases' gateway (e.g. 10.88.0.1); releases get the other addresses of its network. */
  readonly gateway: string;
  /** The network's prefix length (16 to 28). */
  readonly prefix: number;
  /** The nftables table (inet) holding the walls: letters, digits and "_". */
  readonly table: string;
  /**
   * The host's public ports (the edge's HTTPS and HTTP) that every release
   * reaches, as anyone on the internet does: at the gateway's address (to the
   * host's loopback, where an edge tried on one machine listens) and at the
   * machine's own addresses. Another application is reached there, by name.
   */
  readonly publicPorts?: readonly number[];
}

/**
 * A way out of a release's namespace that its links open: a TCP port of the
 * host's loopback (an add-on's server), reached from the namespace at the
 * gateway's address and the same port.
 */
export interface NetworkTarget {
  readonly port: number;
}

/**
 * One release's network namespace: its own loopback and one veth onto the
 * host's bridge, with one address of the bridge's network. Named by iproute2
 * (`ip netns add`), so it outlives runplan's process and the release's own
 * (s6 restarts a process into the same namespace, with the same address).
 */
export class ReleaseNamespace {
  constructor(
    private readonly networks: ReleaseNetworks,
    /** iproute2's name of it. */
    readonly name: string,
    /** Its address on the bridge: where the edge and the health check dial it, on RELEASE_PORT. */
    readonly address: string,
  ) {}

  /** The file nsenter enters (`nsenter --net=<path>`). */
  get path(): string {
    return `${NETNS_DIR}/${this.name}`;
  }

  /** It may open TCP connections to `target` (a linked add-on's server on the host's loopback) until the function returned is called. */
  allow(target: NetworkTarget): Promise<() => Promise<void>> {
    return this.networks.allow(this.address, target);
  }

  /** Removes the namespace and its veth (whatever still runs in it keeps an empty network). */
  remove(): Promise<void> {
    return this.networks.remove(this);
  }
}

/**
 * The releases' networks, from well-kept tools: iproute2 (`ip netns`, a veth
 * pair per release onto one bridge whose ports are isolated from each other)
 * and one nftables table of the kernel: a release reaches the outside world
 * (masqueraded), the host's side only where a link allows it, and no other
 * release; nothing but the host itself opens a connection to a release.
 */
export class ReleaseNetworks {
  private readonly first: number;
  private readonly size: number;
  private readonly pending = new Set<number>();

  constructor(readonly settings: NetworkSettings) {
    const { bridge, gateway, prefix, table } = settings;
    if (!/^[a-z][a-z0-9-]{0,8}$/.test(bridge)) throw new Error(`not a bridge name of at most 9 characters: ${bridge}`);
    if (!/^[a-z][a-z0-9_]{0,60}$/.test(table)) throw new Error(`not an nftables table name: ${table}`);
    if (!Number.isInteger(prefix) || prefix < 16 || prefix > 28) throw new Error(`a prefix length from 16 to 28, not ${prefix}`);
    const base = toNumber(gateway);
    this.size = 2 ** (32 - prefix);
    this.first = base - (base % this.size);
  }

  /** The network in CIDR notation (10.88.0.0/16). */
  get subnet(): string {
    return `${toAddress(this.first)}/${this.settings.prefix}`;
  }

  /**
   * Makes the bridge (kept when it exists: the releases of an earlier runplan
   * are on it) and the walls' table again, with the links of `held` (releases
   * an earlier runplan started, taken over now).
   */
  async start(held: readonly { readonly from: string; readonly to: NetworkTarget }[] = []): Promise<void> {
    const { bridge, gateway, prefix } = this.settings;
    const shown = await runProgram('/usr/sbin/ip', ['-j', 'link', 'show', 'dev', bridge]);
    if (!shown?.ok) {
      await this.ip([`link add ${bridge} type bridge`, `address add ${gateway}/${prefix} dev ${bridge}`, `link set ${bridge} up`]);
    }
    await this.sysctl('net.ipv4.ip_forward', '1');
    // A link's connection is translated to the host's loopback (the add-on servers listen there only): the kernel routes it so from this bridge alone.
    await this.sysctl(`net.ipv4.conf.${bridge}.route_localnet`, '1');
    await this.nft(this.table(held));
  }

  /** Removes the walls' table and the bridge (once no release is left on it). */
  async stop(): Promise<void> {
    await this.nft(`delete table inet ${this.settings.table}\n`).catch(() => undefined);
    await runProgram('/usr/sbin/ip', ['link', 'del', 'dev', this.settings.bridge]);
  }

  /** A new namespace, with the lowest address of the network no other one has. */
  async create(): Promise<ReleaseNamespace> {
    const used = new Set([...(await this.existing()).map((n) => toNumber(n.address) - this.first), ...this.pending]);
    let index = 2;
    // The gateway's own index is skipped; the last address is the network's broadcast.
    const gatewayIndex = toNumber(this.settings.gateway) - this.first;
    while (used.has(index) || index === gatewayIndex) index++;
    if (index >= this.size - 1) throw unavailable(`every address of ${this.subnet} is taken by a release's namespace`);
    this.pending.add(index);
    try {
      const address = toAddress(this.first + index);
      const name = this.nameOf(address);
      const veth = `${this.settings.bridge}-${index}`;
      const { bridge, gateway, prefix } = this.settings;
      try {
        await this.ip([
          `netns add ${name}`,
          `link add ${veth} type veth peer name eth0 netns ${name}`,
          `link set ${veth} master ${bridge}`,
          // An isolated port reaches the bridge's own address only, never another release's port.
          `link set ${veth} type bridge_slave isolated on`,
          `link set ${veth} up`,
        ]);
        await this.ip(['link set lo up', `address add ${address}/${prefix} dev eth0`, 'link set eth0 up', `route add default via ${gateway}`], name);
      } catch (error) {
        await runProgram('/usr/sbin/ip', ['netns', 'del', name]);
        throw error;
      }
      return new ReleaseNamespace(this, name, address);
    } finally {
      this.pending.delete(index);
    }
  }

  /** The namespace of `address`, made earlier (by this runplan or an earlier one); undefined when it is gone. */
  async attach(address: string): Promise<ReleaseNamespace | undefined> {
    return (await this.existing()).find((n) => n.address === address);
  }

  /** The namespaces of this network that exist now. */
  async existing(): Promise<ReleaseNamespace[]> {
    const names = await readdir(NETNS_DIR).catch(() => [] as string[]);
    const prefix = `${this.settings.bridge}-`;
    const found: ReleaseNamespace[] = [];
    for (const name of names) {
      if (!name.startsWith(prefix)) continue;
      const address = name.slice(prefix.length).replaceAll('-', '.');
      const n = toNumber(address, false);
      if (n !== undefined && n - (n % this.size) === this.first) found.push(new ReleaseNamespace(this, name, address));
    }
    return found;
  }

  /** Opens `from` (a release's address) to `to` until the function returned is called. */
  async allow(from: string, to: NetworkTarget): Promise<() => Promise<void>> {
    const element = `${from} . ${to.port}`;
    const { table } = this.settings;
    await this.nft(`add element inet ${table} links { ${element} }\n`);
    let closed = false;
    return async () => {
      if (closed) return;
      closed = true;
      await this.nft(`delete element inet ${table} links { ${element} }\n`).catch(() => undefined);
    };
  }

  /** Removes a namespace: its veth goes with it. */
  async remove(namespace: ReleaseNamespace): Promise<void> {
    const ran = await runProgram('/usr/sbin/ip', ['netns', 'del', namespace.name]);
    if (ran && !ran.ok && !/No such file/.test(ran.stderr)) throw unavailable(`ip netns del ${namespace.name} failed: ${ran.stderr.trim()}`);
  }

  // The name says the address: a later runplan finds every namespace and its address by listing /run/netns.
  private nameOf(address: string): string {
    return `${this.settings.bridge}-${address.replaceAll('.', '-')}`;
  }

  private table(held: readonly { readonly from: string; readonly to: NetworkTarget }[]): string {
    const { bridge, table } = this.settings;
    const links = held.length === 0 ? '' : ` elements = { ${held.map((h) => `${h.from} . ${h.to.port}`).join(', ')} };`;
    const br = JSON.stringify(bridge);
    const { gateway, publicPorts = [] } = this.settings;
    for (const port of publicPorts) if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`not a TCP port: ${port}`);
    const ports = publicPorts.length === 0 ? '' : `{ ${publicPorts.join(', ')} }`;
    const toPublic = ports === '' ? '' : `\n    iifname ${br} ip daddr ${gateway} tcp dport ${ports} dnat ip to 127.0.0.1`;
    const publicIn = ports === '' ? '' : `\n    iifname ${br} tcp dport ${ports} fib daddr type local accept`;
    return `add table inet ${table}
delete table inet ${table}
table inet ${table} {
  set links { type ipv4_addr . inet_service;${links} }
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    iifname ${br} ip daddr ${gateway} ip saddr . tcp dport @links dnat ip to 127.0.0.1${toPublic}
  }
  chain forward {
    type filter hook forward priority 0; policy accept;
    iifname ${br} oifname ${br} meta l4proto tcp reject with tcp reset
    iifname ${br} oifname ${br} reject
    iifname ${br} ip daddr { ${this.subnet}, 169.254.0.0/16 } meta l4proto tcp reject with tcp reset
    iifname ${br} ip daddr { ${this.subnet}, 169.254.0.0/16 } reject
    iifname ${br} accept
    oifname ${br} ct state established,related accept
    oifname ${br} reject
  }
  chain input {
    type filter hook input priority 0; policy accept;
    iifname ${br} ct state established,related accept
    iifname ${br} ip daddr 127.0.0.1 ip saddr . tcp dport @links ct status dnat accept${publicIn}
    # A reset rather than ICMP, which the kernel sends at a limited rate: a scan is refused at once, port after port.
    iifname ${br} meta l4proto tcp reject with tcp reset
    iifname ${br} reject
  }
  chain output {
    type nat hook output priority -100; policy accept;
    # The machine's own programs reach at the gateway what they reach on its loopback: the address add-on variables
    # name for a linked release (what the customer reads and copies) serves on the machine too.
    ip daddr ${gateway} meta l4proto tcp dnat ip to 127.0.0.1
  }
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    # The machine's own connection to the gateway, translated above, comes from the loopback too (before the
    # masquerade, which would give it the machine's outside address): a server's rules for local clients
    # (PostgreSQL's pg_hba.conf) apply.
    oifname "lo" ct original ip daddr ${gateway} snat ip to 127.0.0.1
    ip saddr ${this.subnet} oifname != ${br} masquerade
  }
}
`;
  }

  /** Runs ip's `commands` in the machine's namespace, or in the namespace `netns`. */
  private async ip(commands: readonly string[], netns?: string): Promise<void> {
    // One ip process for all of them: a release's plumbing in a few milliseconds.
    const inside = netns === undefined ? '' : ` -n ${netns}`;
    const ran = await runProgram('/bin/sh', ['-c', `printf %s "$1" | /usr/sbin/ip${inside} -batch -`, 'ip', `${commands.join('\n')}\n`]);
    if (!ran?.ok) throw unavailable(`ip could not make a release's network: ${ran ? (ran.stderr || ran.stdout).trim().split('\n').slice(-2).join(' ') : 'iproute2 is not installed'}`);
  }

  private async nft(script: string): Promise<void> {
    const ran = await runProgram('/bin/sh', ['-c', 'printf %s "$1" | nft -f -', 'nft', script]);
    if (!ran?.ok) throw unavailable(`nft could not change the table ${this.settings.table}: ${ran ? (ran.stderr || ran.stdout).trim().split('\n').slice(-2).join(' ') : 'nftables is not installed'}`);
  }

  private async sysctl(key: string, value: string): Promise<void> {
    const ran = await runProgram('/usr/sbin/sysctl', ['-q', '-w', `${key}=${value}`]);
    if (!ran?.ok) throw unavailable(`sysctl could not set ${key}=${value}: ${ran?.stderr.trim() ?? 'procps is not installed'}`);
  }
}

function unavailable(why: string) {
  return CoreErrors.HOST_SANDBOX_UNAVAILABLE.create({
    message: `a release's network namespace cannot be made on this machine: ${why}.`,
    fix: "Run runplan as root on Linux with Debian's iproute2 and nftables packages installed (apt-get install iproute2 nftables), and a network for the releases that no interface of the machine uses.",
  });
}

function toNumber(address: string): number;
function toNumber(address: string, strict: false): number | undefined;
function toNumber(address: string, strict = true): number | undefined {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    if (!strict) return undefined;
    throw new Error(`not an IPv4 address: ${address}`);
  }
  return parts.reduce((n, p) => n * 256 + p, 0);
}

function toAddress(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}
