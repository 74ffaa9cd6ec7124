/**
 * The rows both stores keep (one schema in two dialects) and how a row becomes
 * the record callers get: shared so that SQLite and PostgreSQL answer alike.
 * Times are the clock's ISO strings, and the JSON columns JSON.stringify's text,
 * in both.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { HostErrors } from '../errors.js';
import { ADDON_ID, type AddonRecord, type AppRecord, type AppUserRecord, type DomainRecord, type NewAddon, type NewApp, type ReleaseRecord, type SshKeyRecord } from './store.js';

/** Where each set of an application's variables is kept. */
export const VARIABLE_TABLES = { own: 'variables', exposed: 'exposed_variables' } as const;

export interface AppRow {
  id: string;
  name: string;
  org: string;
  zone: AppRecord['zone'];
  type: AppRecord['type'];
  created_at: string;
  current_release: number | null;
  /** 0 or 1 in SQLite, a boolean in PostgreSQL. */
  dedicated_build_instance: number | boolean;
}

export interface AddonRow {
  id: string;
  name: string;
  org: string;
  provider: AddonRecord['provider'];
  zone: AddonRecord['zone'];
  created_at: string;
  config: string;
}

export interface KeyRow {
  id: string;
  org: string;
  public_key: string;
  fingerprint: string;
  comment: string;
  added_at: string;
}

export interface ReleaseRow {
  app_id: string;
  number: number;
  cause: ReleaseRecord['cause'];
  commit_sha: string;
  requested_by: string;
  status: ReleaseRecord['status'];
  variables: string;
  links: string;
  plan: string | null;
  plan_digest: string | null;
  port: number | null;
  error_code: string | null;
  started_at: string;
  finished_at: string | null;
}

/** A new application's record: its id made here, only the fields the record holds whatever else the caller's object carries. */
export function newAppRecord(app: NewApp, createdAt: string): AppRecord {
  return { id: `app_${randomUUID()}`, name: app.name, org: app.org, zone: app.zone, type: app.type, createdAt, currentRelease: null, dedicatedBuildInstance: false };
}

export function newKeyRecord(key: Omit<SshKeyRecord, 'id' | 'addedAt'>, addedAt: string): SshKeyRecord {
  return { id: `key_${randomBytes(6).toString('hex')}`, org: key.org, publicKey: key.publicKey, fingerprint: key.fingerprint, comment: key.comment, addedAt };
}

/** A new add-on's record, under the id the caller gives (INPUT_USAGE unless addon_<uuid>) or one made here. */
export function newAddonRecord(addon: NewAddon, createdAt: string): AddonRecord {
  const id = addon.id ?? `addon_${randomUUID()}`;
  if (!ADDON_ID.test(id)) throw HostErrors.INPUT_USAGE.create({ message: `${id} is not an add-on id (addon_<uuid>)`, details: { id } });
  return { id, name: addon.name, org: addon.org, provider: addon.provider, zone: addon.zone, createdAt, config: { ...addon.config } };
}

/** The plan column's text: null until the release is planned. */
export function planText(plan: unknown): string | null {
  return plan === undefined ? null : JSON.stringify(plan);
}

export interface AppUserRow {
  uid: number;
  app_id: string;
  name: string;
  created_at: string;
}

export function toAppUser(row: AppUserRow | undefined): AppUserRecord | undefined {
  return row ? { uid: Number(row.uid), appId: row.app_id, name: row.name, createdAt: row.created_at } : undefined;
}

export function toApp(row: AppRow): AppRecord {
  return {
    id: row.id,
    name: row.name,
    org: row.org,
    zone: row.zone,
    type: row.type,
    createdAt: row.created_at,
    currentRelease: row.current_release,
    dedicatedBuildInstance: Boolean(row.dedicated_build_instance),
  };
}

export interface DomainRow {
  name: string;
  app_id: string;
  added_at: string;
}

export function toDomain(row: DomainRow): DomainRecord {
  return { name: row.name, appId: row.app_id, addedAt: row.added_at };
}

export function toAddon(row: AddonRow): AddonRecord {
  return { id: row.id, name: row.name, org: row.org, provider: row.provider, zone: row.zone, createdAt: row.created_at, config: JSON.parse(row.config) as Record<string, string> };
}

export function toKey(row: KeyRow): SshKeyRecord {
  return { id: row.id, org: row.org, publicKey: row.public_key, fingerprint: row.fingerprint, comment: row.comment, addedAt: row.added_at };
}

export function toRelease(row: ReleaseRow): ReleaseRecord {
  return {
    appId: row.app_id,
    number: row.number,
    cause: row.cause,
    commit: row.commit_sha,
    by: row.requested_by,
    status: row.status,
    variables: JSON.parse(row.variables) as Record<string, string>,
    links: JSON.parse(row.links) as string[],
    plan: row.plan === null ? null : (JSON.parse(row.plan) as unknown),
    planDigest: row.plan_digest,
    port: row.port,
    errorCode: row.error_code,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}
