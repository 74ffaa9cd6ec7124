import { readFile } from 'node:fs/promises';

export type ListenScope = 'all-interfaces' | 'loopback-only' | 'not-listening' | 'unknown';

/**
 * Where a TCP port is bound, read from /proc/net/tcp{,6} (Linux). A web process
 * bound to 127.0.0.1 answers local probes but is unreachable from the service's
 * router, so this is checked rather than assumed.
 */
export async function listenScope(port: number): Promise<ListenScope> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let seen = false;
  let anyWildcard = false;
  let anyReadable = false;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
      anyReadable = true;
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      const state = fields[3];
      if (!local || state !== '0A') continue; // 0A = LISTEN
      const [address, portHex] = local.split(':');
      if (portHex !== hexPort || address === undefined) continue;
      seen = true;
      if (/^0+$/.test(address)) anyWildcard = true;
    }
  }
  if (!anyReadable) return 'unknown';
  if (!seen) return 'not-listening';
  return anyWildcard ? 'all-interfaces' : 'loopback-only';
}
