import { randomUUID } from 'node:crypto';
import type { BuildpackRegistry, LinkedVariables, RunPlan } from 'runplan';
import { secretReason } from 'runplan/buildpack';
import type { AddonServers } from './addons/addon-servers.js';
import { AppLocks } from './deploy/app-locks.js';
import { atMost, BRING_BACK_AT_ONCE } from './deploy/at-most.js';
import { describeError } from './deploy/describe-error.js';
import type { Releases, ReleaseResult } from './deploy/releases.js';
import type { Edge } from './edge/edge.js';
import { HostErrors } from './errors.js';
import type { PushRequest } from './git/hook-protocol.js';
import { moveMaster, putBackInterruptedMove, readMaster, type Repository } from './git/master-ref.js';
import type { HostLog } from './supervision/host-log.js';
import type { PartHealth, Supervisor } from './supervision/supervisor.js';
import { ensureRepository } from './git/repositories.js';
import type { HostPaths } from './paths.js';
import { appUrl, gitRemoteUrl, type HostSettings } from './settings.js';
import { authorizedKeysText, parsePublicKey, writeAuthorizedKeys } from './ssh/authorized-keys.js';
import type { AddonRecord, AppRecord, DomainRecord, HostStore, ReleaseRecord, SshKeyRecord, VariableSet } from './store/store.js';
import { checkAddonName, checkAppName, checkDomainName, checkOrg, checkType, checkVariable, checkZone, normalDomainName } from './validate.js';
import type { Tenancy } from './tenancy/tenancy.js';

/** An application as the API shows it: its record, remote, address and what serves. */
export interface AppView extends AppRecord {
  readonly gitRemote: string;
  readonly url: string;
  /** The release answering now, and its port, when `serve` runs it. */
  readonly serving: { readonly release: number; readonly port: number } | null;
  /** The size of the host's dedicated build instance, which the application's builds get when `dedicatedBuildInstance` is on. */
  readonly buildInstance: { readonly cpus: number; readonly memoryMb: number };
}

export interface VariableView {
  readonly name: string;
  /** "***" for a secret unless shown. */
  readonly value: string;
  readonly secret: boolean;
  /** Set, changed or removed since the release that serves (it takes effect at the next deploy or restart). */
  readonly changed: 'added' | 'changed' | null;
}

/** A custom domain as the API shows it: with its application's name and organization, and its address. */
export interface DomainView extends DomainRecord {
  readonly app: string;
  readonly org: string;
  readonly url: string;
}

/** An add-on as the API shows it: never its config (which holds its secrets). */
export type AddonView = Omit<AddonRecord, 'config'> & { readonly linkedTo: readonly string[] };

/** A release as the API shows it: never its variables' values. */
export type ReleaseView = Omit<ReleaseRecord, 'variables' | 'plan'> & { readonly variableNames: readonly string[] };

export interface ServiceOptions {
  readonly store: HostStore;
  readonly releases: Releases;
  /** The edge: a custom domain added or removed is served, or not, at once. */
  readonly edge: Edge;
  readonly paths: HostPaths;
  readonly settings: HostSettings;
  readonly registry: BuildpackRegistry;
  readonly addons: AddonServers;
  /** The parts serve keeps running: what status checks. */
  readonly supervisor: Supervisor;
  /** The host's own log (logs --host). */
  readonly hostLog: HostLog;
  /** The command sshd runs for a key (the forced command of its authorized_keys line). */
  readonly gitShellCommand: (keyId: string) => string;
  /** The proc-receive hook of every repository. */
  readonly hookCommand: string;
  /** The SSH user's ids: repositories are its own. */
  readonly sshUser: { readonly uid: number; readonly gid: number };
  /** Each application's own user and walls (the local engine): a new application gets its user at once. */
  readonly tenancy?: Tenancy;
}

/**
 * What the host does, whoever asks: the CLI and (later) the console through the
 * API, and the git transport through its socket. One place changes state.
 */
