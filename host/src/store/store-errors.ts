/**
 * The coded errors a store raises, made in one place so that every HostStore
 * refuses the same things with the same code, message and details.
 */
import { HostErrors } from '../errors.js';
import type { Migration } from './migrations.js';
import type { AddonRecord, NewAddon, NewApp, SshKeyRecord } from './store.js';

/** What is known of a store for its errors: `name`, the file or the URL without its password; `file`, for a store in a file. */
export interface StoreName {
  readonly name: string;
  readonly file?: string;
}

/** STORE_NEWER when the store has a migration applied that `known` lacks: it was made by a newer runplan-host. */
export function refuseNewerSchema(applied: Iterable<number>, known: readonly Migration[], store: StoreName): void {
  const versions = new Set(known.map((m) => m.version));
  const unknown = [...applied].filter((v) => !versions.has(v));
  if (unknown.length === 0) return;
  const latestVersion = Math.max(0, ...versions);
  throw HostErrors.STORE_NEWER.create({
    message: `the store ${store.name} has schema version ${Math.max(...unknown)}; this runplan-host knows versions up to ${latestVersion}`,
    ...(store.file === undefined ? {} : { file: store.file }),
    details: { unknownVersions: unknown.sort((a, b) => a - b), latestVersion },
  });
}

/** INPUT_VARIABLE for a name both set and removed in one change: which one wins would be a guess, so the caller says. */
export function refuseSetAndRemoved(set: Readonly<Record<string, string>>, remove: readonly string[]): void {
  const both = remove.filter((name) => Object.hasOwn(set, name));
  if (both.length > 0) {
    throw HostErrors.INPUT_VARIABLE.create({ message: `${both[0]} is both set and removed in one change`, variable: both[0], fix: 'Set it or remove it, not both at once.' });
  }
}

export const appNameTaken = (app: NewApp) =>
  HostErrors.APP_NAME_TAKEN.create({ message: `the organization ${app.org} already has an application named ${app.name}`, details: { org: app.org, name: app.name } });

export const addonNameTaken = (addon: NewAddon) =>
  HostErrors.ADDON_NAME_TAKEN.create({ message: `the organization ${addon.org} already has an add-on named ${addon.name}`, details: { org: addon.org, name: addon.name } });

export const keyTaken = (key: Pick<SshKeyRecord, 'org' | 'fingerprint'>, existingId: string) =>
  HostErrors.KEY_TAKEN.create({
    message: `the organization ${key.org} already has the key ${key.fingerprint}, as ${existingId}`,
    details: { org: key.org, id: existingId, fingerprint: key.fingerprint },
  });

/** INPUT_USAGE for a name several organizations share, given without one: `rows` are those found, by organization. */
export function ambiguousName(what: 'application' | 'add-on', name: string, rows: ReadonlyArray<{ id: string; org: string }>) {
  return HostErrors.INPUT_USAGE.create({
    message: `${rows.length} organizations have ${what === 'application' ? 'an application' : 'an add-on'} named ${name} (${rows.map((r) => r.org).join(', ')})`,
    fix: `Give --org <org> with the name, or the ${what}'s id (${rows.map((r) => r.id).join(', ')}).`,
    details: { name, orgs: rows.map((r) => r.org) },
  });
}

export const appNotFound = (appId: string) => HostErrors.APP_NOT_FOUND.create({ message: `no application has the id ${appId}`, details: { appId } });

export const addonNotFound = (addonId: string) => HostErrors.ADDON_NOT_FOUND.create({ message: `no add-on has the id ${addonId}`, details: { addonId } });

export const releaseNotFound = (appId: string, number: number, purpose = '') =>
  HostErrors.RELEASE_NOT_FOUND.create({ message: `the application ${appId} has no release ${number}${purpose}`, details: { appId, number } });

export const releaseAlreadyFinished = (appId: string, number: number, status: string, asked: string) =>
  HostErrors.RELEASE_ALREADY_FINISHED.create({
    message: `release ${number} of ${appId} already ${status}; it cannot be marked ${asked}`,
    details: { appId, number, status },
  });

/** The add-on by the name its organization knows it by, and the exact commands that unlink it from each application. */
export function addonLinked(addon: { readonly id: string; readonly name: string }, apps: ReadonlyArray<{ id: string; name: string }>) {
  const names = apps.map((a) => a.name).join(', ');
  return HostErrors.ADDON_LINKED.create({
    message: `the add-on ${addon.name} is linked to ${names}: removing it would take it from ${apps.length === 1 ? 'that application' : 'those applications'} at their next release.`,
    fix: `Unlink it first, then remove it: ${apps.map((a) => `runplan-host unlink-addon ${addon.name} --app ${a.name}`).join('; ')}.`,
    details: { addonId: addon.id, addon: addon.name, apps: apps.map((a) => ({ id: a.id, name: a.name })) },
  });
}

export const addonOrgMismatch = (appId: string, appOrg: string, addon: Pick<AddonRecord, 'id' | 'name' | 'org'>) =>
  HostErrors.ADDON_ORG_MISMATCH.create({
    message: `the application ${appId} belongs to ${appOrg}, the add-on ${addon.name} (${addon.id}) to ${addon.org}`,
    details: { appId, appOrg, addonId: addon.id, addonOrg: addon.org },
  });

type LinkedApp = { id: string; name: string; org: string };

/** INPUT_USAGE (an application linked to itself) or LINK_ORG_MISMATCH; nothing when `app` may be linked to `target`. */
export function refuseAppLink(app: LinkedApp, target: LinkedApp): void {
  if (app.id === target.id) throw HostErrors.INPUT_USAGE.create({ message: `an application cannot be linked to itself (${app.name})`, details: { appId: app.id } });
  if (app.org !== target.org) {
    throw HostErrors.LINK_ORG_MISMATCH.create({
      message: `the application ${app.name} belongs to ${app.org}, ${target.name} to ${target.org}`,
      details: { appId: app.id, appOrg: app.org, targetId: target.id, targetOrg: target.org },
    });
  }
}
