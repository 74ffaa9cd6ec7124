import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { removeAddonAccount, type WalledKind } from '../../src/addons/addon-accounts.js';

/**
 * Removes the system accounts of the add-ons a test left in `addonsDir` (`<data>/addons`): the host keeps an
 * add-on's account while the add-on exists, and a test's data folder is thrown away with its add-ons in it.
 */
export async function removeAddonAccountsUnder(addonsDir: string): Promise<void> {
  for (const kind of ['storage', 'redis'] as const satisfies readonly WalledKind[]) {
    const dir = join(addonsDir, kind);
    if (!existsSync(dir)) continue;
    for (const id of readdirSync(dir).filter((name) => name.startsWith('addon_'))) await removeAddonAccount(kind, id);
  }
}
