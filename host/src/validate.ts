import { isValidVariableName } from 'runplan/buildpack';
import { isDnsHostName } from './edge/host-names.js';
import { HostErrors } from './errors.js';
import type { AppType, Zone } from './store/store.js';

const APP_NAME = /^[a-z][a-z0-9-]{0,39}$/;
const ORG = /^[a-z][a-z0-9_-]{0,39}$/;
const ZONES: readonly Zone[] = ['par', 'mtl'];
const TYPES: readonly AppType[] = ['node', 'ruby', 'play1'];
/** A value the host stores and gives to the application: bounded, and no NUL (no environment can hold one). */
const MAX_VALUE_BYTES = 64 * 1024;

const shown = (text: string) => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);

export function checkAppName(name: string): string {
  if (!APP_NAME.test(name)) throw HostErrors.INPUT_APP_NAME.create({ message: `the application name ${shown(name)} is not valid.` });
  return name;
}

export function checkOrg(org: string): string {
  if (!ORG.test(org)) throw HostErrors.INPUT_ORG.create({ message: `the organization identifier ${shown(org)} is not valid.` });
  return org;
}

export function checkZone(zone: string): Zone {
  if (!(ZONES as readonly string[]).includes(zone)) throw HostErrors.INPUT_ZONE.create({ message: `the zone ${shown(zone)} is not one of the service (par, mtl).` });
  return zone as Zone;
}

export function checkType(type: string): AppType {
  if (!(TYPES as readonly string[]).includes(type)) throw HostErrors.INPUT_TYPE.create({ message: `the application type ${shown(type)} is not one the host deploys (node, ruby, play1).` });
  return type as AppType;
}

/** A variable the host stores, named and bounded as runplan reads variables. The value is never shown in the error. */
export function checkVariable(name: string, value: string | undefined): void {
  if (!isValidVariableName(name)) {
    throw HostErrors.INPUT_VARIABLE.create({ message: `the variable name ${shown(name)} is not valid: letters, digits and "_", not starting with a digit.`, variable: name.slice(0, 60) });
  }
  if (value === undefined) return;
  if (value.includes('\0')) throw HostErrors.INPUT_VARIABLE.create({ message: `the value of ${name} holds a NUL character, which no environment can carry.`, variable: name });
  if (Buffer.byteLength(value) > MAX_VALUE_BYTES) {
    throw HostErrors.INPUT_VARIABLE.create({
      message: `the value of ${name} is longer than ${MAX_VALUE_BYTES / 1024} KiB.`,
      variable: name,
      fix: 'Keep values under 64 KiB; put large data in a file of the application or in an add-on.',
    });
  }
}

export function checkAddonName(name: string): string {
  if (!APP_NAME.test(name)) throw HostErrors.INPUT_ADDON_NAME.create({ message: `the add-on name ${shown(name)} is not valid.` });
  return name;
}

/** A domain as the host keeps it: lower case, without the root's trailing dot. */
export function normalDomainName(given: string): string {
  return given.trim().toLowerCase().replace(/\.$/, '');
}

/**
 * A custom domain as the host keeps it: lower case, an RFC 1123 host name of two labels at least, no wildcard
 * (each name gets its own certificate at its first TLS handshake), and none of the names the host's own domain
 * keeps: the domain itself, the console's (console.<domain>) and the applications' (app-… and app_….<domain>).
 */
export function checkDomainName(given: string, hostDomain: string): string {
  const name = normalDomainName(given);
  const refuse = (why: string) => HostErrors.DOMAIN_INVALID.create({ message: `the custom domain ${shown(given)} ${why}.`, details: { domain: given.slice(0, 253) } });
  if (name.includes('*')) throw refuse('is a wildcard: each name is added by itself (a.example.com, b.example.com)');
  if (!isDnsHostName(name)) throw refuse('is not a host name: lower-case letters, digits and "-" in labels of 63 characters at most, two labels at least, 253 characters in all');
  const domain = hostDomain.toLowerCase();
  if (name === domain || name === `console.${domain}` || (name.endsWith(`.${domain}`) && /^app[-_]/.test(name))) {
    throw refuse(`is a name the host keeps for itself (its domain ${domain}, its console, its applications' app-<uuid> names)`);
  }
  return name;
}
