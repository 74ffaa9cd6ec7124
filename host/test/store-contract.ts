/**
 * What every HostStore must do, whatever holds the data: each implementation's
 * test file calls describeHostStore with a way to open a fresh, empty store.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { HostErrors } from '../src/errors.js';
import type { HostStore, NewAddon, NewApp, NewRelease, StoreClock } from '../src/store/store.js';

/** A clock the test moves by hand: every recorded time is known, nothing sleeps. */
export class ManualClock implements StoreClock {
  private current: number;
  constructor(start = Date.UTC(2026, 0, 1, 12, 0, 0)) {
    this.current = start;
  }
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): string {
    this.current += ms;
    return this.now().toISOString();
  }
}

export interface OpenOptions {
  readonly clock: StoreClock;
}

const app = (name: string, org = 'orga_acme'): NewApp => ({ name, org, zone: 'par', type: 'node' });
const release = (appId: string, commit = 'a'.repeat(40)): NewRelease => ({ appId, cause: 'push', commit, by: 'key_0123456789ab', variables: { PORT_NAME: 'web' } });
const addon = (name: string, org = 'orga_acme', provider: NewAddon['provider'] = 'postgresql'): NewAddon => ({
  name,
  org,
  provider,
  zone: 'par',
  config: { password: `secret-of-${name}`, port: '5432' },
});
const key = (org: string, body = 'AAAAC3NzaC1lZDI1NTE5AAAAIOne') => ({ org, publicKey: `ssh-ed25519 ${body}`, fingerprint: `SHA256:${body}`, comment: 'me@laptop' });

