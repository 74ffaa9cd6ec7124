import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HostErrors } from '../errors.js';

/**
 * Where the edge sends each application's requests: a folder per application
 * (run/apps/<app_id>/) holding one empty file whose name is the address of the
 * release that serves (`127.0.0.1:41233`; later a network namespace's
 * `10.88.0.5:8080`: an opaque host:port). Caddy's route of every application
 * reads it per request and dials that address itself, so serve is not on the
 * way of a request, and a switch changes nothing in Caddy's configuration (each
 * change is a reload, which empties its certificate cache: caddyserver/caddy#5589).
 */
export class AppUpstreams {
  constructor(private readonly dir: string) {}

  /**
   * Sends the application's new requests to `address` from now on: the new file first, then the others removed,
   * so a request read meanwhile finds one release or the other, never none. Connections Caddy holds to the old
   * address stay on it, which drains them, and are closed once idle.
   */
  async point(appId: string, address: string): Promise<void> {
    // A name without `:` never matches the route's pattern (`*:*`): nothing else may name a file here.
    if (!/^[^/\0]+:\d{1,5}$/.test(address)) throw HostErrors.EDGE_FAILED.create({ message: `${JSON.stringify(address)} is not a host:port address`, details: { appId, address } });
    const folder = join(this.dir, appId);
    // Caddy (root) reads it; nobody else.
    await mkdir(folder, { recursive: true, mode: 0o700 });
    await writeFile(join(folder, address), '', { mode: 0o600 });
    for (const name of await readdir(folder)) if (name !== address) await rm(join(folder, name), { force: true, recursive: true });
  }

  /** Removes every application's folder: the edge then answers each name with the unknown host's 404 (serve stopping, after the releases). */
  async removeAll(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
