import { describe, expect, it } from 'vitest';
import { packageEntry } from '../../src/cli/package-entry.js';

/** What `--buildpack <directory>` loads: the entry an `import` of the package by name would load. */
describe('packageEntry', () => {
  it.each([
    ['a string', { exports: './index.mjs' }, './index.mjs'],
    ['a "." subpath', { exports: { '.': './a.mjs', './extra': './b.mjs' } }, './a.mjs'],
    ['conditions, in their order: types skipped, import before require', { exports: { '.': { types: './a.d.ts', import: './a.mjs', require: './a.cjs' } } }, './a.mjs'],
    ['the first matching condition wins, default included', { exports: { default: './d.mjs', import: './a.mjs' } }, './d.mjs'],
    ['nested conditions', { exports: { node: { import: './n.mjs', require: './n.cjs' }, default: './d.mjs' } }, './n.mjs'],
    ['an array: its first usable target', { exports: [{ worker: './w.mjs' }, './fallback.mjs'] }, './fallback.mjs'],
    ['exports over main', { exports: './e.mjs', main: './m.cjs' }, './e.mjs'],
  ])('exports as %s', (_, manifest, target) => {
    expect(packageEntry(manifest)).toEqual({ kind: 'exports', target });
  });

  it('main without exports, and index.js without either (Node then tries its extensions)', () => {
    expect(packageEntry({ main: 'lib/index' })).toEqual({ kind: 'main', main: 'lib/index' });
    expect(packageEntry({ name: 'x' })).toEqual({ kind: 'main', main: 'index.js' });
    expect(packageEntry({ main: '' })).toEqual({ kind: 'main', main: 'index.js' });
  });

  it.each([
    ['not an object', [], 'not a JSON object'],
    ['null', null, 'not a JSON object'],
    ['only a require condition', { exports: { require: './a.cjs' } }, 'no "." entry for import'],
    ['subpaths without "."', { exports: { './x': './x.mjs' } }, 'no "." entry for import'],
    ['a target outside the package', { exports: '../elsewhere.mjs' }, 'not a "./" path inside the package'],
    ['an absolute target', { exports: '/etc/passwd' }, 'not a "./" path inside the package'],
    ['a target through node_modules', { exports: './node_modules/x/index.js' }, 'not a "./" path inside the package'],
    ['a climbing target in a condition', { exports: { import: './a/../../b.mjs' } }, 'not a "./" path inside the package'],
  ])('refuses %s', (_, manifest, why) => {
    const entry = packageEntry(manifest);
    expect(entry.kind).toBe('invalid');
    expect(entry.kind === 'invalid' && entry.why).toContain(why);
  });
});