/** The contract tests, run against the stores `open` makes (a new, empty one per test). */
export function describeHostStore(name: string, open: (options: OpenOptions) => Promise<HostStore>): void {
  describe(`HostStore contract: ${name}`, () => {
    let opened: HostStore[] = [];
    let clock: ManualClock;
    async function fresh(): Promise<HostStore> {
      clock = new ManualClock();
      const store = await open({ clock });
      opened.push(store);
      return store;
    }
    afterEach(async () => {
      await Promise.all(opened.map((s) => s.close()));
      opened = [];
    });

    describe('applications', () => {
      it('creates an application with an app_<uuid> id, the time and no release, and finds it by id and by name', async () => {
        const store = await fresh();
        const created = await store.createApp(app('web'));
        expect(created).toEqual({
          id: expect.stringMatching(/^app_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
          name: 'web',
          org: 'orga_acme',
          zone: 'par',
          type: 'node',
          createdAt: clock.now().toISOString(),
          currentRelease: null,
          dedicatedBuildInstance: false,
        });
        expect(await store.findApp(created.id)).toEqual(created);
        expect(await store.findApp('web')).toEqual(created);
        expect(await store.findApp('web', 'orga_acme')).toEqual(created);
        expect(await store.findApp('web', 'orga_other')).toBeUndefined();
        expect(await store.findApp(created.id, 'orga_other')).toBeUndefined();
        expect(await store.findApp('nothing')).toBeUndefined();
      });

      it('turns the dedicated build instance on and off, and refuses an application it does not have', async () => {
        const store = await fresh();
        const created = await store.createApp(app('web'));
        expect(await store.setDedicatedBuildInstance(created.id, true)).toEqual({ ...created, dedicatedBuildInstance: true });
        expect((await store.findApp(created.id))?.dedicatedBuildInstance).toBe(true);
        expect((await store.listApps())[0]?.dedicatedBuildInstance).toBe(true);
        expect((await store.setDedicatedBuildInstance(created.id, false)).dedicatedBuildInstance).toBe(false);
        await expect(store.setDedicatedBuildInstance('app_00000000-0000-4000-8000-000000000000', true)).rejects.toMatchObject({ code: HostErrors.APP_NOT_FOUND.code });
      });

      it('refuses a second application of one name in one organization, naming both', async () => {
        const store = await fresh();
        await store.createApp(app('web'));
        const refused = store.createApp({ ...app('web'), zone: 'mtl' });
        await expect(refused).rejects.toMatchObject({ code: HostErrors.APP_NAME_TAKEN.code, message: expect.stringMatching(/orga_acme.*web/) });
        expect(await store.listApps()).toHaveLength(1);
      });

      it('lets two organizations use one name; the name alone is then ambiguous and refused', async () => {
        const store = await fresh();
        const a = await store.createApp(app('web', 'orga_a'));
        const b = await store.createApp(app('web', 'orga_b'));
        expect(a.id).not.toBe(b.id);
        await expect(store.findApp('web')).rejects.toMatchObject({ code: HostErrors.INPUT_USAGE.code, fix: expect.stringContaining('--org') });
        expect(await store.findApp('web', 'orga_b')).toEqual(b);
        expect(await store.findApp(a.id)).toEqual(a);
      });

      it('lists applications by organization and name', async () => {
        const store = await fresh();
        const b2 = await store.createApp(app('zeta', 'orga_b'));
        const a1 = await store.createApp(app('beta', 'orga_a'));
        const b1 = await store.createApp(app('alpha', 'orga_b'));
        expect(await store.listApps()).toEqual([a1, b1, b2]);
        expect(await store.listApps('orga_b')).toEqual([b1, b2]);
        expect(await store.listApps('orga_none')).toEqual([]);
      });

      it('orders names byte by byte (upper case first, "_" before letters), whatever the database’s locale', async () => {
        const store = await fresh();
        for (const name of ['b', 'ab', 'B', 'a_c']) await store.createApp(app(name));
        expect((await store.listApps()).map((a) => a.name)).toEqual(['B', 'a_c', 'ab', 'b']);
        const { id } = await store.createApp(app('vars'));
        await store.changeVariables(id, { b: '1', ab: '2', B: '3', a_c: '4' }, []);
        expect(Object.keys(await store.variables(id))).toEqual(['B', 'a_c', 'ab', 'b']);
      });
    });

    describe('variables', () => {
      it('sets, replaces and removes variables of one application in one change', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        const other = await store.createApp(app('other'));
        expect(await store.variables(web.id)).toEqual({});
        await store.changeVariables(web.id, { A: '1', B: 'two words', C: '' }, []);
        await store.changeVariables(web.id, { A: 'changed' }, ['B', 'NEVER_SET']);
        expect(await store.variables(web.id)).toEqual({ A: 'changed', C: '' });
        expect(await store.variables(other.id)).toEqual({});
      });

      it('refuses a name both set and removed, and an unknown application, changing nothing', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        await store.changeVariables(web.id, { A: '1' }, []);
        await expect(store.changeVariables(web.id, { A: '2' }, ['A'])).rejects.toMatchObject({ code: HostErrors.INPUT_VARIABLE.code, variable: 'A' });
        await expect(store.changeVariables('app_unknown', { A: '1' }, [])).rejects.toMatchObject({ code: HostErrors.APP_NOT_FOUND.code });
        expect(await store.variables(web.id)).toEqual({ A: '1' });
      });

      it('ends as a Map would after any sequence of changes', async () => {
        const store = await fresh();
        const name = fc.constantFrom('A', 'B', 'C', 'PATH', '__proto__', 'constructor', 'a');
        const value = fc.oneof(fc.string(), fc.constantFrom('', 'x=y', 'line\nbreak', 'é ✓ 日本'));
        const change = fc.record({ set: fc.dictionary(name, value, { maxKeys: 3 }), remove: fc.uniqueArray(name, { maxLength: 3 }) });
        let runs = 0;
        await fc.assert(
          fc.asyncProperty(fc.array(change, { maxLength: 8 }), async (changes) => {
            const { id } = await store.createApp(app(`app${runs++}`));
            const model = new Map<string, string>();
            for (const { set, remove } of changes) {
              const conflict = remove.some((n) => Object.hasOwn(set, n));
              const done = store.changeVariables(id, set, remove);
              if (conflict) {
                await expect(done).rejects.toMatchObject({ code: HostErrors.INPUT_VARIABLE.code });
                continue;
              }
              await done;
              for (const [n, v] of Object.entries(set)) model.set(n, v);
              for (const n of remove) model.delete(n);
            }
            const stored = await store.variables(id);
            expect(new Map(Object.entries(stored))).toEqual(model);
          }),
          { numRuns: 60 },
        );
      });
    });

    describe('SSH keys', () => {
      it('adds a key with a key_<12 hex> id and the time, finds, lists and removes it', async () => {
        const store = await fresh();
        const added = await store.addKey(key('orga_a'));
        expect(added).toEqual({ id: expect.stringMatching(/^key_[0-9a-f]{12}$/), ...key('orga_a'), addedAt: clock.now().toISOString() });
        clock.advance(1000);
        const second = await store.addKey(key('orga_a', 'AAAASecond'));
        const elsewhere = await store.addKey(key('orga_b'));
        expect(await store.findKey(added.id)).toEqual(added);
        expect(await store.listKeys('orga_a')).toEqual([added, second]);
        expect(await store.listKeys()).toEqual([added, second, elsewhere]);
        expect(await store.removeKey(added.id)).toBe(true);
        expect(await store.removeKey(added.id)).toBe(false);
        expect(await store.findKey(added.id)).toBeUndefined();
        expect(await store.listKeys('orga_a')).toEqual([second]);
      });

      it('refuses one public key twice in one organization (naming the key kept), not in two', async () => {
        const store = await fresh();
        const first = await store.addKey(key('orga_a'));
        await expect(store.addKey({ ...key('orga_a'), comment: 'other' })).rejects.toMatchObject({ code: HostErrors.KEY_TAKEN.code, message: expect.stringContaining(first.id) });
        await store.addKey(key('orga_b'));
        expect(await store.listKeys()).toHaveLength(2);
      });
    });

    describe('releases', () => {
      it('numbers releases 1, 2… per application and records what they were started with', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        const other = await store.createApp(app('other'));
        const first = await store.beginRelease(release(web.id));
        expect(first).toEqual({
          appId: web.id,
          number: 1,
          cause: 'push',
          commit: 'a'.repeat(40),
          by: 'key_0123456789ab',
          status: 'deploying',
          variables: { PORT_NAME: 'web' },
          links: [],
          plan: null,
          planDigest: null,
          port: null,
          errorCode: null,
          startedAt: clock.now().toISOString(),
          finishedAt: null,
        });
        const second = await store.beginRelease({ ...release(web.id), cause: 'restart', by: 'cli', links: ['db-main', 'cache'] });
        expect(second.number).toBe(2);
        expect((await store.release(web.id, 2))?.links).toEqual(['db-main', 'cache']);
        expect((await store.beginRelease(release(other.id))).number).toBe(1);
        expect((await store.listReleases(web.id)).map((r) => [r.number, r.cause])).toEqual([
          [2, 'restart'],
          [1, 'push'],
        ]);
        expect(await store.release(web.id, 1)).toEqual(first);
        expect(await store.release(web.id, 3)).toBeUndefined();
        await expect(store.beginRelease(release('app_unknown'))).rejects.toMatchObject({ code: HostErrors.APP_NOT_FOUND.code });
      });

      it("keeps a release's variables as they were when it began", async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        await store.changeVariables(web.id, { SECRET: 's1' }, []);
        const begun = await store.beginRelease({ ...release(web.id), variables: await store.variables(web.id) });
        await store.changeVariables(web.id, { SECRET: 's2' }, []);
        expect((await store.release(web.id, begun.number))?.variables).toEqual({ SECRET: 's1' });
      });

      it('a succeeded release becomes the current one; a failed one does not', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        await store.beginRelease(release(web.id));
        const finishedAt = clock.advance(5000);
        const plan = { runplanVersion: '1.0.0', processes: [{ name: 'web' }] };
        const ok = await store.finishRelease(web.id, 1, { status: 'succeeded', plan, planDigest: 'sha256:abc', port: 41234 });
        expect(ok).toMatchObject({ status: 'succeeded', plan, planDigest: 'sha256:abc', port: 41234, errorCode: null, finishedAt });
        expect((await store.findApp(web.id))?.currentRelease).toBe(1);

        await store.beginRelease(release(web.id, 'b'.repeat(40)));
        const failed = await store.finishRelease(web.id, 2, { status: 'failed', errorCode: 'RUNPLAN_E_HEALTH_BAD_STATUS' });
        expect(failed).toMatchObject({ status: 'failed', plan: null, port: null, errorCode: 'RUNPLAN_E_HEALTH_BAD_STATUS' });
        expect((await store.findApp(web.id))?.currentRelease).toBe(1);
      });

      it('refuses to finish a release twice or one that does not exist', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        await store.beginRelease(release(web.id));
        await store.finishRelease(web.id, 1, { status: 'failed', errorCode: 'RUNPLAN_E_X' });
        await expect(store.finishRelease(web.id, 1, { status: 'succeeded', port: 1 })).rejects.toMatchObject({ code: HostErrors.RELEASE_ALREADY_FINISHED.code });
        await expect(store.finishRelease(web.id, 9, { status: 'succeeded' })).rejects.toMatchObject({ code: HostErrors.RELEASE_NOT_FOUND.code });
        expect(await store.release(web.id, 1)).toMatchObject({ status: 'failed', errorCode: 'RUNPLAN_E_X' });
        expect((await store.findApp(web.id))?.currentRelease).toBeNull();
      });

      it('marks the releases left deploying as interrupted, and only those', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        const other = await store.createApp(app('other'));
        await store.beginRelease(release(web.id));
        await store.finishRelease(web.id, 1, { status: 'succeeded', port: 40000 });
        await store.beginRelease(release(web.id));
        await store.beginRelease(release(other.id));
        const at = clock.advance(60_000);
        expect(await store.failUnfinishedReleases()).toBe(2);
        expect(await store.release(web.id, 1)).toMatchObject({ status: 'succeeded', errorCode: null });
        for (const [appId, number] of [
          [web.id, 2],
          [other.id, 1],
        ] as const) {
          expect(await store.release(appId, number)).toMatchObject({ status: 'failed', errorCode: 'RUNPLAN_HOST_E_DEPLOY_INTERRUPTED', finishedAt: at });
        }
        expect((await store.findApp(web.id))?.currentRelease).toBe(1);
        expect(await store.failUnfinishedReleases()).toBe(0);
      });

      it('never gives two concurrent releases of one application the same number', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        const begun = await Promise.all(Array.from({ length: 20 }, () => store.beginRelease(release(web.id))));
        expect(begun.map((r) => r.number).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      });
    });

    describe('add-ons', () => {
      it('records an add-on with an addon_<uuid> id, the time and its config, and finds it by id and by name', async () => {
        const store = await fresh();
        const created = await store.createAddon(addon('db'));
        expect(created).toEqual({
          id: expect.stringMatching(/^addon_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
          name: 'db',
          org: 'orga_acme',
          provider: 'postgresql',
          zone: 'par',
          createdAt: clock.now().toISOString(),
          config: { password: 'secret-of-db', port: '5432' },
        });
        expect(await store.findAddon(created.id)).toEqual(created);
        expect(await store.findAddon('db')).toEqual(created);
        expect(await store.findAddon('db', 'orga_acme')).toEqual(created);
        expect(await store.findAddon('db', 'orga_other')).toBeUndefined();
        expect(await store.findAddon(created.id, 'orga_other')).toBeUndefined();
        expect(await store.findAddon('nothing')).toBeUndefined();
      });

      it('keeps the id the caller gives (the provider made its side first under it)', async () => {
        const store = await fresh();
        const id = 'addon_00000000-0000-4000-8000-0000000000aa';
        expect((await store.createAddon({ ...addon('cache', 'orga_acme', 'redis'), id })).id).toBe(id);
        expect((await store.findAddon(id))?.provider).toBe('redis');
      });

      it('refuses a second add-on of one name in one organization; two organizations may share a name, then ambiguous alone', async () => {
        const store = await fresh();
        await store.createAddon(addon('db'));
        await expect(store.createAddon({ ...addon('db'), provider: 'redis' })).rejects.toMatchObject({
          code: HostErrors.ADDON_NAME_TAKEN.code,
          message: expect.stringMatching(/orga_acme.*db/),
        });
        const other = await store.createAddon(addon('db', 'orga_other'));
        await expect(store.findAddon('db')).rejects.toMatchObject({ code: HostErrors.INPUT_USAGE.code });
        expect(await store.findAddon('db', 'orga_other')).toEqual(other);
        expect((await store.listAddons()).map((a) => [a.org, a.name])).toEqual([
          ['orga_acme', 'db'],
          ['orga_other', 'db'],
        ]);
        expect((await store.listAddons('orga_other')).map((a) => a.id)).toEqual([other.id]);
      });

      it('links add-ons to an application (once), lists them by name, and unlinks them', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        const db = await store.createAddon(addon('db'));
        const cache = await store.createAddon(addon('cache', 'orga_acme', 'redis'));
        expect(await store.linkAddon(web.id, db.id)).toBe(true);
        expect(await store.linkAddon(web.id, cache.id)).toBe(true);
        expect(await store.linkAddon(web.id, db.id)).toBe(false);
        expect((await store.linksOf(web.id)).map((a) => a.name)).toEqual(['cache', 'db']);
        const api = await store.createApp(app('api'));
        await store.linkAddon(api.id, db.id);
        expect((await store.appsLinkedTo(db.id)).map((a) => a.name)).toEqual(['api', 'web']);
        expect(await store.unlinkAddon(web.id, db.id)).toBe(true);
        expect(await store.appsLinkedTo(db.id)).toEqual([api]);
        expect(await store.unlinkAddon(web.id, db.id)).toBe(false);
        expect(await store.linksOf(web.id)).toEqual([cache]);
      });

      it('links applications of one organization (once), keeps what each exposes apart from its own variables, and unlinks them', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        const api = await store.createApp(app('api'));
        const elsewhere = await store.createApp({ ...app('api'), org: 'orga_other' });
        await store.changeVariables(api.id, { API_URL: 'http://api' }, [], 'exposed');
        await store.changeVariables(api.id, { OWN: 'kept' }, []);
        expect(await store.variables(api.id, 'exposed')).toEqual({ API_URL: 'http://api' });
        expect(await store.variables(api.id)).toEqual({ OWN: 'kept' });
        expect(await store.linkApp(web.id, api.id)).toBe(true);
        expect(await store.linkApp(web.id, api.id)).toBe(false);
        expect(await store.appLinksOf(web.id)).toEqual([api]);
        await expect(store.linkApp(web.id, elsewhere.id)).rejects.toMatchObject({ code: HostErrors.LINK_ORG_MISMATCH.code });
        await expect(store.linkApp(web.id, web.id)).rejects.toMatchObject({ code: HostErrors.INPUT_USAGE.code });
        expect(await store.unlinkApp(web.id, api.id)).toBe(true);
        expect(await store.appLinksOf(web.id)).toEqual([]);
      });

      it('refuses a link across organizations, to an unknown add-on or application, linking nothing', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        const foreign = await store.createAddon(addon('db', 'orga_other'));
        await expect(store.linkAddon(web.id, foreign.id)).rejects.toMatchObject({
          code: HostErrors.ADDON_ORG_MISMATCH.code,
          message: expect.stringMatching(/orga_acme.*orga_other/),
        });
        await expect(store.linkAddon(web.id, 'addon_00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: HostErrors.ADDON_NOT_FOUND.code });
        await expect(store.linkAddon('app_00000000-0000-4000-8000-000000000000', foreign.id)).rejects.toMatchObject({ code: HostErrors.APP_NOT_FOUND.code });
        expect(await store.linksOf(web.id)).toEqual([]);
      });

      it('refuses to remove an add-on while linked, naming the applications; removes it once unlinked', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        const worker = await store.createApp(app('worker'));
        const db = await store.createAddon(addon('db'));
        await store.linkAddon(web.id, db.id);
        await store.linkAddon(worker.id, db.id);
        await expect(store.removeAddon(db.id)).rejects.toMatchObject({
          code: HostErrors.ADDON_LINKED.code,
          message: expect.stringMatching(/the add-on db is linked to web, worker/),
          fix: 'Unlink it first, then remove it: runplan-host unlink-addon db --app web; runplan-host unlink-addon db --app worker.',
          details: {
            addon: 'db',
            apps: [
              { id: web.id, name: 'web' },
              { id: worker.id, name: 'worker' },
            ],
          },
        });
        expect(await store.findAddon(db.id)).toEqual(db);
        await store.unlinkAddon(web.id, db.id);
        await store.unlinkAddon(worker.id, db.id);
        await store.removeAddon(db.id);
        expect(await store.findAddon(db.id)).toBeUndefined();
        await expect(store.removeAddon(db.id)).rejects.toMatchObject({ code: HostErrors.ADDON_NOT_FOUND.code });
      });

      it("replaces an add-on's config (a restore moved its server to another port); ADDON_NOT_FOUND for no add-on", async () => {
        const store = await fresh();
        const db = await store.createAddon(addon('db'));
        await store.changeAddonConfig(db.id, { ...db.config, port: '6543' });
        expect(await store.findAddon(db.id)).toEqual({ ...db, config: { ...db.config, port: '6543' } });
        await expect(store.changeAddonConfig('addon_00000000-0000-4000-8000-000000000000', {})).rejects.toMatchObject({ code: HostErrors.ADDON_NOT_FOUND.code });
      });
    });

    describe('custom domains', () => {
      it('records a domain once across the whole host, gives back who has it, lists by application and organization, and forgets it', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        const api = await store.createApp(app('api'));
        const other = await store.createApp(app('web', 'orga_other'));
        const added = await store.addDomain(web.id, 'shop.example.com');
        expect(added).toEqual({ domain: { name: 'shop.example.com', appId: web.id, addedAt: clock.now().toISOString() }, added: true });
        clock.advance(1_000);
        // Another application, of the organization or another: nothing recorded, the holder given back.
        expect(await store.addDomain(other.id, 'shop.example.com')).toEqual({ domain: added.domain, added: false });
        expect(await store.addDomain(web.id, 'shop.example.com')).toEqual({ domain: added.domain, added: false });
        await store.addDomain(api.id, 'api.example.com');
        await store.addDomain(other.id, 'b.example.org');
        expect((await store.listDomains()).map((d) => d.name)).toEqual(['api.example.com', 'b.example.org', 'shop.example.com']);
        expect((await store.listDomains({ appId: web.id })).map((d) => d.name)).toEqual(['shop.example.com']);
        expect((await store.listDomains({ org: 'orga_acme' })).map((d) => d.name)).toEqual(['api.example.com', 'shop.example.com']);
        expect(await store.findDomain('shop.example.com')).toEqual(added.domain);
        expect(await store.removeDomain('shop.example.com')).toEqual(added.domain);
        expect(await store.removeDomain('shop.example.com')).toBeUndefined();
        expect(await store.findDomain('shop.example.com')).toBeUndefined();
        // Free again: another application takes it.
        expect((await store.addDomain(other.id, 'shop.example.com')).added).toBe(true);
      });

      it('refuses a domain for an application it does not have', async () => {
        const store = await fresh();
        await expect(store.addDomain('app_00000000-0000-4000-8000-000000000000', 'a.example.com')).rejects.toMatchObject({ code: HostErrors.APP_NOT_FOUND.code });
        expect(await store.listDomains()).toEqual([]);
      });
    });

    describe('deploy logs', () => {
      it('returns the lines of a release in the order they were appended, over several calls', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        await store.beginRelease(release(web.id));
        await store.beginRelease(release(web.id));
        await store.appendLog(web.id, 1, ['plan: node 20', 'build: npm ci']);
        await store.appendLog(web.id, 1, []);
        await store.appendLog(web.id, 2, ['other release']);
        await store.appendLog(web.id, 1, ['', 'health: GET / 200']);
        expect(await store.releaseLog(web.id, 1)).toEqual(['plan: node 20', 'build: npm ci', '', 'health: GET / 200']);
        expect(await store.releaseLog(web.id, 2)).toEqual(['other release']);
        expect(await store.releaseLog(web.id, 3)).toEqual([]);
      });

      it('refuses lines for a release that does not exist', async () => {
        const store = await fresh();
        const web = await store.createApp(app('web'));
        await expect(store.appendLog(web.id, 1, ['x'])).rejects.toMatchObject({ code: HostErrors.RELEASE_NOT_FOUND.code });
        expect(await store.releaseLog(web.id, 1)).toEqual([]);
      });
    });
  });
}