export class HostService {
  /** One change of an add-on at a time (create, remove, link): a removal never races a link. */
  private readonly addonLocks = new AppLocks();
  /** One change of a custom domain at a time (add, remove): the edge serves what the store records, whatever the order of two callers. */
  private readonly domainLocks = new AppLocks();

  constructor(private readonly o: ServiceOptions) {}

  private view(app: AppRecord): AppView {
    return {
      ...app,
      gitRemote: gitRemoteUrl(this.o.settings, app.id),
      url: appUrl(this.o.settings, app.id),
      serving: this.o.releases.servingRelease(app.id) ?? null,
      buildInstance: this.o.settings.buildInstance,
    };
  }

  async app(idOrName: string, org?: string): Promise<AppRecord> {
    const app = await this.o.store.findApp(idOrName, org);
    if (!app) throw HostErrors.APP_NOT_FOUND.create({ message: `no application ${JSON.stringify(idOrName.slice(0, 80))}${org ? ` in organization ${org}` : ''}.` });
    return app;
  }

  async createApp(input: { name: string; org: string; zone: string; type: string }): Promise<AppView> {
    const app = await this.o.store.createApp({ name: checkAppName(input.name), org: checkOrg(input.org), zone: checkZone(input.zone), type: checkType(input.type) });
    await ensureRepository(this.o.paths.gitDir, app.id, this.o.hookCommand, this.o.sshUser);
    await this.o.tenancy?.users.ensure(app.id);
    return this.view(app);
  }

  /**
   * Adds a custom domain to the application (of `org` when given) and serves it at once. A name another application
   * has is DOMAIN_TAKEN, naming that application only for a caller who may see it: the operator (no `org`), or a
   * caller of its organization; anyone else learns only that the name is taken.
   */
  async addDomain(idOrName: string, given: string, org?: string): Promise<DomainView> {
    const app = await this.app(idOrName, org);
    const name = checkDomainName(given, this.o.settings.domain);
    const unlock = await this.domainLocks.acquire(name, 'add', () => {});
    try {
      return await this.addDomainUnlocked(app, name, org);
    } finally {
      unlock();
    }
  }

  private async addDomainUnlocked(app: AppRecord, name: string, org: string | undefined): Promise<DomainView> {
    const { domain, added } = await this.o.store.addDomain(app.id, name);
    if (domain.appId !== app.id) {
      const holder = await this.o.store.findApp(domain.appId);
      const visible = holder !== undefined && (org === undefined || holder.org === org);
      throw HostErrors.DOMAIN_TAKEN.create({
        message: visible ? `${name} is a custom domain of the application ${holder.org}/${holder.name} (${holder.id}) already` : `${name} is taken: another application of this host has it`,
        details: visible ? { domain: name, appId: holder.id } : { domain: name },
      });
    }
    try {
      await this.o.edge.serveDomain({ name, appId: app.id });
    } catch (error) {
      // Recorded only if served: a name the edge refused is not left to the application.
      if (added) await this.o.store.removeDomain(name);
      throw error;
    }
    return this.domainView(domain, app);
  }

  /** Stops serving the custom domain at once and forgets it; DOMAIN_NOT_FOUND when no application (of `org`, when given) has it. */
  async removeDomain(given: string, org?: string): Promise<DomainView> {
    const name = normalDomainName(given);
    const unlock = await this.domainLocks.acquire(name, 'remove', () => {});
    try {
      return await this.removeDomainUnlocked(name, given, org);
    } finally {
      unlock();
    }
  }

  private async removeDomainUnlocked(name: string, given: string, org: string | undefined): Promise<DomainView> {
    const domain = await this.o.store.findDomain(name);
    const app = domain && (await this.o.store.findApp(domain.appId, org));
    if (domain === undefined || app === undefined) {
      throw HostErrors.DOMAIN_NOT_FOUND.create({
        message: `no application${org ? ` of organization ${org}` : ''} has the custom domain ${JSON.stringify(given.slice(0, 253))}.`,
        details: { domain: given.slice(0, 253) },
      });
    }
    await this.o.store.removeDomain(name);
    await this.o.edge.stopServingDomain(name);
    return this.domainView(domain, app);
  }

