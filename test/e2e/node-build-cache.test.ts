import { readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { checkFixture, listFixtures, prepareFixture, type Fixture } from '../helpers/fixtures.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';

const REUSED = '[install] reused cached layer node_modules';

/**
 * The node_modules layer: a rebuild of the unchanged app reuses it (and runs
 * scripts.install again for what it builds outside node_modules); a change to
 * any input of its key rebuilds it.
 */
describe('node build cache', () => {
  it('reuses node_modules for an unchanged app and rebuilds when a key input changes', async () => {
    const fixture = await prepareFixture(listFixtures('node').find((f) => f.name === 'build-cache') as Fixture);
    const variant = (env: Record<string, string>, json: Record<string, unknown>): Fixture => ({
      ...fixture,
      expect: {
        ...fixture.expect,
        env: { ...fixture.expect.env, ...env },
        requests: [
          { path: '/', status: 200, json },
          { path: '/asset', status: 200, json: { asset: 'built by scripts.install' } },
        ],
      },
    });

    // Each fixture is built twice (build --plan, then run --plan): the first build fills the layer.
    const first = await checkFixture(variant({}, { installScript: 'install by npm', devDependency: true }));
    expect(first.build).not.toContain(REUSED);
    expect(first.build).toContain('[install] added');

    // Unchanged: the layer is linked from the cache and the install script runs on its own.
    expect(first.run).toContain(REUSED);
    expect(first.run).toContain('==> step install-script: npm run install');

    // Each input of the key rebuilds: the development-dependency mode, the Node version, the build tool.
    for (const [env, json] of [
      [{ CC_NODE_DEV_DEPENDENCIES: 'ignore' }, { devDependency: false }],
      [{ CC_NODE_VERSION: '22.23.3' }, { node: 'v22.23.3' }],
      [{ CC_NODE_BUILD_TOOL: 'npm-ci' }, { installedBy: 'npm' }],
    ] as const) {
      const { build } = await checkFixture(variant(env, { ...json, installScript: 'install by npm' }));
      expect(build, JSON.stringify(env)).not.toContain(REUSED);
    }
  });
});

describe('--no-cache', () => {
  it('restores no layer for that build, and saves what it built for the next one', async () => {
    const fixture = await prepareFixture(listFixtures('node').find((f) => f.name === 'build-cache') as Fixture);
    const dirs = await deploymentDirs();
    const build = async (...extra: string[]) => {
      const result = await runCli(['build', fixture.dir, ...extra], dirs.env);
      expect(result.code, result.output).toBe(0);
      return result.output;
    };
    expect(await build()).not.toContain(REUSED);
    const uncached = await build('--no-cache');
    expect(uncached).toContain('build cache not used for this build (--no-cache)');
    expect(uncached).not.toContain(REUSED);
    expect(uncached).toContain('[install] added');
    expect(await build()).toContain(REUSED);
    const refused = await runCli(['plan', fixture.dir, '--no-cache']);
    expect(refused.code).toBe(2);
    expect(refused.output).toContain('--no-cache is an option of build, run, image, not of plan');
  });
});

// An install script that tries to change the Node.js runtime the build runs, which comes from the
// shared cache: by appending to a file, opening the binary for writing, and making a file writable
// first (only where the cache is not its own user's, as when runplan runs as root; a user that owns
// the cache could do anything to it: docs/security.md).
const POISON = `
const fs = require('fs');
const results = {};
const attempt = (name, action) => { try { action(); results[name] = 'written'; } catch (e) { results[name] = e.code; } };
attempt('append', () => fs.appendFileSync('.runplan/node/CHANGELOG.md', 'POISONED BY AN APP'));
attempt('binary', () => fs.closeSync(fs.openSync('.runplan/node/bin/node', 'a')));
attempt('create', () => fs.writeFileSync('.runplan/node/bin/evil', 'POISONED BY AN APP'));
if (fs.statSync('.runplan/node/CHANGELOG.md').uid !== process.getuid()) {
  attempt('chmod', () => { fs.chmodSync('.runplan/node/CHANGELOG.md', 0o666); fs.appendFileSync('.runplan/node/CHANGELOG.md', 'POISONED BY AN APP'); });
}
console.log('poison ' + JSON.stringify(results));
`;

describe('shared runtime', () => {
  it('cannot be changed by an install script of the application', async () => {
    const app = await tempDir('runplan-poison-');
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'poison', version: '1.0.0', private: true, scripts: { start: 'node server.js', postinstall: 'node poison.js' } }));
    await writeFile(join(app, 'server.js'), "require('http').createServer((q, s) => s.end('ok')).listen(process.env.PORT);\n");
    await writeFile(join(app, 'poison.js'), POISON);
    const dirs = await deploymentDirs();

    const built = await runCli(['build', app], dirs.env);
    expect(built.code, built.output).toBe(0);
    const results = JSON.parse(/poison (\{.*\})/.exec(built.output)?.[1] ?? '{}') as Record<string, string>;
    expect(results.append, built.output).toMatch(/^(EACCES|EROFS|EPERM)$/);
    expect(results.binary, built.output).toMatch(/^(EACCES|EROFS|EPERM)$/);
    expect(results.create, built.output).toMatch(/^(EACCES|EROFS|EPERM)$/);
    if (process.getuid?.() === 0) expect(results.chmod, built.output).toBe('EPERM');

    // The build reaches the runtime through the cache entry itself, which is unchanged.
    const [appDir] = await readdir(dirs.workDir);
    const current = join(dirs.workDir, appDir as string, 'current');
    const changelog = await realpath(join(current, '.runplan', 'node', 'CHANGELOG.md'));
    expect(changelog.startsWith(join(await realpath(dirs.cacheDir), 'trees'))).toBe(true);
    expect(await readFile(changelog, 'utf8')).not.toContain('POISONED');
    expect((await stat(changelog)).mode & 0o222).toBe(0);
    expect(await readdir(join(changelog, '..', 'bin'))).toEqual(['node']);
  });
});

/**
 * Yarn's, pnpm's and bun's own caches are the application's, under runplan's
 * cache beside npm's (src/process/process-env.ts): never the user's shared
 * ~/.cache, ~/.local/share or ~/.yarn/berry, where one application's install
 * could feed another's.
 */
describe("package managers' caches", () => {
  const cases: [fixture: string, cache: string][] = [
    ['tool-yarn', '_xdg-cache/yarn'],
    ['tool-yarn-berry', '_yarn-berry/cache'],
    ['tool-pnpm', '_xdg-data/pnpm/store'],
    ['tool-bun', '_bun'],
  ];
  for (const [name, cache] of cases) {
    it(`${name}: the install fills ${cache} in the application's own cache`, async () => {
      const fixture = await prepareFixture(listFixtures('node').find((f) => f.name === name) as Fixture);
      const dirs = await deploymentDirs();
      const env = Object.entries(fixture.expect.env ?? {}).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
      const built = await runCli(['build', fixture.dir, ...env], dirs.env);
      expect(built.code, built.output.slice(-2000)).toBe(0);
      const [app] = await readdir(dirs.workDir);
      expect((await readdir(join(dirs.cacheDir, 'npm-cache', app as string, cache))).length, `${cache} of ${app}`).toBeGreaterThan(0);
    }, 300_000);
  }
});
