import { runProgram } from 'runplan/process';
import { HostErrors } from '../errors.js';
import { APP_UIDS } from './app-users.js';

/**
 * The machine's network is shared by the releases (the host health-checks each
 * on a loopback port, and they reach their add-ons there), so a port a release
 * listens on is reachable by every process of the machine. This guard, a table
 * of the kernel's nftables of this host's own, refuses a connection to a
 * release's port from any application's user but that release's own (reset at
 * once: a flood never reaches the release), while root — serve, the health
 * check, the edge's way in — and everything else of the machine are untouched.
 * Debian's `nft` applies each change as one transaction.
 */
export class LoopbackGuard {
  private started = false;

  /** `table`: letters, digits and "_" (this host's own: two hosts of one machine have two). */
  constructor(private readonly table: string) {
    if (!/^[a-z][a-z0-9_]{0,60}$/.test(table)) throw new Error(`not an nftables table name: ${table}`);
  }

  /**
   * Makes the table (again: one left by an earlier serve is replaced in the same transaction), holding the
   * ports of `held` (releases an earlier serve started, taken over now: they are never unguarded meanwhile),
   * and closing `releasesNetwork` (a CIDR) to the applications' users of the machine's network.
   */
  async start(held: readonly { readonly port: number; readonly uid: number }[] = [], releasesNetwork?: string): Promise<void> {
    const { first, last } = APP_UIDS;
    // The releases' own namespaces (host-networks.ts): no application's process of the machine's network (a host's in shared mode) dials one.
    const namespaces = releasesNetwork === undefined ? '' : `\n    ip daddr ${releasesNetwork} meta skuid ${first}-${last} reject`;
    const guarded = held.length === 0 ? '' : ` elements = { ${held.map((h) => h.port).join(', ')} };`;
    const allowed = held.length === 0 ? '' : ` elements = { ${held.map((h) => `${h.uid} . ${h.port}`).join(', ')} };`;
    await this.apply(`add table inet ${this.table}
delete table inet ${this.table}
table inet ${this.table} {
  set allowed { type uid . inet_service;${allowed} }
  set guarded { type inet_service;${guarded} }
  chain output {
    type filter hook output priority 0; policy accept;
    oif "lo" meta skuid . tcp dport @allowed accept
    oif "lo" tcp dport @guarded meta skuid ${first}-${last} reject with tcp reset${namespaces}
  }
}
`);
    this.started = true;
  }

  /** Only `uid` (the release's own user) of the applications' users may connect to `port` until the function returned is called. */
  async guard(port: number, uid: number): Promise<() => Promise<void>> {
    await this.apply(`add element inet ${this.table} guarded { ${port} }\nadd element inet ${this.table} allowed { ${uid} . ${port} }\n`);
    let released = false;
    return async () => {
      if (released || !this.started) return;
      released = true;
      await this.apply(`delete element inet ${this.table} allowed { ${uid} . ${port} }\ndelete element inet ${this.table} guarded { ${port} }\n`).catch(() => undefined);
    };
  }

  /** Removes the table: nothing of the host is left in the machine's firewall. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.apply(`delete table inet ${this.table}\n`).catch(() => undefined);
  }

  private async apply(script: string): Promise<void> {
    // One file for nft, read from its standard input: one transaction, all of it applied or none.
    const ran = await runProgram('/bin/sh', ['-c', 'printf %s "$1" | nft -f -', 'nft', script]);
    if (!ran?.ok) {
      throw HostErrors.HOST_PART_FAILED.create({
        message: `nft could not change the host's table ${this.table}: ${ran ? (ran.stderr || ran.stdout).trim().split('\n').slice(-2).join(' ') : 'nft is not installed'}`,
        fix: "Run runplan-host as root on a Linux kernel with nf_tables, with Debian's nftables package installed (apt-get install nftables).",
      });
    }
  }
}
