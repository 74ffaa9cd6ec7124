import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { HostErrors } from './errors.js';
import type { AcmeSettings } from './settings.js';

/** Let's Encrypt's production directory: what `--acme-email` alone gets certificates from. */
const LETS_ENCRYPT_DIRECTORY = 'https://acme-v02.api.letsencrypt.org/directory';

/** What `init` was given for ACME, each option as typed. */
export interface AcmeOptions {
  readonly email?: string;
  readonly directory?: string;
  readonly caRoot?: string;
}

// One address, no spaces or angle brackets: the CA refuses anything else when the account is made, long after init.
const EMAIL = /^[^\s@<>()",;:]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/i;

/**
 * The ACME settings `init --acme-email … [--acme-directory URL] [--acme-ca-root FILE]` make, checked now:
 * Caddy would only find a wrong value at the first certificate, in its own log, while every TLS handshake fails.
 * Undefined without --acme-email (and then without the other two): the edge's own CA issues every certificate.
 */
export function acmeSettings(options: AcmeOptions): AcmeSettings | undefined {
  const { email, directory, caRoot } = options;
  if (email === undefined) {
    if (directory === undefined && caRoot === undefined) return undefined;
    throw HostErrors.INPUT_ACME_EMAIL.create({ message: `${directory === undefined ? '--acme-ca-root' : '--acme-directory'} was given without --acme-email.` });
  }
  if (!EMAIL.test(email) || email.length > 254) throw HostErrors.INPUT_ACME_EMAIL.create({ message: `--acme-email ${JSON.stringify(email.slice(0, 80))} is not an email address.` });
  const url = directory ?? LETS_ENCRYPT_DIRECTORY;
  if (!isHttpsUrl(url)) throw HostErrors.INPUT_ACME_DIRECTORY.create({ message: `--acme-directory ${JSON.stringify(url.slice(0, 120))} is not an https:// URL.` });
  return { email, directory: url, ...(caRoot === undefined ? {} : { caRoot: checkCaRoot(caRoot) }) };
}

function isHttpsUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/** The absolute path of a readable PEM file whose first certificate parses: Caddy reads it at each start, from any folder. */
function checkCaRoot(file: string): string {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw HostErrors.INPUT_ACME_CA_ROOT.create({ message: `--acme-ca-root ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'}).`, file: path });
  }
  const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(text)?.[0];
  try {
    if (pem === undefined) throw new Error('no PEM certificate');
    new X509Certificate(pem);
  } catch {
    throw HostErrors.INPUT_ACME_CA_ROOT.create({ message: `--acme-ca-root ${path} holds no PEM certificate (-----BEGIN CERTIFICATE----- …).`, file: path });
  }
  return path;
}