  /** The custom domains of an application, or of every application (of `org`, when given), by name. */
  async domains(idOrName: string | undefined, org?: string): Promise<DomainView[]> {
    const app = idOrName === undefined ? undefined : await this.app(idOrName, org);
    const domains = await this.o.store.listDomains(app === undefined ? (org === undefined ? {} : { org }) : { appId: app.id });
    const apps = new Map((app === undefined ? await this.o.store.listApps(org) : [app]).map((a) => [a.id, a]));
    return domains.flatMap((d) => {
      const of = apps.get(d.appId);
      return of === undefined ? [] : [this.domainView(d, of)];
    });
  }

  private domainView(domain: DomainRecord, app: AppRecord): DomainView {
    const port = this.o.settings.httpsPort;
    return { ...domain, app: app.name, org: app.org, url: `https://${domain.name}${port === 443 ? '' : `:${port}`}/` };
  }

  async apps(org?: string): Promise<AppView[]> {
    return (await this.o.store.listApps(org)).map((a) => this.view(a));
  }

  async appView(idOrName: string, org?: string): Promise<AppView> {
    return this.view(await this.app(idOrName, org));
  }

  /** The Information menu's option: the application's next builds are sized for the host's build instance, or not. */
  async setDedicatedBuildInstance(idOrName: string, on: boolean, org?: string): Promise<AppView> {
    const app = await this.app(idOrName, org);
    return this.view(await this.o.store.setDedicatedBuildInstance(app.id, on));
  }

  /**
   * The application's variables (`own`), masked unless `show`, with what changed since the serving release;
   * or those it exposes to the applications linked to it (`exposed`: they take effect at their next deploy).
   */
  async variables(appId: string, show: boolean, set: VariableSet = 'own'): Promise<{ variables: VariableView[]; removed: string[] }> {
    const now = await this.o.store.variables(appId, set);
    const app = await this.app(appId);
    const current = app.currentRelease === null || set === 'exposed' ? undefined : await this.o.store.release(appId, app.currentRelease);
    const before = current?.variables ?? {};
    const secrets = new Set(this.o.registry.secretVariables());
    const variables = Object.keys(now)
      .sort()
      .map((name) => {
        const value = now[name] as string;
        const secret = secretReason(name, value, secrets) !== undefined;
        const changed = current === undefined ? null : !(name in before) ? 'added' : before[name] !== value ? 'changed' : null;
        return { name, value: secret && !show ? '***' : value, secret, changed } as const;
      });
    const removed = current === undefined ? [] : Object.keys(before).filter((n) => !(n in now));
    return { variables, removed };
  }

  async changeVariables(appId: string, set: Readonly<Record<string, string>>, remove: readonly string[], which: VariableSet = 'own'): Promise<void> {
    for (const [name, value] of Object.entries(set)) checkVariable(name, value);
    for (const name of remove) checkVariable(name, undefined);
    await this.o.store.changeVariables(appId, set, remove, which);
  }

  async addKey(org: string, text: string, file: string): Promise<SshKeyRecord> {
    const parsed = parsePublicKey(text, file);
    const key = await this.o.store.addKey({ org: checkOrg(org), publicKey: parsed.publicKey, fingerprint: parsed.fingerprint, comment: parsed.comment });
    await this.writeKeys();
    return key;
  }

  async removeKey(id: string): Promise<void> {
    if (!(await this.o.store.removeKey(id))) throw HostErrors.KEY_NOT_FOUND.create({ message: `no SSH key ${JSON.stringify(id.slice(0, 40))}.` });
    await this.writeKeys();
  }

