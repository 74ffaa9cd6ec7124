import { ReleaseNetworks } from 'runplan';
import { runProgram } from 'runplan/process';
import { HostErrors } from '../errors.js';

/** The releases' networks of every host of this machine are /24s of this one. */
const RELEASES_NETWORK = { first: 10, second: 88 };

/**
 * Starts this host's releases' networks (docs/design/network-per-release.md): a
 * bridge and an nftables table named after the host (two hosts of one
 * machine, as tests run them, have two), on a /24 of 10.88.0.0/16 that no
 * route of the machine covers; the edge's ports (`publicPorts`) open to every
 * release, as to the internet; `held`, the links of the releases taken over. A
 * bridge an earlier serve left keeps its address: the releases it took over are on it.
 */
export async function startHostReleaseNetworks(id: string, publicPorts: readonly number[], held: Parameters<ReleaseNetworks['start']>[0] = []): Promise<ReleaseNetworks> {
  const bridge = `rp${id.slice(0, 7)}`;
  const table = `runplan_net_${id}`;
  const kept = await bridgeAddress(bridge);
  if (kept) {
    const networks = new ReleaseNetworks({ bridge, table, gateway: kept.address, prefix: kept.prefix, publicPorts });
    await networks.start(held);
    return networks;
  }
  // The host's own /24 first (from its id), so that two hosts seldom try the same one.
  const start = Number.parseInt(id.slice(0, 2), 16);
  // Read once: a /24 another host takes meanwhile is found by the check after start, and given up.
  const routes = await routedNetworks();
  const given = new Set<number>();
  for (let i = 0; i < 256; i++) {
    const third = (start + i) % 256;
    const low = toNumber(`${RELEASES_NETWORK.first}.${RELEASES_NETWORK.second}.${third}.0`);
    if (given.has(third) || routes.some((r) => r.low <= low + 255 && low <= r.high)) continue;
    const networks = new ReleaseNetworks({ bridge, table, gateway: `${RELEASES_NETWORK.first}.${RELEASES_NETWORK.second}.${third}.1`, prefix: 24, publicPorts });
    await networks.start(held);
    // Two hosts starting at once (on one machine, or two roots sharing its network) may both have found it free:
    // both see the two routes now, and the bridge of the greater name gives way, before any release is on it.
    const others = await bridgesRouting(networks.subnet);
    if (others.every((other) => other === bridge || other > bridge)) return networks;
    await networks.stop();
    given.add(third);
  }
  throw HostErrors.HOST_PART_FAILED.create({
    message: `every /24 of ${RELEASES_NETWORK.first}.${RELEASES_NETWORK.second}.0.0/16 is routed on this machine: the releases' network namespaces have no network of their own.`,
    fix: 'Remove the routes of 10.88.0.0/16 that no longer serve (ip route), then start serve again.',
  });
}

/** The devices with a route of `subnet` (in CIDR notation). */
async function bridgesRouting(subnet: string): Promise<string[]> {
  const shown = await runProgram('/usr/sbin/ip', ['-j', '-4', 'route', 'show', 'table', 'all', 'exact', subnet]);
  return (JSON.parse(shown?.ok ? shown.stdout || '[]' : '[]') as { dev?: string }[]).flatMap((route) => (route.dev ? [route.dev] : []));
}

async function bridgeAddress(bridge: string): Promise<{ address: string; prefix: number } | undefined> {
  const shown = await runProgram('/usr/sbin/ip', ['-j', '-4', 'address', 'show', 'dev', bridge]);
  if (!shown?.ok) return undefined;
  const [link] = JSON.parse(shown.stdout || '[]') as { addr_info?: { local: string; prefixlen: number }[] }[];
  const info = link?.addr_info?.[0];
  return info ? { address: info.local, prefix: info.prefixlen } : undefined;
}

/** The IPv4 networks the machine routes (every table), as number ranges. */
async function routedNetworks(): Promise<{ low: number; high: number }[]> {
  const shown = await runProgram('/usr/sbin/ip', ['-j', '-4', 'route', 'show', 'table', 'all']);
  const routes = JSON.parse(shown?.ok ? shown.stdout || '[]' : '[]') as { dst: string }[];
  const ranges: { low: number; high: number }[] = [];
  for (const { dst } of routes) {
    if (dst === 'default') continue;
    const [address, bits] = dst.split('/');
    const prefix = bits === undefined ? 32 : Number(bits);
    if (!address || !/^\d+\.\d+\.\d+\.\d+$/.test(address) || prefix === 0) continue;
    const size = 2 ** (32 - prefix);
    const low = toNumber(address) - (toNumber(address) % size);
    ranges.push({ low, high: low + size - 1 });
  }
  return ranges;
}

function toNumber(address: string): number {
  return address.split('.').reduce((n, p) => n * 256 + Number(p), 0);
}
