import { readFile, realpath } from 'node:fs/promises';

/** Where systemd-resolved writes the resolvers it forwards to (its stub on 127.0.0.53 is no address of a namespace's). */
const UPSTREAM_RESOLV_CONF = '/run/systemd/resolve/resolv.conf';

/** The nameservers of a resolv.conf text. */
function nameservers(text: string): string[] {
  return text.split('\n').flatMap((line) => {
    const match = /^\s*nameserver\s+(\S+)/.exec(line);
    return match?.[1] ? [match[1]] : [];
  });
}

/** Whether a resolver of this resolv.conf can be reached from a network namespace of its own: one nameserver at least, not on loopback. */
export function reachableFromNamespace(resolvConf: string): boolean {
  return nameservers(resolvConf).some((server) => !/^(127\.|::1$|localhost$)/.test(server));
}

/**
 * The file to show as /etc/resolv.conf in a release's own network namespace,
 * when the machine's names a loopback resolver only (systemd-resolved's stub,
 * 127.0.0.53, which the namespace's own loopback does not have): the
 * resolvers systemd-resolved forwards to, as Podman and Docker do. Undefined
 * when the machine's file serves as it is (or there is no better one).
 */
export async function namespaceResolver(): Promise<{ readonly source: string; readonly target: string } | undefined> {
  const own = await readFile('/etc/resolv.conf', 'utf8').catch(() => undefined);
  if (own === undefined || reachableFromNamespace(own)) return undefined;
  const upstream = await readFile(UPSTREAM_RESOLV_CONF, 'utf8').catch(() => undefined);
  if (upstream === undefined || !reachableFromNamespace(upstream)) return undefined;
  // Bound where the link leads (stub-resolv.conf): a symbolic link is no mount point.
  return { source: UPSTREAM_RESOLV_CONF, target: await realpath('/etc/resolv.conf') };
}