  keys(org?: string): Promise<SshKeyRecord[]> {
    return this.o.store.listKeys(org);
  }

  /** Every repository made again as this host makes them (its hook names this program where it is now). */
  async ensureRepositories(): Promise<void> {
    for (const app of await this.o.store.listApps()) await ensureRepository(this.o.paths.gitDir, app.id, this.o.hookCommand, this.o.sshUser);
  }

  /** authorized_keys from the store: written again on every change, and when serve starts. */
  async writeKeys(): Promise<void> {
    await writeAuthorizedKeys(this.o.paths.authorizedKeys, authorizedKeysText(await this.o.store.listKeys(), this.o.gitShellCommand));
  }

  /**
   * Whether the key may push to the application: both exist, and the key (the
   * same public key, added to several organizations: sshd matches its first line)
   * is one of the application's organization.
   */
  async mayPush(keyId: string, appId: string): Promise<boolean> {
    const [key, app] = await Promise.all([this.o.store.findKey(keyId), this.o.store.findApp(appId)]);
    if (key === undefined || app === undefined || app.id !== appId) return false;
    return key.org === app.org || (await this.o.store.listKeys(app.org)).some((k) => k.publicKey === key.publicKey);
  }

  /** The application's bare repository, which serve reads and moves master in as its owner (the SSH user). */
  private repositoryOf(appId: string): Repository {
    return { path: this.o.releases.repository(appId), owner: this.o.sshUser };
  }

  /**
   * A push, from the proc-receive hook (git moves no ref itself): deployed under
   * the application's lock, which also moves master, once the release passed its
   * gate and before it serves. A push whose master moved while it waited is
   * refused before anything runs (git would refuse its ref update); `signal`:
   * the hook has gone, so the deploy stops unless master has moved already.
   */
  async push(request: PushRequest, out: (line: string) => void, signal?: AbortSignal): Promise<ReleaseResult> {
    if (!(await this.mayPush(request.key, request.app))) {
      const error = HostErrors.PUSH_DENIED.create({ message: 'this key may not push to that application.' });
      out(`error ${error.message}`);
      return { ok: false, release: 0, code: error.code };
    }
    const app = await this.app(request.app);
    const repository = this.repositoryOf(app.id);
    return this.o.releases.deploy({
      app,
      cause: 'push',
      by: request.key,
      source: { repository: repository.path, commit: request.newCommit },
      variables: await this.o.store.variables(app.id),
      links: await this.linkedVariables(app),
      out,
      ...(signal ? { signal } : {}),
      underLock: async () => {
        const master = (await readMaster(repository)) ?? '0'.repeat(request.oldCommit.length);
        if (master !== request.oldCommit) {
          throw HostErrors.PUSH_STALE.create({
            message: `master moved while this push waited: it is at ${master.slice(0, 12)} now, not at ${request.oldCommit.slice(0, 12)} as when this push began; nothing of this push was deployed.`,
          });
        }
        return {};
      },
      accept: (release) => moveMaster(repository, { from: request.oldCommit, to: request.newCommit, release }),
    });
  }

  /** What a restart starts from: the application and its current release (DEPLOY_NOTHING when it has none), checked before any answer starts. */
  async restartTarget(appId: string): Promise<{ app: AppRecord; current: ReleaseRecord }> {
    const app = await this.app(appId);
    return { app, current: await this.currentRelease(app) };
  }

  /**
   * A new release of the serving commit with the variables of now, through the same gate. The commit is read
   * again under the application's lock: a push accepted while the restart waited is the one restarted.
   */
  async restart({ app, current }: { app: AppRecord; current: ReleaseRecord }, by: string, out: (line: string) => void): Promise<ReleaseResult> {
    return this.o.releases.deploy({
      app,
      cause: 'restart',
      by,
      source: { repository: this.o.releases.repository(app.id), commit: current.commit },
      variables: await this.o.store.variables(app.id),
      links: await this.linkedVariables(app),
      out,
      underLock: async () => ({ source: { repository: this.o.releases.repository(app.id), commit: (await this.currentRelease(await this.app(app.id))).commit } }),
    });
  }

