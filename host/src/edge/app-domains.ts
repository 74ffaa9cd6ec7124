import { mkdir, readdir, readlink, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { HostErrors } from '../errors.js';
import { isAppId } from '../git/app-id.js';
import { isDnsHostName } from './host-names.js';

/**
 * Where the edge sends a custom domain's requests: run/domains/<name>, a symbolic link to the upstream folder
 * of its application (run/apps/<app_id>/, AppUpstreams'). Caddy's route of custom domains reads the address
 * file through it per request, so a domain follows every switch of its application's releases with no change
 * of its own, and adding or removing one changes nothing in Caddy's configuration (each change is a reload,
 * which empties its certificate cache: caddyserver/caddy#5589).
 */
export class AppDomains {
  constructor(
    private readonly dir: string,
    private readonly upstreams: string,
  ) {}

  /** Links `name` to the application's upstream folder, replacing a link it had (to another application). */
  async point(name: string, appId: string): Promise<void> {
    // The names come from the store, checked when added: checked again, as a path is made of them.
    if (!isDnsHostName(name) || !isAppId(appId))
      throw HostErrors.EDGE_FAILED.create({ message: `${JSON.stringify(name)} → ${JSON.stringify(appId)} is not a custom domain of an application`, details: { name, appId } });
    // Root's alone, as the upstream folders: Caddy (root) reads them.
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const link = join(this.dir, name);
    const target = join(this.upstreams, appId);
    if ((await readlink(link).catch(() => undefined)) === target) return;
    // A new link under another name, renamed over the old one, would be atomic; a domain changes application only through rm and add.
    await rm(link, { force: true, recursive: true });
    await symlink(target, link);
  }

  async remove(name: string): Promise<void> {
    if (!isDnsHostName(name)) return;
    await rm(join(this.dir, name), { force: true, recursive: true });
  }

  /** The names linked now. */
  async names(): Promise<string[]> {
    return readdir(this.dir).catch(() => []);
  }
}
