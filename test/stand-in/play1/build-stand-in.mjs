// Builds the stand-in Play 1.x distributions used by the tests and the bench.
// They are NOT Play: see README.md beside this file. One build is reused for as
// long as the stand-in's sources and the JDK stay the same.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tar from 'tar';

const here = dirname(fileURLToPath(import.meta.url));

function sources(dir = here) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? sources(path) : [path];
    });
}

/** Changes whenever a source of the stand-in or the JDK compiling it changes. */
export function standInKey() {
  const hash = createHash('sha256');
  for (const file of sources()) hash.update(relative(here, file)).update(readFileSync(file));
  hash.update(execFileSync('javac', ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  return hash.digest('hex').slice(0, 16);
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

// Python's zipfile keeps each file's Unix mode, as Play's own zips do for the launcher.
const ZIP = `
import os, sys, zipfile
root, name, out = sys.argv[1:]
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    for dirpath, dirs, files in os.walk(os.path.join(root, name)):
        dirs.sort()
        rel = os.path.relpath(dirpath, root)
        z.write(dirpath, rel + '/')
        for f in sorted(files):
            z.write(os.path.join(dirpath, f), os.path.join(rel, f))
`;

/**
 * Builds (or finds) the stand-in distributions of `releases` under `cacheDir`.
 * Returns { dir, jar, archives: { <release>: { zip: { file, sha256 }, 'tar.gz': { file, sha256 } } } }.
 */
export async function buildStandIn({ cacheDir, releases }) {
  const dir = join(cacheDir, 'play1-stand-in', `${standInKey()}-${createHash('sha256').update(releases.join(',')).digest('hex').slice(0, 8)}`);
  const manifest = join(dir, 'manifest.json');
  if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8'));

  const tmp = `${dir}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    mkdirSync(join(tmp, 'classes'), { recursive: true });
    const javaFiles = sources(join(here, 'java')).filter((f) => f.endsWith('.java'));
    execFileSync('javac', ['-encoding', 'UTF-8', '--release', '11', '-d', join(tmp, 'classes'), ...javaFiles], { stdio: 'inherit' });
    execFileSync('jar', ['--create', '--file', join(tmp, 'play-standin.jar'), '-C', join(tmp, 'classes'), '.'], { stdio: 'inherit' });
    const archives = {};
    for (const release of releases) {
      const name = `play-${release}`;
      const root = join(tmp, 'dist', release);
      const dist = join(root, name);
      mkdirSync(join(dist, 'framework', 'src', 'play'), { recursive: true });
      copyFileSync(join(here, 'play'), join(dist, 'play'));
      chmodSync(join(dist, 'play'), 0o755);
      copyFileSync(join(tmp, 'play-standin.jar'), join(dist, 'framework', 'play-standin.jar'));
      writeFileSync(join(dist, 'framework', 'src', 'play', 'version'), `${release}\n`);
      writeFileSync(join(dist, 'README-STAND-IN.txt'), `runplan's test stand-in for Play ${release}. This is NOT the Play framework.\n`);
      const zip = join(tmp, `${name}.zip`);
      execFileSync('python3', ['-c', ZIP, root, name, zip]);
      const tgz = join(tmp, `${name}.tar.gz`);
      await tar.c({ gzip: true, file: tgz, cwd: root, portable: true }, [name]);
      archives[release] = { zip: { file: join(dir, `${name}.zip`), sha256: sha256(zip) }, 'tar.gz': { file: join(dir, `${name}.tar.gz`), sha256: sha256(tgz) } };
    }
    rmSync(join(tmp, 'dist'), { recursive: true, force: true });
    rmSync(join(tmp, 'classes'), { recursive: true, force: true });
    writeFileSync(join(tmp, 'manifest.json'), JSON.stringify({ dir, jar: join(dir, 'play-standin.jar'), archives }, null, 2));
    try {
      renameSync(tmp, dir);
    } catch (error) {
      // Another test worker built the same stand-in first; use its copy.
      if (!existsSync(manifest)) throw error;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return JSON.parse(readFileSync(manifest, 'utf8'));
}
