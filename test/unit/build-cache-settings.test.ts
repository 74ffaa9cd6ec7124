import { IMAGE_BINDINGS } from '../../src/engines/image/scripts.js';
import { lowerPlan } from '../../src/lowering/lower.js';
import { describe, expect, it } from 'vitest';
import { renderDockerfile } from '../../src/engines/image/dockerfile.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import type { Layer } from '../../src/plan/schema.js';
import { normaliseCachePath, resolveBuildCache } from '../../src/planning/resolve-build-cache.js';

const layer = (name: string, path: string): Layer => ({ name, path, cacheKey: `key-${name}`, keyInputs: ['inputs'] });
const LAYERS = [layer('node_modules', 'node_modules'), layer('gems', 'vendor/bundle')];
const vars = (o: Record<string, string>) => new Map(Object.entries(o));

describe('CC_OVERRIDE_BUILDCACHE and CC_IGNORE_FROM_BUILDCACHE (resolveBuildCache)', () => {
  it('changes nothing when neither is set (or both are empty)', () => {
    for (const v of [{}, { CC_OVERRIDE_BUILDCACHE: ' ', CC_IGNORE_FROM_BUILDCACHE: '' }] as Record<string, string>[]) {
      expect(resolveBuildCache(vars(v), LAYERS)).toEqual({ layers: LAYERS, decisions: [] });
    }
  });

  it('override: keeps the layers under a listed path, builds the others every time, and adds warm-start layers for listed paths no layer covers', () => {
    const r = resolveBuildCache(vars({ CC_OVERRIDE_BUILDCACHE: 'vendor:.cache: tmp/assets/' }), LAYERS);
    expect(r.layers.map((l) => [l.name, l.path, l.cacheKey === null, l.reuse ?? null])).toEqual([
      ['node_modules', 'node_modules', true, null],
      ['gems', 'vendor/bundle', false, null],
      ['cache:.cache', '.cache', false, 'warm-start'],
      ['cache:tmp/assets', 'tmp/assets', false, 'warm-start'],
    ]);
    expect(r.layers[0]?.keyInputs).toEqual(['not cached: CC_OVERRIDE_BUILDCACHE does not list it']);
    expect(r.decisions).toEqual([
      expect.objectContaining({
        id: 'cache.override',
        source: 'env CC_OVERRIDE_BUILDCACHE',
        resolved: 'cached: vendor/bundle, .cache, tmp/assets',
        overridden: [{ source: 'node_modules layer (node_modules)', value: 'key-node_modules', reason: 'not listed in CC_OVERRIDE_BUILDCACHE: built on every build' }],
      }),
    ]);
  });

  it('override: a path inside a layer keeps the whole layer, and adds nothing', () => {
    const r = resolveBuildCache(vars({ CC_OVERRIDE_BUILDCACHE: 'node_modules/.cache' }), LAYERS);
    expect(r.layers.map((l) => l.cacheKey)).toEqual(['key-node_modules', null]);
  });

  it('ignore: a layer at, below or around a listed path is built every time', () => {
    for (const path of ['node_modules', 'node_modules/.cache', 'vendor']) {
      const r = resolveBuildCache(vars({ CC_IGNORE_FROM_BUILDCACHE: path }), LAYERS);
      const ignored = r.layers.filter((l) => l.cacheKey === null).map((l) => l.name);
      expect(ignored).toEqual([path === 'vendor' ? 'gems' : 'node_modules']);
      expect(r.decisions[0]).toMatchObject({
        id: 'cache.ignore',
        source: 'env CC_IGNORE_FROM_BUILDCACHE',
        overridden: [expect.objectContaining({ reason: 'left out of the cache by CC_IGNORE_FROM_BUILDCACHE' })],
      });
    }
    expect(resolveBuildCache(vars({ CC_IGNORE_FROM_BUILDCACHE: 'node_modules/.cache' }), LAYERS).layers[0]?.keyInputs[0]).toContain('a layer is restored whole or not at all');
  });

  it('ignore wins over override', () => {
    const r = resolveBuildCache(vars({ CC_OVERRIDE_BUILDCACHE: 'node_modules:.cache', CC_IGNORE_FROM_BUILDCACHE: '.cache' }), LAYERS);
    expect(r.layers.filter((l) => l.cacheKey !== null).map((l) => l.path)).toEqual(['node_modules']);
    expect(r.decisions.map((d) => d.id)).toEqual(['cache.override', 'cache.ignore']);
  });

  it.each([
    ['/etc', 'is absolute'],
    ['../x', 'climbs out'],
    ['a/../..', 'climbs out'],
    ['.', 'the application folder itself'],
    ['./', 'the application folder itself'],
    ['a\0b', 'NUL'],
  ])('refuses %j (%s), naming the variable', (path, why) => {
    for (const variable of ['CC_OVERRIDE_BUILDCACHE', 'CC_IGNORE_FROM_BUILDCACHE']) {
      expect(() => resolveBuildCache(vars({ [variable]: `ok:${path}` }), LAYERS)).toThrowError(
        expect.objectContaining({ code: CoreErrors.BUILD_CACHE_PATH_INVALID.code, variable, reason: expect.stringContaining(why) }),
      );
    }
  });

  it('normalises paths', () => {
    expect(normaliseCachePath('./a//b/', 'X')).toBe('a/b');
    expect(normaliseCachePath('a/c/../b', 'X')).toBe('a/b');
  });
});

