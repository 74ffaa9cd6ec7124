/** Ceph's health as `ceph health` reports it. */
export interface CephHealth {
  readonly status: 'HEALTH_OK' | 'HEALTH_WARN' | 'HEALTH_ERR' | string;
  /** Each check's code and summary ("MON_DISK_LOW: mon a is low on available space"). */
  readonly checks: readonly string[];
}

/** Where the storage add-ons' gateway runs and how the host administers it: this machine's cluster, or a swarm's service. */
export interface StorageGateway {
  /** Makes the cluster on first start, and starts it. */
  start(): Promise<void>;
  /** radosgw-admin as the cluster's administrator: its JSON output parsed. */
  rgwAdmin(args: readonly string[]): Promise<unknown>;
  health(): Promise<CephHealth>;
  /** The gateway's address as a linked release reaches it. */
  address(): { readonly host: string; readonly port: string };
  /** For messages: where its data and logs are. */
  readonly where: string;
  stop(): Promise<void>;
  detach(): void;
}
