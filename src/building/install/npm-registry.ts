import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../files/atomic-write.js';
import { runHostNpm, type NpmRunner } from './npm-tarball.js';

/** A digest of what decides the registry npm is configured with, apart from npm's global configuration. */
function npmConfigFingerprint(): string {
  const env = process.env;
  const userconfig = env.npm_config_userconfig ?? env.NPM_CONFIG_USERCONFIG ?? join(homedir(), '.npmrc');
  const parts = [env.npm_config_registry ?? env.NPM_CONFIG_REGISTRY ?? '', userconfig, configText(userconfig), configText(join(process.cwd(), '.npmrc'))];
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16);
}

/**
 * An .npmrc's text, '' when there is none. Synchronous, a missing file told
 * without an exception, and a file read again only when stat says it changed:
 * planning asks on every plan (the README's call), and most hosts have neither file.
 */
function configText(file: string): string {
  const info = statSync(file, { throwIfNoEntry: false });
  if (!info?.isFile()) return '';
  const signature = `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
  const known = configTexts.get(file);
  if (known?.signature === signature) return known.text;
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // Unreadable: counted as absent.
  }
  configTexts.set(file, { signature, text });
  return text;
}
const configTexts = new Map<string, { signature: string; text: string }>();

const known = new Map<string, Promise<string>>();

/**
 * The registry this host's npm is configured with (`npm config get registry`,
 * ending in "/"). Asking npm costs a quarter of a second, so the answer is kept
 * under `<cacheDir>/inventory/` and in memory, keyed by what decides it: an
 * npm_config_registry the host sets, the user's and this directory's .npmrc.
 */
export async function hostNpmRegistry(cacheDir: string, npm: NpmRunner = runHostNpm): Promise<string> {
  const file = join(cacheDir, 'inventory', `npm-registry-${npmConfigFingerprint()}.txt`);
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
