import { randomBytes } from 'node:crypto';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { secretReason } from '../../src/env/secrets.js';

/**
 * Known secret values every fixture deployment carries (test/helpers/fixtures.ts),
 * in variables that change nothing the fixture checks: a token named as
 * credentials are, and a database URL whose password is the only secret part.
 * Random per test run, so no file of the repository can hold them by accident.
 */
const run = randomBytes(6).toString('hex');
const SCAN_TOKEN = `scan_token_${run}`;
const SCAN_DB_PASSWORD = `scan_dbpw_${run}`;
export const SCAN_VARIABLES: Readonly<Record<string, string>> = {
  FIXTURE_SCAN_API_TOKEN: SCAN_TOKEN,
  FIXTURE_SCAN_DATABASE_URL: `postgres://scan:${SCAN_DB_PASSWORD}@db.invalid:5432/app`,
};

/** The values that must never be printed or written: the scan's own, and each secret variable the fixture sets. */
export function secretNeedles(variables: Readonly<Record<string, string>>): string[] {
  const needles = new Set([SCAN_TOKEN, SCAN_DB_PASSWORD]);
  for (const [name, value] of Object.entries(variables)) {
    const reason = secretReason(name, value);
    if (reason === undefined) continue;
    if (reason === 'url-credentials') needles.add(/:\/\/[^/\s:@]*:([^@\s/]+)@/.exec(value)?.[1] ?? value);
    else if (value.length >= 3) needles.add(value);
    // A multi-line secret (an SSH key) may leak one line at a time; its BEGIN and END lines are no secret.
    if (value.includes('\n')) for (const line of value.split(/\r?\n/)) if (line.trim().length >= 8 && !line.startsWith('-----')) needles.add(line.trim());
    // A "login:password" value: the password alone must not appear either.
    const password = value.includes(':') ? value.slice(value.indexOf(':') + 1) : '';
    if (name.startsWith('CC_HTTP_BASIC_AUTH') && password.length >= 3) needles.add(password);
  }
  return [...needles];
}

export function leaksIn(text: string, needles: readonly string[]): string[] {
  return needles.filter((n) => text.includes(n));
}

// Larger files are dependencies' archives and binaries, which runplan never writes a variable into.
const SCANNED_FILE_BYTES = 8 * 1024 * 1024;

/**
 * Files under `root` holding a secret (symbolic links not followed), as
 * "path: first characters of the value". No exception: the `.npmrc` (or
 * `.yarnrc.yml`) holding NPM_TOKEN for the build steps is gone once they are
 * done (issue 21). With `source`, a build's unchanged copy of the application's
 * own file (a fixture's expect.json names its secrets) is the application's, not a leak.
 */
export async function secretsInTree(root: string, needles: readonly string[], source?: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await visit(path);
      if (!entry.isFile()) continue;
      const stats = await lstat(path);
      if (stats.size > SCANNED_FILE_BYTES) continue;
      const content = await readFile(path);
      const hits = leaksIn(content.toString('latin1'), needles);
      if (hits.length === 0) continue;
      if (source !== undefined && (await sameAsSource(relative(root, path), content, source))) continue;
      found.push(`${relative(root, path)}: ${hits.map((h) => `${h.slice(0, 6)}…`).join(', ')}`);
    }
  };
  await visit(root);
  return found;
}

async function sameAsSource(path: string, content: Buffer, source: string): Promise<boolean> {
  // A build (builds/<id>/…) or an image's build context (image-context/app/…) holds a copy of the source.
  const inBuild = /(?:^|\/)(?:builds\/[^/]+|image-context\/app)\/(.+)$/.exec(path)?.[1];
  if (inBuild === undefined) return false;
  const original = await readFile(join(source, inBuild)).catch(() => undefined);
  return original?.equals(content) === true;
}
