import { describe, expect, it } from 'vitest';
import type { AddonServers } from '../src/addons/addon-servers.js';
import type { AddonProvider, AddonRef } from '../src/addons/provider.js';
import { HostErrors } from '../src/errors.js';
import { HostService, type ServiceOptions } from '../src/service.js';
import type { HostStore, NewAddon } from '../src/store/store.js';

/**
 * Creating and removing an add-on never leaves one side without the other: the
 * provider's server side (database, instance) and the store's record. The store and
 * the provider here record what was asked of them; their real versions are tested on
 * their own (sqlite-store, addons) and together (host-addons).
 */
function world({ storeFails }: { storeFails?: 'create' | 'remove' } = {}) {
  const made = new Map<string, Record<string, string>>();
  const records = new Map<string, NewAddon & { id: string }>();
  const provider: AddonProvider = {
    kind: 'postgresql',
    start: async () => {},
    create: async (ref: AddonRef) => {
      made.set(ref.id, { database: ref.id });
      return { config: { database: ref.id }, variables: {} };
    },
    variables: () => ({}),
    remove: async (ref: AddonRef) => {
      made.delete(ref.id);
    },
    stop: async () => {},
    detach: async () => {},
  };
  const addons = { provider: async () => provider, variables: () => ({}) } as unknown as AddonServers;
  const store = {
    findAddon: async (name: string, org?: string) => [...records.values()].find((r) => (r.name === name || r.id === name) && (org === undefined || r.org === org)),
    createAddon: async (addon: NewAddon) => {
      if (storeFails === 'create') throw HostErrors.ADDON_NAME_TAKEN.create({ message: 'taken in the meantime' });
      const record = { ...addon, id: addon.id as string };
      records.set(record.id, record);
      return { ...record, createdAt: 'now' };
    },
    appsLinkedTo: async () => [],
    removeAddon: async (id: string) => {
      if (storeFails === 'remove') throw new Error('the store is read-only');
      records.delete(id);
    },
  } as unknown as HostStore;
  const service = new HostService({ store, addons } as unknown as ServiceOptions);
  return { service, made, records };
}

describe('add-on creation and removal, all or nothing', () => {
  it('removes the database it made when the record cannot be made', async () => {
    const { service, made, records } = world({ storeFails: 'create' });
    await expect(service.createAddon({ kind: 'postgresql', name: 'db', org: 'acme', zone: 'par' })).rejects.toMatchObject({ code: HostErrors.ADDON_NAME_TAKEN.code });
    expect(made.size).toBe(0);
    expect(records.size).toBe(0);
  });

  it('keeps the record when the store cannot drop it after the database went, so that `addon rm` can be repeated', async () => {
    const { service, made, records } = world();
    await service.createAddon({ kind: 'postgresql', name: 'db', org: 'acme', zone: 'par' });
    expect([made.size, records.size]).toEqual([1, 1]);
    const failing = world({ storeFails: 'remove' });
    await failing.service.createAddon({ kind: 'postgresql', name: 'db', org: 'acme', zone: 'par' });
    await expect(failing.service.removeAddon('db', 'acme')).rejects.toThrow('read-only');
    expect([failing.made.size, failing.records.size]).toEqual([0, 1]);
    await service.removeAddon('db', 'acme');
    expect([made.size, records.size]).toEqual([0, 0]);
  });
});
