import { basename, resolve } from 'node:path';

/**
 * At most this many characters: room for "<app>-<process>" and what engines
 * add (swarm's object names of at most 63, Kubernetes' Pod name suffixes).
 */
const MAX_NAME = 40;

/**
 * A DNS label (RFC 1035) from any text, for engines whose object names are
 * looked up by name (swarm's DNS, Kubernetes): lower-case letters, digits and
 * '-', starting with a letter, at most 40 characters. A name that starts with a
 * digit keeps it behind "app-" ("2048" → "app-2048"); nothing usable → "app".
 */
export function dnsLabel(text: string): string {
  const name = text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const lettered = /^[a-z]/.test(name) ? name : `app-${name}`;
  return lettered.slice(0, MAX_NAME).replace(/-+$/, '');
}

/**
 * An application's name in every engine (its image, its swarm services, its
 * Kubernetes objects): the name of its directory as a DNS label — of its
 * folder when APP_FOLDER names one, since two folders of one repository are two
 * applications, as they are two workspaces locally (src/building/workspace.ts).
 */
export function appName(appDir: string, folder = ''): string {
  return dnsLabel(basename(resolve(appDir, folder)));
}