describe('build cache settings in an image', () => {
  const app = { 'package.json': JSON.stringify({ name: 'x', main: 'server.js', dependencies: { ms: '2.1.3' } }), 'package-lock.json': '{}', 'server.js': '', '.gitignore': 'node_modules\n' };
  const dockerfile = async (env: Record<string, string>, noCache = false, appScope = 'app') => {
    const { plan } = await createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: new MemorySource(app), appDir: '/srv/app', env: { application: env } });
    return renderDockerfile({ lowered: lowerPlan(plan, IMAGE_BINDINGS), digest: 'sha256:0', base: 'base', secretFiles: [], hostCa: false, hostNpmrc: false, noCache, appScope });
  };

  it("keeps node_modules in BuildKit's layer cache unless --no-cache or the settings leave it out", async () => {
    expect(await dockerfile({})).toContain('runplan-layer-node_modules');
    expect(await dockerfile({}, true)).not.toContain('runplan-layer-');
    expect(await dockerfile({ CC_IGNORE_FROM_BUILDCACHE: 'node_modules' })).not.toContain('runplan-layer-');
    expect(await dockerfile({ CC_OVERRIDE_BUILDCACHE: '.cache' })).not.toContain('runplan-layer-');
  });

  it('carries warm-start paths into images as the local builder has them: restored before the first step, saved after the last, in a cache of the application’s own', async () => {
    const text = await dockerfile({ CC_OVERRIDE_BUILDCACHE: '.cache' });
    const runs = text.split('\n').filter((l) => l.startsWith('RUN ') || l.startsWith('# '));
    const restore = runs.findIndex((l) => l.startsWith('# restore .cache (warm start'));
    const save = runs.findIndex((l) => l.startsWith('# save .cache (warm start'));
    const steps = runs.map((l, i) => [l, i] as const).filter(([l]) => l.startsWith('# step '));
    expect(restore).toBeGreaterThanOrEqual(0);
    expect(steps.every(([, i]) => restore < i && i < save)).toBe(true);
    expect(text).toContain('cp -a -n /tmp/runplan-layer/');
    const id = (t: string) => t.match(/id=(runplan-warm-[0-9a-f]+)/)?.[1];
    expect(id(text)).toBeDefined();
    // Another application's build never gets this one's copy.
    expect(id(await dockerfile({ CC_OVERRIDE_BUILDCACHE: '.cache' }, false, 'other'))).not.toBe(id(text));
    // --no-cache restores nothing and saves all the same, as a local build does.
    const fresh = await dockerfile({ CC_OVERRIDE_BUILDCACHE: '.cache' }, true);
    expect(fresh).not.toContain('# restore .cache');
    expect(fresh).toContain('# save .cache (warm start');
  });
});