  /** The release a rollback goes back to: `target`, or the newest succeeded one before the current release. */
  async rollbackTarget(appId: string, target: number | undefined): Promise<{ app: AppRecord; release: ReleaseRecord }> {
    const app = await this.app(appId);
    const current = await this.currentRelease(app);
    const releases = await this.o.store.listReleases(app.id);
    const release = target === undefined ? releases.find((r) => r.status === 'succeeded' && r.number < current.number) : releases.find((r) => r.number === target);
    if (release?.status !== 'succeeded') {
      throw HostErrors.RELEASE_NOT_FOUND.create({
        message: target === undefined ? `${app.name} has no succeeded release before release ${current.number} to roll back to.` : `${app.name} has no succeeded release ${target}.`,
      });
    }
    return { app, release };
  }

  /** A new release made of an earlier one's commit, variables and plan defaults, through the same gate. */
  async rollbackTo(app: AppRecord, release: ReleaseRecord, by: string, out: (line: string) => void): Promise<ReleaseResult> {
    out(`==> rolling back to release ${release.number} (commit ${release.commit.slice(0, 12)}, its variables and its plan's defaults)`);
    return this.o.releases.deploy({
      app,
      cause: 'rollback',
      by,
      source: { repository: this.o.releases.repository(app.id), commit: release.commit },
      variables: release.variables,
      // Links are the add-ons of now: an add-on removed since cannot be linked again by going back.
      links: await this.linkedVariables(app),
      keepDefaultsOf: release.plan as RunPlan,
      out,
    });
  }

  /** The variables of each add-on linked to the application, then of each application it is linked to (what they expose), each in the order of their names. */
  private async linkedVariables(app: AppRecord): Promise<LinkedVariables[]> {
    const linked = await this.o.store.linksOf(app.id);
    this.o.addons.assertReachable(app, linked);
    const addons = linked.map((addon) => ({
      name: addon.name,
      kind: 'addon' as const,
      variables: this.o.addons.variables(addon),
      // A release in its own namespace reaches an add-on server of this machine at its gateway, on the same port.
      ...(this.onLoopback(addon) ? { loopback: { port: Number(addon.config.port), variablesAt: (host: string) => this.variablesAt(addon, host) } } : {}),
    }));
    const apps = await Promise.all(
      (await this.o.store.appLinksOf(app.id)).map(async (target) => ({ name: target.name, kind: 'application' as const, variables: await this.o.store.variables(target.id, 'exposed') })),
    );
    return [...addons, ...apps];
  }

  /** Whether the add-on's server listens on this machine's loopback (the local engine's servers, each on a port of its own). */
  private onLoopback(addon: AddonRecord): boolean {
    return this.o.addons.engine === 'local' && /^\d+$/.test(addon.config.port ?? '');
  }

  private variablesAt(addon: AddonRecord, host: string): Record<string, string> {
    return this.o.addons.variables({ ...addon, config: { ...addon.config, host } });
  }

  /**
   * The add-on's variables as the customer reads them (addon env, the console): with releases in their
   * own networks, at the releases' gateway, which a linked release and the machine's own programs both
   * reach (release-network.ts translates it to the loopback); a value the customer copies (the storage
   * endpoint) then works in the release.
   */
  private shownVariables(addon: AddonRecord): Record<string, string> {
    const gateway = this.o.tenancy?.networks?.settings.gateway;
    return gateway && this.onLoopback(addon) ? this.variablesAt(addon, gateway) : this.o.addons.variables(addon);
  }

  private async addonView(addon: AddonRecord): Promise<AddonView> {
    const { config: _config, ...rest } = addon;
    return { ...rest, linkedTo: (await this.o.store.appsLinkedTo(addon.id)).map((a) => a.name) };
  }

