/**
 * Everything the host remembers, behind one interface: SQLite on one machine
 * (sqlite-store.ts), PostgreSQL for several (postgres-store.ts). Every method is
 * async so that both fit; a release's start and end are each one transaction.
 */

export type Zone = 'par' | 'mtl';
export type AppType = 'node' | 'ruby' | 'play1';

/** Where a store reads the time it records (ISO strings): injected so tests need not sleep. */
export interface StoreClock {
  now(): Date;
}

/** The system's time: a store's clock unless the caller gives one. */
export const systemClock: StoreClock = { now: () => new Date() };

/** What opening either store takes besides where it is. */
export interface StoreOptions {
  /** The time recorded (created, added, started, finished); the system's by default. */
  readonly clock?: StoreClock;
}

/** An application's own variables, or those it exposes to the applications linked to it (the specification's linked applications). */
export type VariableSet = 'own' | 'exposed';

export interface AppRecord {
  /** `app_` and a UUID: stable, URL-safe; the git remote is `<app_id>.git`. */
  readonly id: string;
  readonly name: string;
  readonly org: string;
  readonly zone: Zone;
  readonly type: AppType;
  readonly createdAt: string;
  /** The release serving now (its number), if one was ever accepted. */
  readonly currentRelease: number | null;
  /** Its builds run on the host's dedicated build instance (the Information menu's option; off for a new application). */
  readonly dedicatedBuildInstance: boolean;
}

export interface SshKeyRecord {
  /** `key_` and 12 hex digits. */
  readonly id: string;
  readonly org: string;
  /** The key's type and base64 body, as in authorized_keys (`ssh-ed25519 AAAA…`), without its comment. */
  readonly publicKey: string;
  /** OpenSSH's SHA256 fingerprint (`SHA256:…`). */
  readonly fingerprint: string;
  readonly comment: string;
  readonly addedAt: string;
}

type ReleaseStatus = 'deploying' | 'succeeded' | 'failed';
/** What made the release: a push, `restart` (same commit, current variables) or `rollback` (an earlier release's commit and variables). */
export type ReleaseCause = 'push' | 'restart' | 'rollback';

export interface ReleaseRecord {
  readonly appId: string;
  /** 1, 2, 3… per application. */
  readonly number: number;
  readonly cause: ReleaseCause;
  /** The git commit deployed (40 hex digits). */
  readonly commit: string;
  /** Who asked: the SSH key id of a push, or "cli". */
  readonly by: string;
  readonly status: ReleaseStatus;
  /** The variables the release was deployed with (values included: the store is 0600 and never printed). */
  readonly variables: Readonly<Record<string, string>>;
  /** The names of the add-ons linked when it was deployed (their variables are the add-ons' of the time, not kept here). */
  readonly links: readonly string[];
  /** runplan's plan (RunPlan as JSON) and its digest, once planned. */
  readonly plan: unknown;
  readonly planDigest: string | null;
  /** The loopback port its web process listens on, once started. */
  readonly port: number | null;
  /** The coded error of a failed release. */
  readonly errorCode: string | null;
  readonly startedAt: string;
  readonly finishedAt: string | null;
}

export type AddonProviderKind = 'postgresql' | 'redis' | 'storage';

/** An add-on's id, `addon_` and a UUID: what the store, and the providers naming folders, roles and databases after it, accept. */
export const ADDON_ID = /^addon_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface AddonRecord {
  /** `addon_` and a UUID. */
  readonly id: string;
  readonly name: string;
  readonly org: string;
  readonly provider: AddonProviderKind;
  readonly zone: Zone;
  readonly createdAt: string;
  /** What its provider needs to reach and remove it, secrets included (never printed). */
  readonly config: Readonly<Record<string, string>>;
}

export interface NewAddon {
  /**
   * `addon_<uuid>`, given when the provider made the server's side first under this id, so the record
   * and the database or instance share it; made by the store otherwise.
   */
  readonly id?: string;
  readonly name: string;
  readonly org: string;
  readonly provider: AddonProviderKind;
  readonly zone: Zone;
  readonly config: Readonly<Record<string, string>>;
}

/** The Unix user an application's code runs as (its build, hooks and processes): its uid is never given to another. */
export interface AppUserRecord {
  readonly uid: number;
  readonly appId: string;
  /** Its name in the machine's passwd database. */
  readonly name: string;
  readonly createdAt: string;
}

/** A custom domain: a host name the edge serves as an application's, besides its default name. One application has it, across the whole host. */
export interface DomainRecord {
  /** A lower-case RFC 1123 host name (shop.example.com). */
  readonly name: string;
  readonly appId: string;
  readonly addedAt: string;
}

export interface NewApp {
  readonly name: string;
  readonly org: string;
  readonly zone: Zone;
  readonly type: AppType;
}

export interface NewRelease {
  readonly appId: string;
  readonly cause: ReleaseCause;
  readonly commit: string;
  readonly by: string;
  readonly variables: Readonly<Record<string, string>>;
  /** The names of the linked add-ons it is deployed with. */
  readonly links?: readonly string[];
}

export interface ReleaseOutcome {
  readonly status: 'succeeded' | 'failed';
  readonly plan?: unknown;
  readonly planDigest?: string;
  readonly port?: number;
  readonly errorCode?: string;
}

export interface HostStore {
  /** Creates the application (its id made here); APP_NAME_TAKEN when its organization has one of that name. */
  createApp(app: NewApp): Promise<AppRecord>;
  /**
   * By id, or by name; when `org` is given, only an application of that organization (by id too).
   * A name two organizations share, without `org`, is INPUT_USAGE (give the org or the id).
   */
  findApp(idOrName: string, org?: string): Promise<AppRecord | undefined>;
  listApps(org?: string): Promise<AppRecord[]>;
  /** Turns the dedicated build instance on or off for the application's next builds (APP_NOT_FOUND). */
  setDedicatedBuildInstance(appId: string, on: boolean): Promise<AppRecord>;

