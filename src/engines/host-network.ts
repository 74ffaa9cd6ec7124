import { existsSync } from 'node:fs';

/**
 * How this machine reaches the network, carried into image builds (which run
 * with the host's network): its proxies, and the certificate authority it
 * trusts when that is not the system's default (a registry behind a company
 * proxy, say). Nothing of it ends up in an image: proxies are build arguments
 * Docker does not record, the certificate file a secret mount.
 */
const PROXIES = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'];

/** `--build-arg` for each proxy variable set here (Docker predefines them and keeps them out of the image's history). */
export function hostNetworkBuildArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  return PROXIES.filter((name) => env[name]).flatMap((name) => ['--build-arg', name]);
}

/** The certificate file this machine's Node.js and npm trust (NODE_EXTRA_CA_CERTS, else SSL_CERT_FILE), if any. */
export function hostCertificateFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const name of ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE']) {
    const file = env[name];
    if (file && existsSync(file)) return file;
  }
  return undefined;
}