  async addon(idOrName: string, org?: string): Promise<AddonRecord> {
    const addon = await this.o.store.findAddon(idOrName, org);
    if (!addon) throw HostErrors.ADDON_NOT_FOUND.create({ message: `no add-on ${JSON.stringify(idOrName.slice(0, 80))}${org ? ` in organization ${org}` : ''}.` });
    return addon;
  }

  async addons(org?: string): Promise<AddonView[]> {
    return Promise.all((await this.o.store.listAddons(org)).map((a) => this.addonView(a)));
  }

  /**
   * Makes the add-on on its provider's server, then records it; a failure of either
   * leaves neither (the server's side is removed again when the record cannot be made).
   */
  async createAddon(input: { kind: string; name: string; org: string; zone: string }): Promise<AddonView> {
    const [name, org, zone] = [checkAddonName(input.name), checkOrg(input.org), checkZone(input.zone)];
    const provider = await this.o.addons.provider(input.kind);
    const unlock = await this.addonLocks.acquire(`${org}/${name}`, 'create', () => {});
    try {
      if (await this.o.store.findAddon(name, org)) throw HostErrors.ADDON_NAME_TAKEN.create({ message: `${org} already has an add-on named ${name}.`, details: { org, name } });
      const ref = { id: `addon_${randomUUID()}`, name };
      const made = await provider.create(ref);
      try {
        return this.addonView(await this.o.store.createAddon({ id: ref.id, name, org, provider: provider.kind, zone, config: made.config }));
      } catch (error) {
        await provider.remove(ref, made.config).catch(() => {});
        throw error;
      }
    } finally {
      unlock();
    }
  }

  /** Removes the add-on and its data: refused while an application is linked to it; the record goes last, so a failure can be retried. */
  async removeAddon(idOrName: string, org?: string): Promise<void> {
    const addon = await this.addon(idOrName, org);
    const unlock = await this.addonLocks.acquire(addon.id, 'remove', () => {});
    try {
      const linked = await this.o.store.appsLinkedTo(addon.id);
      if (linked.length > 0) await this.o.store.removeAddon(addon.id); // raises ADDON_LINKED, naming them
      await (await this.o.addons.provider(addon.provider)).remove(addon, addon.config);
      await this.o.store.removeAddon(addon.id);
    } finally {
      unlock();
    }
  }

  /** The variables a link to the add-on injects; secret values masked unless `show`. */
  async addonVariables(idOrName: string, org: string | undefined, show: boolean): Promise<{ name: string; value: string; secret: boolean }[]> {
    const addon = await this.addon(idOrName, org);
    const secrets = new Set(this.o.registry.secretVariables());
    return Object.entries(this.shownVariables(addon)).map(([name, value]) => {
      const secret = secretReason(name, value, secrets) !== undefined;
      return { name, value: secret && !show ? '***' : value, secret };
    });
  }

  /** What a link or unlink checks before its answer starts: both exist (a link across organizations is refused when it is made). */
  async linkTarget(appId: string, addonName: string): Promise<{ app: AppRecord; addon: AddonRecord }> {
    const app = await this.app(appId);
    return {
      app,
      addon: await this.inOrgOrElsewhere(
        () => this.addon(addonName, app.org),
        () => this.o.store.findAddon(addonName),
      ),
    };
  }

  /** The same for a link between two applications. */
  async appLinkTarget(appId: string, otherName: string): Promise<{ app: AppRecord; target: AppRecord }> {
    const app = await this.app(appId);
    return {
      app,
      target: await this.inOrgOrElsewhere(
        () => this.app(otherName, app.org),
        () => this.o.store.findApp(otherName),
      ),
    };
  }