  /** The application's variables now (what its next deploy or restart gets), or those it exposes to the applications linked to it. */
  variables(appId: string, set?: VariableSet): Promise<Record<string, string>>;
  /** Sets and removes variables in one transaction (INPUT_VARIABLE for a name in both, APP_NOT_FOUND). */
  changeVariables(appId: string, set: Readonly<Record<string, string>>, remove: readonly string[], which?: VariableSet): Promise<void>;

  /** KEY_TAKEN when the organization has that public key already (another organization may have it too). */
  addKey(key: Omit<SshKeyRecord, 'id' | 'addedAt'>): Promise<SshKeyRecord>;
  removeKey(id: string): Promise<boolean>;
  findKey(id: string): Promise<SshKeyRecord | undefined>;
  listKeys(org?: string): Promise<SshKeyRecord[]>;

  /** Records a release being deployed (the next number of its application; APP_NOT_FOUND). */
  beginRelease(release: NewRelease): Promise<ReleaseRecord>;
  /**
   * Records its outcome; a succeeded release becomes the application's current one, in the same transaction.
   * RELEASE_NOT_FOUND, or RELEASE_ALREADY_FINISHED for one not `deploying` (an outcome is recorded once).
   */
  finishRelease(appId: string, number: number, outcome: ReleaseOutcome): Promise<ReleaseRecord>;
  release(appId: string, number: number): Promise<ReleaseRecord | undefined>;
  /** Newest first. */
  listReleases(appId: string): Promise<ReleaseRecord[]>;
  /** Releases left `deploying` by a host that stopped mid-deploy: marked failed with DEPLOY_INTERRUPTED (at start of serve). */
  failUnfinishedReleases(): Promise<number>;

  /** Lines of a release's deploy log (already redacted by runplan's logger), appended in one transaction; RELEASE_NOT_FOUND. */
  appendLog(appId: string, number: number, lines: readonly string[]): Promise<void>;
  releaseLog(appId: string, number: number): Promise<string[]>;

  /** Records the add-on (ADDON_NAME_TAKEN when its organization has one of that name). */
  createAddon(addon: NewAddon): Promise<AddonRecord>;
  /** By id, or by name; with `org`, only an add-on of that organization. A name two organizations share, without `org`, is INPUT_USAGE. */
  findAddon(idOrName: string, org?: string): Promise<AddonRecord | undefined>;
  listAddons(org?: string): Promise<AddonRecord[]>;
  /** ADDON_NOT_FOUND; ADDON_LINKED (naming the applications) while any application is linked to it. */
  removeAddon(id: string): Promise<void>;
  /** Replaces the add-on's config (a restore moved its server to another port); ADDON_NOT_FOUND. */
  changeAddonConfig(id: string, config: Readonly<Record<string, string>>): Promise<void>;
  /**
   * Links the add-on to the application: true if newly linked, false if it already was.
   * APP_NOT_FOUND, ADDON_NOT_FOUND, ADDON_ORG_MISMATCH (an application links only its own organization's add-ons).
   */
  linkAddon(appId: string, addonId: string): Promise<boolean>;
  /** True if a link was removed, false if there was none. */
  unlinkAddon(appId: string, addonId: string): Promise<boolean>;
  /**
   * Links `appId` to `targetId` (it receives the variables the target exposes): true if newly linked.
   * APP_NOT_FOUND, LINK_ORG_MISMATCH (only within an organization), INPUT_USAGE (to itself).
   */
  linkApp(appId: string, targetId: string): Promise<boolean>;
  unlinkApp(appId: string, targetId: string): Promise<boolean>;
  /** The applications `appId` is linked to, by name. */
  appLinksOf(appId: string): Promise<AppRecord[]>;

  /** The applications linked to the add-on, by name. */
  appsLinkedTo(addonId: string): Promise<AppRecord[]>;
  /** The add-ons linked to the application, by name. */
  linksOf(appId: string): Promise<AddonRecord[]>;

  /**
   * Holds the application's deploy lock among the hosts that share this store
   * until `release()`; waits while another holds it (told once through `onWait`).
   * A holder that dies releases it: the lock lives as long as its holder's
   * connection. A store only one host opens (SQLite) holds it at once.
   */
  lockApp(appId: string, onWait: () => void): Promise<StoreLock>;

  /** The user recorded for the application, if it has one yet. */
  appUser(appId: string): Promise<AppUserRecord | undefined>;
  /** The highest uid ever recorded (gone applications' included), to give the next one. */
  highestAppUid(): Promise<number | undefined>;
  /**
   * Records the application's user; undefined, recording nothing, when its uid or name is
   * taken or the application has one already (another host of the same store was quicker).
   */
  recordAppUser(user: Omit<AppUserRecord, 'createdAt'>): Promise<AppUserRecord | undefined>;

  /**
   * Records the custom domain as the application's (APP_NOT_FOUND): `added` false, recording nothing, when
   * the name is had already, by this application or another (`domain` is then the one recorded).
   */
  addDomain(appId: string, name: string): Promise<{ domain: DomainRecord; added: boolean }>;
  /** Forgets the custom domain: the record removed, or undefined when no application had it. */
  removeDomain(name: string): Promise<DomainRecord | undefined>;
  findDomain(name: string): Promise<DomainRecord | undefined>;
  /** By name: every one, or an application's, or an organization's applications'. */
  listDomains(of?: { readonly appId?: string; readonly org?: string }): Promise<DomainRecord[]>;

  close(): Promise<void>;
}

export interface StoreLock {
  release(): Promise<void>;
}
