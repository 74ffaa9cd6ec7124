import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { CoreErrors } from '../../errors/core-errors.js';
import { systemEnvironment } from '../../process/process-env.js';
import { runProgram } from '../../process/run-program.js';

/** Runs `npm <args>` (in `cwd`, with `env`, when given) and returns its standard output. */
export type NpmRunner = (args: readonly string[], cwd?: string, env?: NodeJS.ProcessEnv) => Promise<string>;

/** The host's npm, with the machine's variables only (its registry, certificate authorities and proxies). */
export const runHostNpm: NpmRunner = async (args, cwd, env = systemEnvironment()) => {
  // No time limit of its own: a large `npm pack` over a slow network is progress, and the build step's timeout bounds it.
  const ran = await runProgram('npm', args, { env, timeoutMs: 0, ...(cwd ? { cwd } : {}) });
  if (ran === undefined) throw new Error(`npm ${args.join(' ')} failed: npm is not on PATH`);
  if (!ran.ok) throw new Error(`npm ${args.join(' ')} failed: ${ran.stderr.trim().split('\n').slice(-3).join(' ') || `exit status ${ran.exitCode}`}`);
  return ran.stdout;
};

/** The subresource-integrity digest ("sha512-<base64>") of a file, with the algorithm of `like`. */
async function fileIntegrity(file: string, like: string): Promise<string> {
  const algorithm = like.slice(0, like.indexOf('-'));
  const hash = createHash(algorithm);
  await pipeline(createReadStream(file), hash);
  return `${algorithm}-${hash.digest('base64')}`;
}

/**
 * Fetches the tarball of an npm package version into `dest` with the host's npm
 * (`npm pack`, so npm's registry, credentials, proxy and cache apply), and keeps
 * it only when its digest is the one the plan names.
 */
export async function fetchNpmTarball(
  source: { readonly name: string; readonly version: string; readonly integrity: string },
  dest: string,
  workDir: string,
  npm: NpmRunner = runHostNpm,
): Promise<void> {
  const spec = `${source.name}@${source.version}`;
  const packDir = join(workDir, 'pack');
  await mkdir(packDir, { recursive: true });
  try {
    await npm(['pack', spec, '--pack-destination', packDir, '--loglevel=error'], packDir);
  } catch (error) {
    throw CoreErrors.BUILD_DOWNLOAD_FAILED.create({
      message: `${spec} could not be fetched from the npm registry: ${(error as Error).message}`,
      details: { package: source.name, version: source.version },
      cause: error,
    });
  }
  const [tarball] = (await readdir(packDir)).filter((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw CoreErrors.BUILD_DOWNLOAD_FAILED.create({ message: `npm pack ${spec} wrote no tarball.` });
  const actual = await fileIntegrity(join(packDir, tarball), source.integrity);
  if (actual !== source.integrity) {
    throw CoreErrors.BUILD_DIGEST_MISMATCH.create({
      message: `${spec} has integrity ${actual}, but the plan expects ${source.integrity}; the download was discarded and nothing was cached.`,
      details: { package: source.name, version: source.version, expected: source.integrity, actual },
    });
  }
  await rename(join(packDir, tarball), dest);
}