  /** Found in the application's organization, or else (to be refused as a mismatch, which says more than "not found") in another. */
  private async inOrgOrElsewhere<T>(inOrg: () => Promise<T>, anywhere: () => Promise<T | undefined>): Promise<T> {
    try {
      return await inOrg();
    } catch (error) {
      const elsewhere = await anywhere().catch(() => undefined);
      if (elsewhere === undefined) throw error;
      return elsewhere;
    }
  }

  /** Links or unlinks (ADDON_ORG_MISMATCH across organizations): true when it changed anything. Checked before any answer starts. */
  async setLink({ app, addon }: { app: AppRecord; addon: AddonRecord }, link: boolean): Promise<boolean> {
    if (link) this.o.addons.assertReachable(app, [addon]);
    const unlock = await this.addonLocks.acquire(addon.id, link ? 'link' : 'unlink', () => {});
    try {
      return link ? await this.o.store.linkAddon(app.id, addon.id) : await this.o.store.unlinkAddon(app.id, addon.id);
    } finally {
      unlock();
    }
  }

  /** The names of the applications whose exposed variables the application receives. */
  async appLinks(appId: string): Promise<string[]> {
    const app = await this.app(appId);
    return (await this.o.store.appLinksOf(app.id)).map((a) => a.name);
  }

  /** Links or unlinks two applications (LINK_ORG_MISMATCH across organizations): true when it changed anything. */
  setAppLink({ app, target }: { app: AppRecord; target: AppRecord }, link: boolean): Promise<boolean> {
    return link ? this.o.store.linkApp(app.id, target.id) : this.o.store.unlinkApp(app.id, target.id);
  }

  /**
   * After a link or unlink (of `what`: an add-on or an application): when the application
   * serves, a new release of the serving commit through the gate, so it sees its new
   * variables. A failed gate keeps the old release serving and the link as asked (the
   * next deploy uses it).
   */
  async releaseLinks(app: AppRecord, what: string, link: boolean, changed: boolean, by: string, out: (line: string) => void): Promise<{ ok: boolean }> {
    out(`==> ${what} ${changed ? (link ? 'linked to' : 'unlinked from') : link ? 'was already linked to' : 'was not linked to'} ${app.name}`);
    const fresh = await this.app(app.id);
    if (fresh.currentRelease === null) {
      out(`${app.name} has never been deployed: its first deploy gets the variables of its links.`);
      return { ok: true };
    }
    if (!changed) return { ok: true };
    const current = await this.currentRelease(fresh);
    out(`==> a new release of ${current.commit.slice(0, 12)} with the variables of its links`);
    return this.restart({ app: fresh, current }, by, out);
  }

  /** The last lines of each application, and who follows them. */
  get logs() {
    return this.o.releases.logs;
  }

  /** The host's own lines: its start, and each death and restart of a part. */
  get hostLog(): HostLog {
    return this.o.hostLog;
  }

  /** Whether the host serves: every part it runs checked now from outside (its port, its socket), and how many applications it has. */
  async status(): Promise<{ serving: boolean; apps: number; parts: PartHealth[] }> {
    const [parts, apps] = await Promise.all([this.o.supervisor.health(), this.o.store.listApps()]);
    return { serving: parts.every((p) => p.up), apps: apps.length, parts };
  }

  private async currentRelease(app: AppRecord): Promise<ReleaseRecord> {
    const current = app.currentRelease === null ? undefined : await this.o.store.release(app.id, app.currentRelease);
    if (!current) throw HostErrors.DEPLOY_NOTHING.create({ message: `${app.name} (${app.id}) has never been deployed.` });
    return current;
  }

  async releases(appId: string): Promise<ReleaseView[]> {
    const app = await this.app(appId);
    return (await this.o.store.listReleases(app.id)).map(({ variables, plan: _plan, ...r }) => ({ ...r, variableNames: Object.keys(variables).sort() }));
  }

