import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../files/atomic-write.js';
import { runHostNpm, type NpmRunner } from './npm-tarball.js';

/** A digest of what decides the registry npm is configured with, apart from npm's global configuration. */
async function npmConfigFingerprint(): Promise<string> {
  const env = process.env;
  const userconfig = env.npm_config_userconfig ?? env.NPM_CONFIG_USERCONFIG ?? join(homedir(), '.npmrc');
  const read = (file: string) => readFile(file, 'utf8').catch(() => '');
  const parts = [env.npm_config_registry ?? env.NPM_CONFIG_REGISTRY ?? '', userconfig, await read(userconfig), await read(join(process.cwd(), '.npmrc'))];
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16);
}

const known = new Map<string, Promise<string>>();

/**
 * The registry this host's npm is configured with (`npm config get registry`,
 * ending in "/"). Asking npm costs a quarter of a second, so the answer is kept
 * under `<cacheDir>/inventory/` and in memory, keyed by what decides it: an
 * npm_config_registry the host sets, the user's and this directory's .npmrc.
 */
export async function hostNpmRegistry(cacheDir: string, npm: NpmRunner = runHostNpm): Promise<string> {
  const file = join(cacheDir, 'inventory', `npm-registry-${await npmConfigFingerprint()}.txt`);
  let answer = known.get(file);
  if (answer === undefined) {
    answer = (async () => {
      const saved = await readFile(file, 'utf8').catch(() => undefined);
      if (saved) return saved;
      // With runplan's whole environment: an npm_config_registry the host sets is part of how npm is configured.
      const url = (await npm(['config', 'get', 'registry'], undefined, process.env)).trim();
      const registry = url.endsWith('/') ? url : `${url}/`;
      await writeFileAtomic(file, registry).catch(() => undefined);
      return registry;
    })();
    known.set(file, answer);
    answer.catch(() => known.delete(file));
  }
  return answer;
}
