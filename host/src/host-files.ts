import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from 'runplan/process';
import { HostErrors } from './errors.js';
import type { HostPaths } from './paths.js';

/** The API's token: made once by init, 0600. */
export async function makeApiToken(paths: HostPaths): Promise<string> {
  const token = randomBytes(32).toString('hex');
  await writeFileAtomic(paths.apiToken, `${token}\n`, 0o600);
  return token;
}

export async function readApiToken(paths: HostPaths): Promise<string> {
  try {
    return (await readFile(paths.apiToken, 'utf8')).trim();
  } catch {
    throw HostErrors.HOST_NOT_INITIALISED.create({ message: `${paths.root} holds no API token (${paths.apiToken}).`, file: paths.apiToken });
  }
}

/**
 * The folders of the data folder and who may enter them. The data folder and
 * run/ are 0711: the SSH user reaches its repositories and its socket, and
 * runplan's application user its builds, without listing anything; ssh/ is 0755
 * (sshd reads authorized_keys as the SSH user); addons/ is 0711 for the add-on
 * servers' accounts; the rest is root's alone.
 */
export async function makeDataFolders(paths: HostPaths): Promise<void> {
  await mkdir(paths.root, { recursive: true });
  await chmod(paths.root, 0o711);
  // Made 0644 by earlier versions.
  await chmod(paths.settings, 0o600).catch(() => undefined);
  for (const [dir, mode] of [
    [paths.runDir, 0o711],
    [paths.sshDir, 0o755],
    [paths.edgeDir, 0o700],
    [paths.appsDir, 0o711],
    [dirname(paths.workDir), 0o711],
    // Each application's builds are in a workspace of its own (root's, its group's, 0710): passed, never listed.
    [paths.workDir, 0o711],
    // The add-on servers' accounts (postgres, redis) reach their own folders below.
    [paths.addonsDir, 0o711],
  ] as const) {
    await mkdir(dir, { recursive: true });
    await chmod(dir, mode);
  }
  // Each repository in git/ is the SSH user's (0700); git/ itself stays root's.
  await mkdir(paths.gitDir, { recursive: true });
  await chmod(paths.gitDir, 0o711);
}

/**
 * A program the host runs as another account, copied from dist/ into the data
 * folder's bin/ (root's, 0755), which that account can read wherever this
 * checkout is; run by this Node.js. `git-program.cjs`: what sshd's forced command
 * and git's hook run as the SSH account.
 */
export async function installProgram(paths: HostPaths, name: 'git-program.cjs'): Promise<string[]> {
  // Bundled, this module is dist/cli.js; from the sources (tests), the built program beside them.
  const here = dirname(fileURLToPath(import.meta.url));
  const built = resolve(basename(here) === 'dist' ? here : join(here, '..', 'dist'), name);
  const target = join(paths.binDir, name);
  await mkdir(paths.binDir, { recursive: true, mode: 0o755 });
  await chmod(paths.binDir, 0o755);
  await writeFileAtomic(target, await readFile(built), 0o755);
  return [process.execPath, target];
}
