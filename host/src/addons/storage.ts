import { join } from 'node:path';
import { HostErrors } from '../errors.js';
import { ADDON_ID } from '../store/store.js';
import type { Supervisor } from '../supervision/supervisor.js';
import { CephCluster } from './ceph-cluster.js';
import type { AddonProvider, AddonRef, CreatedAddon, ExistingAddon } from './provider.js';
import type { ServerAccount } from './server-process.js';
import type { CephHealth, StorageGateway } from './storage-gateway.js';

const LOOPBACK = '127.0.0.1';
/** The one user of each add-on's tenant: the tenant is what keeps add-ons apart. */
const OWNER = 'owner';
/** Health checks that mean a write would fail: a new add-on is refused while one holds. */
const BLOCKING_CHECKS = /^(OSD_FULL|POOL_FULL|MON_DISK_CRIT|OSD_DOWN|PG_AVAILABILITY)\b/;

export interface StorageProviderOptions {
  /** `<data>/addons/storage`: the cluster is made in its `ceph/` folder. */
  readonly dir: string;
  /** The OSD's file size in MiB (settings.json's `storage.osdMb`), fixed when the cluster is made. */
  readonly osdMb?: number;
  readonly account?: ServerAccount | null;
  readonly supervisor?: Supervisor;
}

/**
 * Object storage add-ons on Ceph's S3 gateway: each add-on is the one user of an RGW
 * tenant of its own, made by radosgw-admin, which generates its keys. A tenant's
 * buckets are its own namespace, so two add-ons may each have a bucket of one name,
 * and another tenant's bucket answers AccessDenied; keys are object names, never file
 * paths. The link injects the key pair and the gateway's address; the customer names
 * the bucket and the endpoint, as the specification's Active Storage recipe does, and
 * makes the bucket with any S3 client. Where the gateway runs is the subclass's.
 */
export abstract class TenantStorage implements AddonProvider {
  readonly kind = 'storage' as const;
  protected abstract readonly gateway: StorageGateway;
  /** What each add-on's config records besides its tenant and keys (a swarm's: its engine). */
  protected readonly extraConfig: Readonly<Record<string, string>> = {};

  async start(existing: readonly ExistingAddon[] = []): Promise<void> {
    const older = existing.filter((a) => a.config.tenant === undefined);
    if (older.length > 0) {
      throw HostErrors.ADDON_STORAGE_MOVE.create({
        message: `the storage add-ons ${older.map((a) => a.id).join(', ')} keep their objects in the files of the fake S3 server an earlier runplan-host ran (s3rver), which this one no longer runs`,
        details: { addons: older.map((a) => a.id) },
      });
    }
    await this.gateway.start();
  }

  async create(addon: AddonRef): Promise<CreatedAddon> {
    await this.gateway.start();
    await this.assertWritable();
    const tenant = tenantOf(addon.id);
    return this.made(tenant, (await this.gateway.rgwAdmin(['user', 'create', '--tenant', tenant, '--uid', OWNER, '--display-name', addon.id])) as RgwUser);
  }

  /**
   * The add-on's user as create() makes it, or, when it is there already (a `storage move` run again
   * after it stopped half-way), its keys as they are: what it stored in the gateway stays its.
   */
  async ensure(addon: AddonRef): Promise<CreatedAddon> {
    const tenant = tenantOf(addon.id);
    await this.gateway.start();
    let found: RgwUser;
    try {
      found = (await this.gateway.rgwAdmin(['user', 'info', '--tenant', tenant, '--uid', OWNER])) as RgwUser;
    } catch (error) {
      if (/no user info saved/.test(String((error as { stderr?: string }).stderr ?? ''))) return this.create(addon);
      throw error;
    }
    return this.made(tenant, found);
  }

  private made(tenant: string, user: RgwUser): CreatedAddon {
    const key = user.keys?.find((k) => k.user === `${tenant}$${OWNER}`);
    if (!key) throw new Error(`radosgw-admin made the user ${tenant}$${OWNER} without a key`);
    const { host, port } = this.gateway.address();
    const config = { ...this.extraConfig, host, port, tenant, keyId: key.access_key, secret: key.secret_key };
    return { config, variables: this.variables(config) };
  }

  variables(config: Readonly<Record<string, string>>): Record<string, string> {
    const { host = LOOPBACK, port = '', keyId = '', secret = '' } = config;
    return { STORAGE_ADDON_HOST: `${host}:${port}`, STORAGE_ADDON_KEY_ID: keyId, STORAGE_ADDON_KEY_SECRET: secret };
  }

  /** Removes the add-on's user with its buckets and objects (radosgw-admin's --purge-data). */
  async remove(addon: AddonRef, config: Readonly<Record<string, string>>): Promise<void> {
    const tenant = config.tenant ?? tenantOf(addon.id);
    if (tenant !== tenantOf(addon.id)) throw HostErrors.INPUT_USAGE.create({ message: `the storage add-on ${addon.id} names the tenant ${tenant}, not its own`, details: { addonId: addon.id } });
    await this.gateway.start();
    try {
      await this.gateway.rgwAdmin(['user', 'rm', '--tenant', tenant, '--uid', OWNER, '--purge-data']);
    } catch (error) {
      // Removed already (an earlier remove stopped after radosgw-admin): nothing is left to remove.
      if (!/user does not exist/.test(String((error as { stderr?: string }).stderr ?? (error as Error).message))) throw error;
    }
  }

  /** Ceph's health: `status` shows it, and create() refuses while a write would fail. */
  health(): Promise<CephHealth> {
    return this.gateway.health();
  }

  async stop(): Promise<void> {
    await this.gateway.stop();
  }

  async detach(): Promise<void> {
    this.gateway.detach();
  }

  private async assertWritable(): Promise<void> {
    const health = await this.gateway.health();
    const blocking = health.checks.filter((c) => BLOCKING_CHECKS.test(c));
    if (health.status === 'HEALTH_ERR' || blocking.length > 0) {
      throw HostErrors.ADDON_STORE_UNHEALTHY.create({
        message: `the storage add-ons' Ceph cluster reports ${health.status}: ${(blocking.length > 0 ? blocking : health.checks).join('; ')}`,
        file: this.gateway.where,
        details: { status: health.status, checks: health.checks },
      });
    }
  }
}

/** Storage add-ons on this machine: the Ceph cluster under `<data>/addons/storage/ceph/`, on loopback. */
export class StorageProvider extends TenantStorage {
  readonly cluster: CephCluster;
  protected readonly gateway: StorageGateway;

  constructor(options: StorageProviderOptions) {
    super();
    this.cluster = new CephCluster({
      dir: join(options.dir, 'ceph'),
      ...(options.osdMb === undefined ? {} : { osdMb: options.osdMb }),
      ...(options.account === undefined ? {} : { account: options.account }),
      ...(options.supervisor ? { supervisor: options.supervisor } : {}),
    });
    this.gateway = this.cluster;
  }
}

interface RgwUser {
  readonly keys?: readonly { readonly user: string; readonly access_key: string; readonly secret_key: string }[];
}

/** The add-on's tenant: its id, whose `-` RGW's tenant names do not take. */
export function tenantOf(addonId: string): string {
  if (!ADDON_ID.test(addonId)) throw HostErrors.INPUT_USAGE.create({ message: `${addonId} is not an add-on id (addon_<uuid>)`, details: { addonId } });
  return addonId.replaceAll('-', '_');
}
