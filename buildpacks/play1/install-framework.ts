import { mkdir, rm } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import type { BuildAction } from '../../src/buildpack/contract.js';
import { hardlinkTree } from '../../src/build/hardlink-copy.js';
import type { Clock } from '../../src/time/clock.js';
import { ensureFramework } from './framework-cache.js';
import type { Fetch } from './options.js';

export interface InstallFrameworkParams {
  readonly version: string;
  readonly url: string;
  readonly sha256: string;
  /** Where the distribution goes, relative to the application. */
  readonly dest: string;
}

/**
 * Build action `play1/install-framework`: makes the release available in the
 * shared cache (downloading and verifying it if needed), then links it into
 * the build. Hard links cost nothing and keep the build independent of later
 * cache clean-ups; Play writes only into the application, never into its own
 * distribution, so the shared files are not modified through the links.
 */
export function installFrameworkAction(deps: { fetch?: Fetch; clock?: Clock; attempts?: number }): BuildAction {
  return async (raw, { appDir, host, log, signal }) => {
    const params = raw as unknown as InstallFrameworkParams;
    const dest = resolve(appDir, params.dest);
    if (!dest.startsWith(appDir + sep)) throw new Error(`framework destination ${params.dest} is outside the application`);
    const started = Date.now();
    const { dir, cached } = await ensureFramework(host.cacheDir, params, {
      log,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      ...(deps.clock ? { clock: deps.clock } : {}),
      ...(deps.attempts ? { attempts: deps.attempts } : {}),
      ...(signal ? { signal } : {}),
    });
    await rm(dest, { recursive: true, force: true });
    await mkdir(dirname(dest), { recursive: true });
    await hardlinkTree(dir, dest);
    log(`Play ${params.version} ${cached ? 'reused from the shared cache' : 'installed'} (${dir}), linked into ${params.dest} in ${Date.now() - started} ms`);
  };
}
