import { isValidVariableName } from 'runplan/buildpack';
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
