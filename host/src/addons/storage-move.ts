import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { HostErrors } from '../errors.js';
import type { HostPaths } from '../paths.js';
import { readSettings } from '../settings.js';
import { openHostStore } from '../store/open-store.js';
import type { AddonRecord, HostStore } from '../store/store.js';
import { stopByIdentity } from '../supervision/adopted-process.js';
import { liveProcessOf } from '../supervision/identity-file.js';
import { removeAddonAccount } from './addon-accounts.js';
import { type CopyTotals, copyIntoGateway } from './bucket-copy.js';
import { gatewayAccess } from './gateway-objects.js';
import { readS3rverFolder } from './s3rver-folder.js';
import { StorageProvider } from './storage.js';

interface MovedAddon extends CopyTotals {
  readonly id: string;
  readonly name: string;
  readonly org: string;
  /** The applications linked to it: they get its new keys and port when they are deployed again. */
  readonly apps: readonly string[];
}

export interface MoveResult {
  readonly moved: readonly MovedAddon[];
  /** Add-ons an earlier run moved but stopped before removing their old folder: removed now. */
  readonly cleared: readonly string[];
}

/**
 * `runplan-host storage move` (serve stopped): each storage add-on an earlier host kept in s3rver's
 * folder (`<data>/addons/storage/<id>/objects/`, its config without `tenant`) moved into the Ceph
 * gateway: its user made (or found again), its buckets and objects put and checked (bucket-copy.ts),
 * then its new config stored, and only then its old folder and account removed. A run that stops
 * half-way leaves the old folder as it was; the next run finds what it had copied and goes on.
 */
export async function moveStorageAddons(paths: HostPaths, log: (line: string) => void): Promise<MoveResult> {
  const settings = await readSettings(paths);
  const store = await openHostStore(paths);
  const storageDir = join(paths.addonsDir, 'storage');
  const oldFolder = (addon: AddonRecord) => join(storageDir, addon.id);
  try {
    const addons = (await store.listAddons()).filter((a) => a.provider === 'storage');
    const cleared: string[] = [];
    // Its config stored already: its objects were checked in the gateway before, so what is left of s3rver's goes.
    for (const addon of addons.filter((a) => a.config.tenant !== undefined && existsSync(oldFolder(a)))) {
      await removeOld(addon, oldFolder(addon));
      cleared.push(addon.name);
      log(`==> the storage add-on ${addon.name}: moved by an earlier run; its s3rver folder removed now`);
    }
    const older = addons.filter((a) => a.config.tenant === undefined);
    if (older.length === 0) return { moved: [], cleared };
    const provider = new StorageProvider({ dir: storageDir, ...(settings.storage ?? {}) });
    const moved: MovedAddon[] = [];
    try {
      await provider.start();
      log(`==> the Ceph cluster of the storage add-ons answers (S3 gateway on 127.0.0.1:${provider.cluster.gatewayPort})`);
      for (const addon of older) moved.push(await moveOne(addon, oldFolder(addon), provider, store, log));
    } finally {
      await provider.stop();
    }
    return { moved, cleared };
  } finally {
    await store.close();
  }
}

async function moveOne(addon: AddonRecord, folder: string, provider: StorageProvider, store: HostStore, log: (line: string) => void): Promise<MovedAddon> {
  let totals: CopyTotals;
  try {
    // An s3rver an earlier serve left running would take writes the copy would not see: stopped first (its keys and port end with the move anyway).
    const running = await liveProcessOf(join(folder, 'server.identity'));
    if (running !== undefined) {
      log(`==> the storage add-on ${addon.name}: stopping its s3rver (PID ${running.identity.pid}) left running by an earlier serve`);
      await stopByIdentity(running.identity, 20_000);
    }
    const made = await provider.ensure(addon);
    totals = await copyIntoGateway(gatewayAccess(made.config), await readS3rverFolder(join(folder, 'objects')));
    await store.changeAddonConfig(addon.id, made.config);
  } catch (error) {
    const cause = error as { stderr?: string; message?: string };
    throw HostErrors.ADDON_STORAGE_MOVE_FAILED.create({
      message: `the storage add-on ${addon.name} (${addon.id}) could not be moved into the S3 gateway: ${String(cause.stderr || cause.message || error)
        .trim()
        .split('\n')
        .slice(-3)
        .join(' | ')}`,
      file: folder,
      details: { addonId: addon.id },
      cause: error,
    });
  }
  await removeOld(addon, folder);
  const apps = (await store.appsLinkedTo(addon.id)).map((a) => a.name);
  const again = totals.alreadyThere > 0 ? ` (${totals.alreadyThere} put by an earlier run)` : '';
  log(`==> the storage add-on ${addon.name}: ${totals.buckets} bucket(s), ${totals.objects} object(s)${again}, ${totals.bytes} bytes; counts and ETags checked; s3rver's folder removed`);
  return { id: addon.id, name: addon.name, org: addon.org, apps, ...totals };
}

/** s3rver's folder of the add-on (its objects, config and log), then its own account, which nothing runs as any more. */
async function removeOld(addon: AddonRecord, folder: string): Promise<void> {
  await rm(folder, { recursive: true, force: true });
  await removeAddonAccount('storage', addon.id);
}