  async release(appId: string, number: number): Promise<{ release: ReleaseView; plan: unknown; log: string[] }> {
    const app = await this.app(appId);
    const record = await this.o.store.release(app.id, number);
    if (!record) throw HostErrors.RELEASE_NOT_FOUND.create({ message: `${app.name} has no release ${number}.` });
    const { variables, plan, ...r } = record;
    return { release: { ...r, variableNames: Object.keys(variables).sort() }, plan, log: await this.o.store.releaseLog(app.id, number) };
  }

  /**
   * serve starting, before it takes pushes: master put back where a push moved it but serve stopped before
   * its release served (the release is recorded DEPLOY_INTERRUPTED), so that the current release is master's.
   */
  async putBackInterruptedPushes(out: (line: string) => void): Promise<void> {
    for (const app of await this.o.store.listApps()) {
      const [newest] = await this.o.store.listReleases(app.id);
      if (newest?.cause !== 'push' || newest.errorCode !== HostErrors.DEPLOY_INTERRUPTED.code) continue;
      const master = await putBackInterruptedMove(this.repositoryOf(app.id), newest).catch((error: unknown) => {
        out(`==> ${app.name}: ${describeError(error).lines.join(' ')}`);
        return undefined;
      });
      if (master !== undefined) out(`==> ${app.name}: master put back to ${/^0+$/.test(master) ? 'no commit' : master.slice(0, 12)}: release ${newest.number} was interrupted before it served`);
    }
  }

  /**
   * Every application's current release, serve starting: taken over as it runs when it still does (an
   * earlier serve stopped, crashed or was upgraded: nothing built, started or recorded), else deployed
   * again — each a restart through the gate, a few building at a time (BRING_BACK_AT_ONCE). Then every
   * run no application serves with (a deploy or a drain an earlier serve did not finish) is stopped.
   * `adoptOnly`: nothing is deployed (stop-apps starts the host only to stop it whole).
   */
  async bringBack(out: (line: string) => void, { adoptOnly = false }: { readonly adoptOnly?: boolean } = {}): Promise<void> {
    const found = await this.o.releases.runs();
    const apps = (await this.o.store.listApps()).filter((a) => a.currentRelease !== null);
    const dead: { app: AppRecord; why: string }[] = [];
    // Taken over all at once: each is one health check, and every application answers meanwhile.
    await Promise.all(
      apps.map(async (app) => {
        const taken = await this.o.releases.adopt(app, await this.currentRelease(app), out).catch((error: Error) => ({ adopted: false as const, why: error.message }));
        if (!taken.adopted) dead.push({ app, why: taken.why });
      }),
    );
    await this.o.releases.discardOthers(found, out);
    if (adoptOnly) return;
    // A bring-back holds its place while it works (checkout, plan, build, its processes' boot up to the first passing
    // check), not while it only waits in the stability window: the next one builds meanwhile.
    await atMost(dead, BRING_BACK_AT_ONCE, async ({ app, why }, free) => {
      out(`==> ${app.name}: ${why}: deployed again`);
      // The release as it was: its variables (changes staged since wait for a restart) and its plan's defaults.
      const asItWas = (current: ReleaseRecord) => ({
        source: { repository: this.o.releases.repository(app.id), commit: current.commit },
        variables: current.variables,
        keepDefaultsOf: current.plan as RunPlan,
      });
      const result = await this.o.releases
        .deploy({
          app,
          cause: 'restart',
          by: 'host',
          ...asItWas(await this.currentRelease(app)),
          links: await this.linkedVariables(app),
          out: (line) => out(`${app.name} | ${line}`),
          // A push accepted before this got the lock made the current release: that one is brought back.
          underLock: async () => asItWas(await this.currentRelease(await this.app(app.id))),
          onPhase: (phase) => {
            if (phase === 'stability window' || phase === 'switch') free();
          },
        })
        .catch((error: Error) => ({ ok: false, code: error.message }));
      out(`==> ${app.name}: ${result.ok ? 'serving again' : `could not be brought back (${'code' in result ? result.code : ''})`}`);
    });
  }
}
