/**
 * What `serve` keeps of the environment it was started in: where programs are and the
 * machine's locale and time zone, the trust and proxies the machine reaches the network
 * through, the Docker engine a swarm host drives, and runplan's and the host's own
 * settings (RUNPLAN_*). Nothing else of the operator's shell reaches serve, and through it
 * the builds: not npm's configuration (`npm run` exports every npm_config_* it has, and a
 * build's npm then warns `Unknown env config "nodedir"`), not tokens or cloud credentials.
 */
/** How the machine reaches the network (its certificate authorities and proxies) and the Docker engine a swarm host drives. */
export const MACHINE_VARIABLES: readonly string[] = [
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'DOCKER_HOST',
  'DOCKER_TLS_VERIFY',
  'DOCKER_CERT_PATH',
];
const KEPT = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LANGUAGE', 'TZ', 'TERM', 'TMPDIR', ...MACHINE_VARIABLES]);
const KEPT_PREFIXES = ['LC_', 'RUNPLAN_'];

const kept = (name: string) => KEPT.has(name) || KEPT_PREFIXES.some((prefix) => name.startsWith(prefix));

/** The variables of `env` that serve keeps (the allow-list above). */
export function cleanEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && kept(entry[0])));
}

/** The names of `env` that serve does not keep (sorted): none means serve may run in this environment as it is. */
export function droppedNames(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter((name) => env[name] !== undefined && !kept(name))
    .sort();
}
